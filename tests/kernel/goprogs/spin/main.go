// Eight goroutines that only compute, for a fixed amount of work (argument 1:
// rounds each, default 40M): run with
// GOMAXPROCS above the machine's cores, Ms compete for CPUs and the kernel
// preempts threads while Go believes a goroutine runs on them.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

//go:noinline
func step(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

func main() {
	const workers = 8
	rounds := 40_000_000
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	var wg sync.WaitGroup
	sums := make([]uint64, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			x := uint64(w)
			for i := 0; i < rounds; i++ {
				x = step(x)
			}
			sums[w] = x
		}(w)
	}
	wg.Wait()
	fmt.Println(sums[0] != 0)
}
