//go:build go1.23

// From Go 1.23 the exit hooks live in internal/runtime/exithook; runtime.main
// and os.Exit run them as before. The Hook type below mirrors exithook.Hook
// field by field so the call has the same layout. The linker needs
// -checklinkname=0 for this reference, which goblueprint passes.

package main

import _ "unsafe" // for go:linkname

type goblueprintHook struct {
	F            func()
	RunOnFailure bool
}

//go:linkname goblueprintExithookAdd internal/runtime/exithook.Add
func goblueprintExithookAdd(h goblueprintHook)

func goblueprintAddExitHook(f func()) {
	goblueprintExithookAdd(goblueprintHook{F: f, RunOnFailure: true})
}
