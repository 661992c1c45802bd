// Command flight records with the flight recorder (Go 1.25+) and writes its window:
// a trace that starts at a late generation, with goroutines, Ps, ranges and tasks
// already in progress, which is what the reader's first-generation rules are for.
// It writes the snapshot to the file named by GOBLUEPRINT_TRACE_OUT.
package main

import (
	"context"
	"os"
	"runtime"
	"runtime/trace"
	"sync"
	"time"
)

var sink []byte

func work(ctx context.Context, d time.Duration) {
	ctx, task := trace.NewTask(ctx, "work")
	defer task.End()
	var wg sync.WaitGroup
	ch := make(chan int)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trace.WithRegion(ctx, "loop", func() {
				for start := time.Now(); time.Since(start) < d; {
					sink = make([]byte, 4096)
					select {
					case ch <- 1:
					case <-time.After(50 * time.Microsecond):
					}
				}
			})
		}()
	}
	go func() {
		for range ch {
			runtime.Gosched()
		}
	}()
	wg.Wait()
	close(ch)
}

func main() {
	out, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		panic(err)
	}
	defer out.Close()
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: 50 * time.Millisecond, MaxBytes: 256 << 10})
	if err := fr.Start(); err != nil {
		panic(err)
	}
	// A long-running region and blocked goroutines that straddle the window's start.
	ctx := context.Background()
	region := trace.StartRegion(ctx, "outer")
	block := make(chan struct{})
	for i := 0; i < 3; i++ {
		go func() { <-block }()
	}
	work(ctx, 400*time.Millisecond)
	runtime.GC()
	if _, err := fr.WriteTo(out); err != nil {
		panic(err)
	}
	region.End()
	close(block)
	fr.Stop()
}
