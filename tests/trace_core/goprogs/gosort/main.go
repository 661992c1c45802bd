// Command gosort is the oracle for goblueprint's port of slices.SortFunc: each input
// line is a list of integer keys; it prints the original indices in the order
// slices.SortFunc (unstable pdqsort) leaves them when comparing keys only.
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

type item struct{ key, idx int64 }

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var items []item
		for i, f := range strings.Fields(in.Text()) {
			k, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				panic(err)
			}
			items = append(items, item{k, int64(i)})
		}
		slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.key, b.key) })
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = strconv.FormatInt(it.idx, 10)
		}
		fmt.Fprintln(out, strings.Join(parts, " "))
	}
}
