//go:build !go1.23

// Go 1.21 and 1.22 keep the exit hooks in package runtime (runtime/exithook.go):
// runtime.main runs them after main.main returns, os.Exit runs them through
// os.runtime_beforeExit. These linkers do not check linknames.

package main

import _ "unsafe" // for go:linkname

//go:linkname goblueprintRuntimeAddExitHook runtime.addExitHook
func goblueprintRuntimeAddExitHook(f func(), runOnNonZeroExit bool)

func goblueprintAddExitHook(f func()) { goblueprintRuntimeAddExitHook(f, true) }
