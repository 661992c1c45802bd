package testpkg

import (
	"testing"
	"time"
)

func TestParallelSum(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		n := 2_000_000
		if got, want := ParallelSum(n, workers), n*(n-1)/2; got != want {
			t.Fatalf("ParallelSum(%d, %d) = %d, want %d", n, workers, got, want)
		}
	}
	time.Sleep(250 * time.Millisecond) // a few schedtrace lines
	t.Log("testpkg: TestParallelSum ran")
}

func TestOther(t *testing.T) {
	t.Log("testpkg: TestOther ran")
}
