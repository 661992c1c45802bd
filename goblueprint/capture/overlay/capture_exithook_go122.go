//go:build !go1.24

// Go 1.21 to 1.23 keep the exit hooks in package runtime (runtime/exithook.go):
// runtime.main runs them after main.main returns, os.Exit runs them through
// os.runtime_beforeExit. Go 1.23's linker needs -checklinkname=0 for this
// reference, which goblueprint passes.

package main

import _ "unsafe" // for go:linkname

//go:linkname goblueprintRuntimeAddExitHook runtime.addExitHook
func goblueprintRuntimeAddExitHook(f func(), runOnNonZeroExit bool)

func goblueprintAddExitHook(f func()) { goblueprintRuntimeAddExitHook(f, true) }
