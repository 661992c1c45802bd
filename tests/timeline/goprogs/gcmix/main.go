// Command gcmix keeps the garbage collector busy for the trace metrics tests: many
// short GC cycles (GOGC=50) with mark assists, background mark workers and sweeping,
// a GOMAXPROCS change, and user tasks and regions of several types, nested, with one
// task left open. It writes its execution trace to the file named by
// GOBLUEPRINT_TRACE_OUT; GOBLUEPRINT_SCALE multiplies the amount of work.
package main

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"strconv"
	"sync"
)

var sink [][]byte

// churn allocates short-lived garbage and keeps a sliding window of it alive, so
// the heap grows fast enough for the allocating goroutines to assist the marker.
func churn(ctx context.Context, n int) {
	defer trace.StartRegion(ctx, "churn").End()
	keep := make([][]byte, 64)
	for i := 0; i < n; i++ {
		b := make([]byte, 256+i%1024)
		b[0] = byte(i)
		keep[i%len(keep)] = b
		if i%500 == 0 {
			trace.WithRegion(ctx, "tree", func() { build(8) })
		}
	}
	sink = append(sink[:0], keep...)
}

type node struct{ l, r *node }

func build(depth int) *node {
	if depth == 0 {
		return &node{}
	}
	return &node{build(depth - 1), build(depth - 1)}
}

func main() {
	scale := 1
	if s, err := strconv.Atoi(os.Getenv("GOBLUEPRINT_SCALE")); err == nil && s > 0 {
		scale = s
	}
	f, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		panic(err)
	}
	debug.SetGCPercent(50)
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	ctx, all := trace.NewTask(context.Background(), "run")
	_, _ = trace.NewTask(ctx, "left-open") // never ended: counted, not timed
	procs := runtime.GOMAXPROCS(0)
	for round := 0; round < 3; round++ {
		switch round {
		case 1: // one P less, then back: the per-P utilization functions end and start
			runtime.GOMAXPROCS(max(1, procs-1))
		case 2:
			runtime.GOMAXPROCS(procs)
		}
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				tctx, task := trace.NewTask(ctx, "worker")
				defer task.End()
				churn(tctx, 6000*scale)
				if w%2 == 0 {
					_, sub := trace.NewTask(tctx, "flush")
					trace.WithRegion(tctx, "flush", func() { sink = append(sink, make([]byte, 1<<16)) })
					sub.End()
				}
			}(w)
		}
		wg.Wait()
	}
	all.End()
	trace.Stop()
	if err := f.Close(); err != nil {
		panic(err)
	}
}
