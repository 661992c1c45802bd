// A program that starts runtime/trace itself, writing where
// GOBLUEPRINT_TRACE_OUT says: capture must build it without its overlay.
package main

import (
	"fmt"
	"os"
	"runtime/trace"
	"time"
)

func main() {
	f, err := os.Create(os.Getenv("GOBLUEPRINT_TRACE_OUT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done := make(chan bool)
	go func() { time.Sleep(20 * time.Millisecond); done <- true }()
	<-done
	trace.Stop()
	f.Close()
	fmt.Println("selftrace done")
}
