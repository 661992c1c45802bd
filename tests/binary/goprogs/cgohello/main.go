// A cgo program: linked by the system linker, which puts C code at the start of
// .text, before runtime.text, where Go's function table counts from.
package main

/*
static int add(int a, int b) { return a + b; }
*/
import "C"

import "fmt"

func main() {
	ch := make(chan int)
	go func() { ch <- int(C.add(40, 2)) }()
	fmt.Println(<-ch)
}
