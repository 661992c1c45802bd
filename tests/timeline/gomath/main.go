// gomath: Go's math.Exp and math.Log, for goblueprint's go_float tests. Reads one float64
// per line as the hex of its bits and prints the bits of Exp and Log of it, in hex.
// GODEBUG=cpu.fma=off makes Exp take its path for CPUs without FMA (amd64).
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		bits, err := strconv.ParseUint(in.Text(), 16, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		x := math.Float64frombits(bits)
		fmt.Fprintf(out, "%x %x\n", math.Float64bits(math.Exp(x)), math.Float64bits(math.Log(x)))
	}
}
