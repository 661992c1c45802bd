// The workload `goblueprint demo` records: a short program that makes the
// scheduler do each of its jobs once, so that every view has something to
// show. It knows nothing about being traced (goblueprint capture adds that);
// it only marks its phases as runtime/trace tasks and regions, which cost
// nothing when no trace is running.
//
// Phases (each a trace task; run one after the other, ~1.5 s in all at -scale 1):
//
//	cpu       CPU-bound goroutines in tight loops without calls (async preemption)
//	channels  a pipeline of unbuffered and buffered channels, select with timeouts
//	mutex     goroutines contending on a sync.Mutex and a sync.RWMutex
//	timers    time.Sleep, time.After, a Ticker and time.AfterFunc
//	syscalls  blocking syscalls (nanosleep, pipe read/write) that hand off their P
//	network   a TCP echo server and clients over loopback (the netpoller)
//	gc        allocation churn that triggers GC cycles
//	procs     runtime.GOMAXPROCS lowered to 1 then restored, with work running
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/trace"
	"sync"
	"syscall"
	"time"
)

var scale = flag.Float64("scale", 1, "multiply the amount of work by this")

func main() {
	flag.Parse()
	start := time.Now()
	ctx := context.Background()
	phases := []struct {
		name string
		fn   func(context.Context)
	}{
		{"cpu", cpuPhase},
		{"channels", channelPhase},
		{"mutex", mutexPhase},
		{"timers", timerPhase},
		{"syscalls", syscallPhase},
		{"network", networkPhase},
		{"gc", gcPhase},
		{"procs", procsPhase},
	}
	for _, ph := range phases {
		t0 := time.Now()
		tctx, task := trace.NewTask(ctx, ph.name)
		trace.Log(tctx, "phase", ph.name)
		ph.fn(tctx)
		task.End()
		fmt.Printf("workload: %-9s %6.1f ms\n", ph.name, float64(time.Since(t0).Microseconds())/1000)
	}
	fmt.Printf("workload: done in %.1f ms, GOMAXPROCS=%d\n", float64(time.Since(start).Microseconds())/1000, runtime.GOMAXPROCS(0))
}

func n(base int) int {
	v := int(float64(base) * *scale)
	if v < 1 {
		return 1
	}
	return v
}

var sink uint64

// spin is a loop without function calls: only async preemption (signals) can
// take its P away before it ends.
func spin(iters int) uint64 {
	var x uint64 = 88172645463325252
	for i := 0; i < iters; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func cpuPhase(ctx context.Context) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	workers := 2*runtime.GOMAXPROCS(0) + 1 // more than Ps: someone must be preempted
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trace.WithRegion(ctx, "spin", func() {
				v := spin(n(10_000_000))
				mu.Lock()
				sink += v
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
}

func channelPhase(ctx context.Context) {
	src := make(chan int)
	mid := make(chan int, 16)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // producer
		defer wg.Done()
		defer close(src)
		for i := 0; i < n(2_000); i++ {
			src <- i
		}
	}()
	go func() { // stage
		defer wg.Done()
		defer close(mid)
		for v := range src {
			mid <- v * 2
		}
	}()
	go func() { // consumer with select and timeouts
		defer wg.Done()
		defer close(done)
		timeouts := 0
		for {
			select {
			case _, ok := <-mid:
				if !ok {
					trace.Logf(ctx, "channels", "timeouts=%d", timeouts)
					return
				}
			case <-time.After(5 * time.Millisecond):
				timeouts++
			}
		}
	}()
	wg.Wait()
	<-done
}

func mutexPhase(ctx context.Context) {
	var mu sync.Mutex
	var rw sync.RWMutex
	shared := map[int]int{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			defer trace.StartRegion(ctx, "contend").End()
			for i := 0; i < n(200); i++ {
				if i%10 == 0 {
					rw.Lock()
					shared[w] = i
					rw.Unlock()
				} else {
					rw.RLock()
					_ = shared[w]
					rw.RUnlock()
				}
				mu.Lock() // held long enough that the others park on the mutex
				sink += spin(4_000)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
}

func timerPhase(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Duration(1+i%4) * time.Millisecond)
			<-time.After(2 * time.Millisecond)
		}(i)
	}
	ticker := time.NewTicker(3 * time.Millisecond)
	for i := 0; i < n(20); i++ {
		<-ticker.C
	}
	ticker.Stop()
	fired := make(chan struct{})
	time.AfterFunc(5*time.Millisecond, func() { close(fired) })
	<-fired
	wg.Wait()
}

func syscallPhase(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// nanosleep through syscall.Syscall: a blocking syscall, so sysmon
			// retakes the P when it lasts longer than 20 µs.
			ts := syscall.Timespec{Nsec: 2_000_000}
			for j := 0; j < n(10); j++ {
				syscall.Nanosleep(&ts, nil)
			}
		}()
	}
	// A pipe read in blocking mode (raw fds, not the netpoller).
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err == nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64)
			for {
				m, err := syscall.Read(fds[0], buf)
				if m <= 0 || err != nil {
					return
				}
			}
		}()
		for j := 0; j < n(20); j++ {
			syscall.Write(fds[1], []byte("ping"))
			time.Sleep(500 * time.Microsecond)
		}
		syscall.Close(fds[1])
	}
	wg.Wait()
	if fds[0] != 0 {
		syscall.Close(fds[0])
	}
}

func networkPhase(ctx context.Context) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload: network phase skipped:", err)
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
				io.Copy(c, c) // echo
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
			for j := 0; j < n(100); j++ {
				if _, err := c.Write(buf); err != nil {
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
}

func gcPhase(ctx context.Context) {
	var keep [][]byte
	for i := 0; i < n(10_000); i++ {
		b := make([]byte, 1024+i%4096)
		if i%16 == 0 {
			keep = append(keep, b)
		}
		if len(keep) > 512 {
			keep = keep[:0]
		}
	}
	// No runtime.GC(): its sweep loop yields once per span (thousands of Gosched
	// events); the cycles this allocation rate triggers are the ones worth seeing.
	sink += uint64(len(keep))
}

func procsPhase(ctx context.Context) {
	before := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					sink += spin(4_000)
				}
			}
		}()
	}
	time.Sleep(30 * time.Millisecond)
	runtime.GOMAXPROCS(1)
	trace.Log(ctx, "procs", "GOMAXPROCS=1")
	time.Sleep(time.Duration(n(120)) * time.Millisecond)
	runtime.GOMAXPROCS(before)
	trace.Logf(ctx, "procs", "GOMAXPROCS=%d", before)
	time.Sleep(80 * time.Millisecond) // long enough for a schedtrace line after the restore
	close(stop)
	wg.Wait()
}
