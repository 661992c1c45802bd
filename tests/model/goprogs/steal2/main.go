// Command steal2 is tests/lab/goprogs/steal at 2 Ps, so that a 2-CPU machine gives each P a
// CPU (tests/model/test_predict_lab.py). It is built to make Ps steal: one goroutine starts
// bursts of short CPU-bound goroutines, which all land in its own P's local run queue; the
// other P, idle, finds nothing elsewhere and takes half of that queue at a time.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

var sink [64]uint64

func work(i int) {
	x := uint64(i)
	for j := 0; j < 20000; j++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink[i%64] += x
}

func main() {
	runtime.GOMAXPROCS(2)
	var wg sync.WaitGroup
	for burst := 0; burst < 40; burst++ {
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work(i)
			}()
		}
		wg.Wait()
	}
	fmt.Println(sink[0] != 1)
}
