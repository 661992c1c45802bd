// Command gens runs a light scheduling workload for about 2.5 seconds so that its
// trace spans several generations (the runtime starts a new one every second):
// goroutines blocked, sleeping, in a syscall (a blocking pipe read) and inside a
// task and a region while generations turn over, plus a GC in the middle.
// It writes its execution trace to the file named by GOBLUEPRINT_TRACE_OUT.
package main

import (
	"context"
	"os"
	"runtime"
	"runtime/trace"
	"sync"
	"syscall"
	"time"
)

var sink []byte

func main() {
	out, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		panic(err)
	}
	defer out.Close()
	if err := trace.Start(out); err != nil {
		panic(err)
	}
	ctx, task := trace.NewTask(context.Background(), "across-generations")
	region := trace.StartRegion(ctx, "long")

	// A goroutine blocked in a read(2) on a pipe for most of the run.
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1)
		syscall.Read(fds[0], buf)
		close(done)
	}()

	// Ping-pong pairs and sleepers at a modest rate.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		ping, pong := make(chan int), make(chan int)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					close(ping)
					return
				case ping <- 1:
					<-pong
					time.Sleep(2 * time.Millisecond)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range ping {
				sink = make([]byte, 1024)
				pong <- 1
			}
		}()
	}
	parked := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() { <-parked }()
	}
	deadline := time.Now().Add(2500 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		time.Sleep(10 * time.Millisecond)
		if i == 120 {
			runtime.GC()
			trace.Log(ctx, "phase", "gc")
		}
	}
	close(stop)
	wg.Wait()
	close(parked)
	syscall.Write(fds[1], []byte{1})
	<-done
	region.End()
	task.End()
	trace.Stop()
}
