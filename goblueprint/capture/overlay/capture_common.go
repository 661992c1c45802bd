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

// Imported under names of our own: a file's imports and package main's own
// declarations share one namespace, and a program may well declare "trace"
// (a -trace flag) or "signal" itself.
import (
	goblueprintOS "os"
	goblueprintSignal "os/signal"
	goblueprintTrace "runtime/trace"
	goblueprintSync "sync"
	goblueprintSyscall "syscall"
)

var (
	goblueprintOnce goblueprintSync.Once
	goblueprintFile *goblueprintOS.File
)

// A package-level variable initialiser runs before any init() of package main,
// so the trace covers as much of the program as an added file can reach.
var _ = goblueprintStart()

func goblueprintStart() bool {
	path := goblueprintOS.Getenv("GOBLUEPRINT_TRACE_OUT")
	// The GODEBUG settings goblueprint added were read by the runtime at start;
	// restore the caller's value so that programs started by this one do not
	// print their own scheduler lines into ours.
	if orig, ok := goblueprintOS.LookupEnv("GOBLUEPRINT_GODEBUG_ORIG"); ok {
		if orig == "" {
			goblueprintOS.Unsetenv("GODEBUG")
		} else {
			goblueprintOS.Setenv("GODEBUG", orig)
		}
		goblueprintOS.Unsetenv("GOBLUEPRINT_GODEBUG_ORIG")
	}
	goblueprintOS.Unsetenv("GOBLUEPRINT_TRACE_OUT")
	if path == "" {
		return false
	}
	f, err := goblueprintOS.Create(path)
	if err != nil {
		goblueprintOS.Stderr.WriteString("goblueprint capture: cannot create trace: " + err.Error() + "\n")
		return false
	}
	if err := goblueprintTrace.Start(f); err != nil {
		goblueprintOS.Stderr.WriteString("goblueprint capture: cannot start trace: " + err.Error() + "\n")
		f.Close()
		return false
	}
	goblueprintFile = f
	goblueprintAddExitHook(goblueprintStop)
	sigs := make(chan goblueprintOS.Signal, 1)
	goblueprintSignal.Notify(sigs, goblueprintSyscall.SIGINT, goblueprintSyscall.SIGTERM)
	go func() {
		sig := <-sigs
		goblueprintStop()
		// Unregister only our channel: a program with handlers of its own still
		// gets the signal; one without gets the default action (death by signal).
		goblueprintSignal.Stop(sigs)
		goblueprintSyscall.Kill(goblueprintOS.Getpid(), sig.(goblueprintSyscall.Signal))
	}()
	return true
}

func goblueprintStop() {
	goblueprintOnce.Do(func() {
		if goblueprintFile == nil {
			return
		}
		goblueprintTrace.Stop()
		goblueprintFile.Close()
	})
}
