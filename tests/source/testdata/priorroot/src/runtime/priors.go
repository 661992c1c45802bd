// A hand-built runtime with one case per prior-status rule and per status write form.
// tests/source/test_prior_rules.py finds each expected line by its text.
package runtime

import "internal/runtime/atomic"

const (
	_Gidle = iota
	_Grunnable
	_Grunning
	_Gsyscall
	_Gwaiting
	_Gdead
	_Gpreempted

	_Gscan          = 0x1000
	_Gscanrunnable  = _Gscan + _Grunnable
	_Gscanrunning   = _Gscan + _Grunning
	_Gscansyscall   = _Gscan + _Gsyscall
	_Gscanwaiting   = _Gscan + _Gwaiting
	_Gscanpreempted = _Gscan + _Gpreempted
)

const (
	_Pidle = iota
	_Prunning
	_Pgcstop
	_Pdead
)

type g struct {
	atomicstatus atomic.Uint32
	m            *m
}

type m struct {
	p *p
}

type p struct {
	status uint32
	m      *m
}

func throw(s string)
func assertWorldStopped()
func getg() *g
func lock()

// ---- G write forms

// A wrapper: callers' constants are the transitions (rule: cas).
func casgstatus(gp *g, oldval, newval uint32) {
	for !gp.atomicstatus.CompareAndSwap(oldval, newval) {
	}
}

func execute(gp *g) {
	casgstatus(gp, _Grunnable, _Grunning) // G-cas-wrapper
}

// A direct CAS on atomicstatus with constants, behind a throw-guard on its parameters
// (casGFromPreempted): its callers' arguments are the transition.
func casGFromPreempted(gp *g, old, new uint32) bool {
	if old != _Gpreempted || new != _Gwaiting {
		throw("bad g transition")
	}
	return gp.atomicstatus.CompareAndSwap(_Gpreempted, _Gwaiting)
}

func suspend(gp *g) {
	casGFromPreempted(gp, _Gpreempted, _Gwaiting) // G-direct-cas
}

// A direct Store on atomicstatus under a switch on the status (rule: guard).
func markDead(gp *g) {
	switch gp.atomicstatus.Load() {
	case _Grunning:
		gp.atomicstatus.Store(_Gdead) // G-store-guard
	}
}

// A direct Store with nothing said about the prior status (stays "*").
func forceDead(gp *g) {
	gp.atomicstatus.Store(_Gdead) // G-store-unstated
}

// A receiver type built only after a status check; its method restores the G's status
// (syscallingThread.resume): the CAS operands come from the receiver (rule: constructor).
type blocked struct {
	gp     *g
	status uint32
}

func block(gp *g) (blocked, bool) {
	status := gp.atomicstatus.Load()
	if status != _Gsyscall {
		return blocked{}, false
	}
	return blocked{gp, status}, true
}

func (b blocked) resume() {
	casgstatus(b.gp, b.status|_Gscan, b.status) // G-constructor
}

// ---- P write forms and rules

// atomic.Cas(&pp.status, ...) with constants (rule: cas).
func retake(pp *p) {
	atomic.Cas(&pp.status, _Prunning, _Pidle) // P-cas
}

// A CAS whose old value is a variable pinned by a guard on the same path.
func retakeIf(pp *p) {
	s := pp.status
	if s == _Pgcstop && atomic.Cas(&pp.status, s, _Pidle) { // P-cas-guarded-var
		return
	}
}

// A plain assignment after a throw-guard on the same object (rule: guard).
func wirep(pp *p) {
	if pp.m != nil || pp.status != _Pidle {
		throw("wirep: bad p")
	}
	pp.status = _Prunning // P-guard
}

// acquirep always calls wirep: its callers make wirep's transition (rule: callee).
func acquirep(pp *p) {
	wirep(pp)
}

func startm(pp *p) {
	acquirep(pp) // P-callee
}

// Runs only with the world stopped, when every P is in _Pgcstop (rule: world-stopped).
func destroy(pp *p) {
	assertWorldStopped()
	pp.status = _Pdead // P-world-stopped
}

// A function that does not itself assert the world is stopped is not taken to run stopped,
// even when its only caller does (a fresh P is not in _Pgcstop).
func initP(pp *p) {
	pp.status = _Pgcstop // P-unstated-init
}

func procresize(pp *p) {
	assertWorldStopped()
	initP(pp)
}

// A second top-level store on the same object: its prior status is the first one's value
// (rule: earlier-write).  The first store stays "*".
func park(pp *p) {
	pp.status = _Pidle // P-unstated-first
	lock()
	atomic.Store(&pp.status, _Pgcstop) // P-earlier-write
}

// A receiver type built only after a status check, written through by its methods
// (syscallingThread.takeP -> releaseP): rule constructor.
type syscalling struct {
	pp *p
}

func blockOnSyscall(pp *p) (syscalling, bool) {
	if pp.status != _Prunning {
		return syscalling{}, false
	}
	return syscalling{pp: pp}, true
}

func (s syscalling) releaseP(state uint32) {
	if state != _Pidle && state != _Pgcstop {
		throw("bad state")
	}
	atomic.Store(&s.pp.status, state)
}

func (s syscalling) takeP() {
	s.releaseP(_Pidle) // P-constructor
}

// A receiver type with one constructor that checks and one that does not: nothing is known.
type loose struct {
	pp *p
}

func looseChecked(pp *p) loose {
	if pp.status != _Prunning {
		throw("bad")
	}
	return loose{pp}
}

func looseAny(pp *p) loose {
	return loose{pp}
}

func (l loose) stop() {
	l.pp.status = _Pgcstop // P-constructor-unchecked
}

// A function that leaves a status on the P it returns (releasep): a store through
// `pp := releaseP()` starts from it (rule: callee-result), also through a function
// that returns another's result.
func curP() *p {
	return getg().m.p
}

func releaseP() *p {
	pp := curP()
	pp.status = _Pidle // P-unstated-release
	return pp
}

func releasePTraced() *p {
	lock()
	return releaseP()
}

func gcstop() {
	pp := releasePTraced()
	lock()
	pp.status = _Pgcstop // P-callee-result
}

// A call that may write the status between the two: nothing is known.
func gcstopAfterWire() {
	pp := releasePTraced()
	wirep(pp)
	pp.status = _Pgcstop // P-callee-result-moved
}
