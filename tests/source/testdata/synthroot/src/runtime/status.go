// A synthetic runtime: one of each status-writing mechanism, small enough to
// know every transition by reading it.
package runtime

import "internal/runtime/atomic"

const (
	// _Gidle: just allocated.
	_Gidle = iota
	_Grunnable
	_Grunning
	_Gwaiting
	_Gdead

	_Gscan         = 0x1000
	_Gscanrunnable = _Gscan + _Grunnable
	_Gscanrunning  = _Gscan + _Grunning
	_Gscanwaiting  = _Gscan + _Gwaiting
)

const (
	_Pidle = iota
	_Prunning
	_Pgcstop
	_Pdead
)

type g struct {
	atomicstatus atomic.Uint32 // the G status word
	m            *m
}

type m struct {
	p  *p
	g0 *g
}

type p struct {
	status uint32 // one of _Pidle, ...
	m      *m
}

func throw(s string)
func systemstack(fn func())
func mcall(fn func(*g))
func getg() *g

// Wrapper: the operands are parameters, so callers' constants are the transitions.
//
//go:nosplit
func casgstatus(gp *g, oldval, newval uint32) {
	for !gp.atomicstatus.CompareAndSwap(oldval, newval) {
	}
}

// A wrapper of a wrapper.
func casGToWaiting(gp *g, old uint32) {
	casgstatus(gp, old, _Gwaiting)
}

// The switch on a parameter filters what callers may pass.
func castogscanstatus(gp *g, oldval, newval uint32) bool {
	switch oldval {
	case _Grunnable, _Gwaiting:
		return gp.atomicstatus.CompareAndSwap(oldval, newval)
	}
	throw("bad oldval")
	return false
}

func newg(parked bool) *g {
	gp := new(g)
	casgstatus(gp, _Gidle, _Gdead)
	status := uint32(_Grunnable)
	if parked {
		status = _Gwaiting
	}
	casgstatus(gp, _Gdead, status)
	return gp
}

func scan(gp *g, s uint32) {
	switch s {
	case _Grunnable, _Grunning:
		castogscanstatus(gp, s, s|_Gscan)
	}
}

func park(gp *g) {
	systemstack(func() {
		casGToWaiting(gp, _Grunning)
	})
	mcall(park_m)
}

func park_m(gp *g) {
	go helper()
	defer cleanup()
	schedule()
}

func helper()  {}
func cleanup() {}
func schedule() {}

func unknownPrior(gp *g, s uint32) {
	gp.atomicstatus.Store(_Gdead)
	casgstatus(gp, s, _Grunnable)
}

// P: plain stores with and without a guard, CAS through atomic, wrappers.
func wirep(pp *p) {
	if pp.m != nil || pp.status != _Pidle {
		throw("wirep: bad p")
	}
	pp.status = _Prunning
}

func acquirep(pp *p) {
	wirep(pp)
}

func stopP(pp *p) {
	pp.status = _Pgcstop
}

func handoff(pp *p) {
	atomic.Cas(&pp.status, _Prunning, _Pidle)
}

func startSometimes(pp *p, cond bool) {
	if cond {
		return
	}
	acquirep(pp)
}

func user(pp *p) {
	startSometimes(pp, true)
	acquirep(pp)
}

func destroy(pp *p) {
	atomic.Store(&pp.status, _Pdead)
}

func goexit(neverCallThisFunction)

type neverCallThisFunction struct{}

func goexit1() {
	mcall(goexit0)
}

func goexit0(gp *g) {
	casgstatus(gp, _Grunning, _Gdead)
	schedule()
}

// Constants pinned to parameters by a throw-guard: callers' arguments are the transition.
func casGToPreemptScan(gp *g, old, new uint32) {
	if old != _Grunning || new != _Gscan|_Grunnable {
		throw("bad g transition")
	}
	for !gp.atomicstatus.CompareAndSwap(_Grunning, _Gscan|_Grunnable) {
	}
}

func preemptPark(gp *g) {
	casGToPreemptScan(gp, _Grunning, _Gscanrunnable)
}

// The left side of && holds where the CAS runs; a switch default excludes the other cases.
func retakeLike(pp *p) {
	s := pp.status
	if s == _Prunning && atomic.Cas(&pp.status, s, _Pidle) {
		return
	}
}

func defaultCase(gp *g, s uint32) {
	switch s {
	case _Gdead:
	default:
		castogscanstatus(gp, _Gwaiting, s)
	}
}
