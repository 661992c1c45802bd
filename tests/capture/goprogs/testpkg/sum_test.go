package testpkg

import (
	"os"
	"os/exec"
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

// TestSpawn runs the test binary once more as a child process (a common
// pattern); the child's scheduler lines must not reach the capture's log.
func TestSpawn(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=TestOther", "-test.v")
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr // shared, as a child's stderr usually is
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v", err)
	}
	t.Log("testpkg: child done")
}

// TestSleep waits to be stopped by a signal; it runs only when asked to.
func TestSleep(t *testing.T) {
	if os.Getenv("TESTPKG_SLEEP") == "" {
		t.Skip("set TESTPKG_SLEEP=1 to run")
	}
	ParallelSum(1_000_000, 4)
	time.Sleep(time.Hour)
}
