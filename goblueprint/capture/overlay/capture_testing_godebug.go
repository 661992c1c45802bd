// Added to package testing by `goblueprint capture` (through `go test -c
// -overlay`) when it builds a test binary; nothing is added to the package
// under test.
//
// The runtime read GODEBUG (with goblueprint's schedtrace=MS) once, at
// process start.  This init puts the caller's own value back before any test
// runs, so that processes the tests start (a test binary re-running itself,
// go build, ...) print no scheduler lines into the capture's log, and a test
// reading GODEBUG sees what it would see without capture.  It imports only
// "os", which package testing imports already, and starts no goroutine.

package testing

import "os"

func init() {
	orig, ok := os.LookupEnv("GOBLUEPRINT_GODEBUG_ORIG")
	if !ok {
		return
	}
	if orig == "" {
		os.Unsetenv("GODEBUG")
	} else {
		os.Setenv("GODEBUG", orig)
	}
	os.Unsetenv("GOBLUEPRINT_GODEBUG_ORIG")
}
