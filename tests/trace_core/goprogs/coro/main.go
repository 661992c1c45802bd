// Command coro switches between goroutines as coroutines (iter.Pull: GoSwitch and
// GoSwitchDestroy events, Go 1.23+) and allocates, so that run with
// GODEBUG=traceallocfree=1 the trace also holds the experimental alloc/free events.
// It writes its execution trace to the file named by GOBLUEPRINT_TRACE_OUT.
package main

import (
	"iter"
	"os"
	"runtime"
	"runtime/trace"
)

var sink []byte

func count(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			sink = make([]byte, 64+i%512)
			if !yield(i) {
				return
			}
		}
	}
}

func main() {
	out, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		panic(err)
	}
	defer out.Close()
	if err := trace.Start(out); err != nil {
		panic(err)
	}
	total := 0
	for round := 0; round < 50; round++ {
		next, stop := iter.Pull(count(200))
		for {
			v, ok := next()
			if !ok {
				break
			}
			total += v
			if v == 100 && round%2 == 0 {
				break // stop early: GoSwitchDestroy of a suspended coroutine
			}
		}
		stop()
	}
	runtime.GC()
	trace.Stop()
	if total == 0 {
		panic("no work")
	}
}
