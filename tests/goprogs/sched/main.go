// Command sched exercises the scheduler paths goblueprint reads from traces:
// async preemption of CPU-bound loops, channels and select, mutex contention,
// timers, blocking syscalls, the netpoller, GC and a GOMAXPROCS change, with
// user tasks, regions and logs. Each property a test relies on is forced by the
// workload, not left to the machine's speed, load or CPU count. It writes its execution trace to the file named
// by GOBLUEPRINT_TRACE_OUT; GOBLUEPRINT_SCALE multiplies the amount of work.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/trace"
	"strconv"
	"sync"
	"syscall"
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

// procs is the GOMAXPROCS the workload runs with, whatever the machine's CPU count: with
// several Ps, runnable goroutines are stolen and migrate between Ps, and the GOMAXPROCS
// change in main really changes it (so it stops the world) even on a one-CPU machine.
const procs = 4

func cpuBound(ctx context.Context, scale int) {
	defer trace.StartRegion(ctx, "cpu-bound").End()
	// More spinning goroutines than Ps, each spinning until a common deadline 10x sysmon's
	// preemption slice (10 ms) away, however fast the CPU: every P is held longer than
	// the slice, so the trace always holds preemptions ("preempted") and the preempted Gs
	// queued behind them are picked up by other Ps.
	deadline := time.Now().Add(100 * time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 2*runtime.GOMAXPROCS(0)+1; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				sink += spin(1_000_000 * scale)
			}
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
	blockedSyscall()
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

// blockedSyscall makes a syscall that always outlasts sysmon's retake delay, so the trace
// always holds a syscall whose P was taken away (Go's SyscallBlockTime > 0). The pipe of
// os.Pipe is served by the netpoller (non-blocking fds), so a raw pipe is used: its read
// blocks in the kernel until the writer, 100 ms later, writes. sysmon hands a P in a
// syscall off after at most 10 ms (20 us when other work waits for it).
func blockedSyscall() {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		panic(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	go func() {
		time.Sleep(100 * time.Millisecond)
		syscall.Write(fds[1], []byte{1})
	}()
	buf := make([]byte, 1)
	if n, err := syscall.Read(fds[0], buf); n != 1 || err != nil {
		panic(fmt.Sprint("blocked read: ", n, err))
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
	// A tiny GOGC keeps a GC cycle marking almost all the time, and an allocating goroutine
	// must then pay for its allocations by assisting: "GC mark assist" ranges always appear.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
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
	runtime.GOMAXPROCS(procs)
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
