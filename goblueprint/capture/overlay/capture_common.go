// Added to package main by `goblueprint capture` through `go build -overlay`;
// never written into the program's own source tree.
//
// It starts runtime/trace from the environment variable GOBLUEPRINT_TRACE_OUT
// while package main is being initialised, and stops it (which is what
// flushes the last generation of the trace) from three places:
//
//   - an exit hook of the runtime (see the two capture_exithook_*.go files),
//     which runs when main.main returns and inside os.Exit, whatever the code;
//   - a handler of SIGINT and SIGTERM, which stops the trace and then delivers
//     the same signal again with the default action restored;
//   - nothing else: a panic that kills the program or a runtime fatal error
//     leaves the trace cut at the last flushed generation.
//
// The file's name holds "goblueprint_capture", which is how the analyses
// tell this file's goroutine and frames from the program's and leave them out
// of the program's results (goblueprint/timeline/capture_marks.py).  The clock
// anchor for schedtrace is measured outside the process, so nothing here
// writes into the trace.

package main

import (
	"os"
	"os/signal"
	"runtime/trace"
	"sync"
	"syscall"
)

var (
	goblueprintOnce sync.Once
	goblueprintFile *os.File
)

// A package-level variable initialiser runs before any init() of package main,
// so the trace covers as much of the program as an added file can reach.
var _ = goblueprintStart()

func goblueprintStart() bool {
	path := os.Getenv("GOBLUEPRINT_TRACE_OUT")
	// The GODEBUG settings goblueprint added were read by the runtime at start;
	// restore the caller's value so that programs started by this one do not
	// print their own scheduler lines into ours.
	if orig, ok := os.LookupEnv("GOBLUEPRINT_GODEBUG_ORIG"); ok {
		if orig == "" {
			os.Unsetenv("GODEBUG")
		} else {
			os.Setenv("GODEBUG", orig)
		}
		os.Unsetenv("GOBLUEPRINT_GODEBUG_ORIG")
	}
	os.Unsetenv("GOBLUEPRINT_TRACE_OUT")
	if path == "" {
		return false
	}
	f, err := os.Create(path)
	if err != nil {
		os.Stderr.WriteString("goblueprint capture: cannot create trace: " + err.Error() + "\n")
		return false
	}
	if err := trace.Start(f); err != nil {
		os.Stderr.WriteString("goblueprint capture: cannot start trace: " + err.Error() + "\n")
		f.Close()
		return false
	}
	goblueprintFile = f
	goblueprintAddExitHook(goblueprintStop)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		goblueprintStop()
		// Unregister only our channel: a program with handlers of its own still
		// gets the signal; one without gets the default action (death by signal).
		signal.Stop(sigs)
		syscall.Kill(os.Getpid(), sig.(syscall.Signal))
	}()
	return true
}

func goblueprintStop() {
	goblueprintOnce.Do(func() {
		if goblueprintFile == nil {
			return
		}
		trace.Stop()
		goblueprintFile.Close()
	})
}
