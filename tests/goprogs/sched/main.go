// Command sched exercises the scheduler paths goblueprint reads from traces:
// async preemption of CPU-bound loops, channels and select, mutex contention,
// timers, blocking syscalls, the netpoller, GC and a GOMAXPROCS change, with
// user tasks, regions and logs. It writes its execution trace to the file named
// by GOBLUEPRINT_TRACE_OUT; GOBLUEPRINT_SCALE multiplies the amount of work.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/trace"
	"strconv"
	"sync"
	"time"
)

var sink uint64

func spin(n int) uint64 {
	// No calls in the loop body: only asynchronous preemption can stop it.
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func cpuBound(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "cpu-bound").End()
	var wg sync.WaitGroup
	for i := 0; i < 2*runtime.GOMAXPROCS(0)+1; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sink += spin(20_000_000 * scale)
		}()
	}
	wg.Wait()
}

func channels(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "channels").End()
	jobs := make(chan int)
	results := make(chan int, 4)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case j := <-jobs:
					results <- j * 2
				case <-quit:
					return
				}
			}
		}()
	}
	n := 2000 * scale
	go func() {
		for i := 0; i < n; i++ {
			jobs <- i
		}
	}()
	total := 0
	for i := 0; i < n; i++ {
		total += <-results
	}
	close(quit)
	wg.Wait()
	trace.Log(ctx, "channels", "total="+strconv.Itoa(total))
}

func mutexes(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "mutexes").End()
	var mu sync.Mutex
	var wg sync.WaitGroup
	counter := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 500*scale; j++ {
				mu.Lock()
				counter++
				sink += spin(200)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func timers(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "timers").End()
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 5*scale; k++ {
				time.Sleep(time.Duration(100+i*50) * time.Microsecond)
			}
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
			}
		}(i)
	}
	t := time.NewTicker(200 * time.Microsecond)
	for i := 0; i < 10*scale; i++ {
		<-t.C
	}
	t.Stop()
	wg.Wait()
}

func syscalls(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "syscalls").End()
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() {
		// Blocking reads on a pipe: the G sits in a syscall while its P is handed off.
		buf := make([]byte, 64)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
		close(done)
	}()
	for i := 0; i < 50*scale; i++ {
		w.Write([]byte("ping"))
		time.Sleep(50 * time.Microsecond)
	}
	w.Close()
	<-done
	f, err := os.CreateTemp("", "goblueprint-sched-*")
	if err == nil {
		for i := 0; i < 20*scale; i++ {
			f.Write(make([]byte, 4096))
			f.Sync()
		}
		f.Close()
		os.Remove(f.Name())
	}
}

func network(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "netpoller").End()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		trace.Log(ctx, "netpoller", "listen failed: "+err.Error())
		return
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				return
			}
			defer c.Close()
			buf := make([]byte, 512)
			for k := 0; k < 50*scale; k++ {
				c.Write(buf)
				io.ReadFull(c, buf)
			}
		}()
	}
	wg.Wait()
}

func garbage(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "gc").End()
	var keep [][]byte
	for i := 0; i < 3000*scale; i++ {
		keep = append(keep, make([]byte, 16<<10))
		if len(keep) > 256 {
			keep = keep[:0]
		}
	}
	runtime.GC()
	sink += uint64(len(keep))
}

func main() {
	out := os.Getenv("GOBLUEPRINT_TRACE_OUT")
	if out == "" {
		fmt.Fprintln(os.Stderr, "sched: set GOBLUEPRINT_TRACE_OUT to the trace file to write")
		os.Exit(2)
	}
	scale := 1
	if s, err := strconv.Atoi(os.Getenv("GOBLUEPRINT_SCALE")); err == nil && s > 0 {
		scale = s
	}
	f, err := os.Create(out)
	if err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	ctx, task := trace.NewTask(context.Background(), "sched-workload")
	for round := 0; round < scale; round++ {
		cpuBound(ctx, 1)
		channels(ctx, 1)
		mutexes(ctx, 1)
		timers(ctx, 1)
		syscalls(ctx, 1)
		network(ctx, 1)
		garbage(ctx, 1)
		old := runtime.GOMAXPROCS(1)
		trace.Log(ctx, "gomaxprocs", "reduced to 1")
		channels(ctx, 1)
		runtime.GOMAXPROCS(old)
	}
	task.End()
	trace.Stop()
	if err := f.Close(); err != nil {
		panic(err)
	}
}
