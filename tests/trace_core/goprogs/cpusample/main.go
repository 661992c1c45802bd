// Command cpusample traces CPU-bound goroutines while the CPU profiler runs, so the
// trace holds CPU samples (StackSample events) with and without a goroutine.
// It writes its execution trace to the file named by GOBLUEPRINT_TRACE_OUT.
package main

import (
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"time"
)

var sink uint64

func spin(d time.Duration) uint64 {
	var x uint64 = 1
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 10000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

func main() {
	out, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		panic(err)
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		panic(err)
	}
	if err := trace.Start(out); err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < 2*runtime.GOMAXPROCS(0)+1; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := spin(150 * time.Millisecond)
			mu.Lock()
			sink += v
			mu.Unlock()
		}()
	}
	wg.Wait()
	runtime.GC()
	trace.Stop()
	pprof.StopCPUProfile()
}
