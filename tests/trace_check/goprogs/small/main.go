// Command small writes a short execution trace (a few tens of KB) to the file named
// by GOBLUEPRINT_TRACE_OUT: goroutines handing work over channels, a mutex, a
// sleep, a forced GC and one user task with a region and a log. The trace_check
// fuzz tests mutate it, so it is kept small enough to read many times.
package main

import (
	"context"
	"os"
	"runtime"
	"runtime/trace"
	"sync"
	"time"
)

func main() {
	f, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	ctx, task := trace.NewTask(context.Background(), "small")
	region := trace.StartRegion(ctx, "pingpong")
	ping, pong := make(chan int), make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := 0
	wg.Add(2)
	go func() {
		defer wg.Done()
		for v := range ping {
			mu.Lock()
			total += v
			mu.Unlock()
			pong <- v + 1
		}
		close(pong)
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			ping <- i
			<-pong
		}
		close(ping)
	}()
	wg.Wait()
	region.End()
	time.Sleep(time.Millisecond)
	runtime.GC()
	trace.Log(ctx, "result", "done")
	task.End()
	trace.Stop()
	if err := f.Close(); err != nil {
		panic(err)
	}
}
