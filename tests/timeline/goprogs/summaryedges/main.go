// Command summaryedges makes the corner cases of Go's goroutine summary happen while it
// is traced, for the summary tests: a region and a task begun before tracing and ended
// during it (an end without a begin), goroutines that block forever (select {}: the
// "forever" reason, which Go counts as death), one of them inside a region, a goroutine
// that exits inside a region it never ends, goroutines created inside a region (they
// inherit its task), and a region still open when tracing stops. It writes its execution
// trace to the file named by GOBLUEPRINT_TRACE_OUT.
package main

import (
	"context"
	"os"
	"runtime/trace"
	"sync"
	"time"
)

func main() {
	f, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		panic(err)
	}
	// Begun while tracing is off: no begin events, only the ends. (WithRegion, unlike
	// StartRegion, emits its end even when tracing was off at its start.)
	early, earlyTask := trace.NewTask(context.Background(), "early")
	trace.WithRegion(early, "before-trace", func() {
		if err := trace.Start(f); err != nil {
			panic(err)
		}
		trace.Log(early, "edges", "traced")
	})
	earlyTask.End()

	ctx, task := trace.NewTask(context.Background(), "edges")
	go func() { select {} }() // waits forever outside any region
	ready := make(chan struct{})
	go func() {
		trace.StartRegion(ctx, "stuck") // never ended: forever ends it
		close(ready)
		select {}
	}()
	<-ready
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		trace.StartRegion(ctx, "abandoned") // the goroutine exits with it open
	}()
	wg.Wait()
	hold := make(chan struct{})
	trace.WithRegion(ctx, "spawn", func() {
		for i := 0; i < 3; i++ {
			wg.Add(1)
			go func() { // inherits the task of the region it was created in
				defer wg.Done()
				time.Sleep(time.Millisecond)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer trace.StartRegion(ctx, "open-at-stop").End()
			<-hold // still waiting, region open, when tracing stops
		}()
	})
	time.Sleep(5 * time.Millisecond)
	task.End()
	trace.Stop()
	close(hold)
	wg.Wait()
	if err := f.Close(); err != nil {
		panic(err)
	}
}
