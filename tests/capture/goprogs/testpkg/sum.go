// Package testpkg is a library with tests that know nothing about tracing.
package testpkg

import "sync"

// ParallelSum adds 0..n-1 using the given number of goroutines.
func ParallelSum(n, workers int) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := 0
			for i := w; i < n; i += workers {
				s += i
			}
			mu.Lock()
			total += s
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	return total
}
