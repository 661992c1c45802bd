// Command cpubound runs more CPU-bound goroutines than Ps, in loops without calls:
// only sysmon's preemption (after forcePreemptNS) takes the P from one of them.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

var sink [16]uint64

func spin(i, n int) {
	x := uint64(i)
	for j := 0; j < n; j++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink[i] = x
}

func main() {
	runtime.GOMAXPROCS(2)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spin(i, 40_000_000)
		}()
	}
	wg.Wait()
	fmt.Println(sink[0] != 1)
}
