// Command crash starts goroutines, lets them run, then dies of an unrecovered panic:
// the lab must still dump what it recorded and say that the program died.
package main

import "sync"

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() { defer wg.Done() }()
	}
	wg.Wait()
	panic("crash on purpose")
}
