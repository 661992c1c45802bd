// A small program whose binary the binary-blueprint tests inspect: it starts
// goroutines, blocks on channels and a mutex, so runtime.execute and friends run.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

type point struct {
	x, y int32
	tag  byte
	next *point
	ok   bool
}

//go:noinline
func sum(p *point) int32 {
	var s int32
	for q := p; q != nil; q = q.next {
		s += q.x + q.y
	}
	return s
}

func main() {
	n := 4
	if len(os.Args) > 1 {
		fmt.Sscan(os.Args[1], &n)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan int32)
	total := int32(0)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			p := &point{x: int32(i), y: 1, next: &point{x: 2}}
			v := sum(p)
			runtime.Gosched()
			ch <- v
		}(i)
	}
	go func() { wg.Wait(); close(ch) }()
	for v := range ch {
		mu.Lock()
		total += v
		mu.Unlock()
	}
	fmt.Println("total", total)
}
