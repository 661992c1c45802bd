// A main package that knows nothing about tracing: goroutines, channels, a
// mutex and timers, a line on stdout and one on stderr. Its first argument
// picks how it ends: "return" (default), "exit3" (os.Exit(3)), "sleep" (waits
// to be stopped by a signal), "child" (starts itself once more as a child
// process, whose scheduler lines must not reach the capture's log).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

func work() int {
	var mu sync.Mutex
	total := 0
	ch := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := 0
			for i := 0; i < 3_000_000; i++ {
				s += i ^ w
			}
			ch <- s & 0xff
		}(w)
	}
	go func() { wg.Wait(); close(ch) }()
	for v := range ch {
		mu.Lock()
		total += v
		mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	return total
}

func main() {
	mode := "return"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	fmt.Println("mainpkg stdout: total", work())
	fmt.Fprintln(os.Stderr, "mainpkg stderr: mode", mode)
	time.Sleep(250 * time.Millisecond) // long enough for a few schedtrace lines
	switch mode {
	case "exit3":
		os.Exit(3)
	case "sleep":
		time.Sleep(time.Hour)
	case "child":
		cmd := exec.Command(os.Args[0], "return")
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "child failed:", err)
			os.Exit(1)
		}
	}
}
