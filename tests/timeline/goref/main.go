// goref: the reference for goblueprint's timeline tests. Reads a Go execution
// trace with Go's own internal/trace and writes JSON lines to stdout:
// every event (in ReadEvent order, with what the Python Event API exposes),
// then Go's own summary (internal/trace.Summarizer) of every goroutine.
// Built from inside a copy of GOROOT (cmd/goref) because internal/trace is internal.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"internal/trace"
)

type frame struct {
	PC   uint64 `json:"pc"`
	Func string `json:"func"`
	File string `json:"file"`
	Line uint64 `json:"line"`
}

var (
	out     *bufio.Writer
	enc     *json.Encoder
	stackID = map[string]int{}
)

func emit(v any) {
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
}

// stack interns a stack by its frames and emits its definition once.
func stack(s trace.Stack) int {
	if s == trace.NoStack {
		return 0
	}
	var frames []frame
	for f := range s.Frames() {
		frames = append(frames, frame{f.PC, f.Func, f.File, f.Line})
	}
	if len(frames) == 0 {
		return 0
	}
	key := fmt.Sprint(frames)
	if id, ok := stackID[key]; ok {
		return id
	}
	id := len(stackID) + 1
	stackID[key] = id
	emit(map[string]any{"stack": id, "frames": frames})
	return id
}

func value(v trace.Value) any {
	switch v.Kind() {
	case trace.ValueUint64:
		return v.Uint64()
	case trace.ValueString:
		return v.String()
	}
	return nil
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out = bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc = json.NewEncoder(out)
	r, err := trace.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := trace.NewSummarizer()
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			emit(map[string]any{"error": err.Error()})
			break
		}
		s.Event(&ev)
		e := map[string]any{
			"k": int(ev.Kind()), "t": int64(ev.Time()),
			"g": int64(ev.Goroutine()), "p": int64(ev.Proc()), "m": int64(ev.Thread()),
			"s": stack(ev.Stack()),
		}
		switch ev.Kind() {
		case trace.EventSync:
			e["n"] = ev.Sync().N
		case trace.EventMetric:
			m := ev.Metric()
			e["name"], e["value"] = m.Name, value(m.Value)
		case trace.EventLabel:
			l := ev.Label()
			e["label"], e["rk"], e["rid"] = l.Label, int(l.Resource.Kind), resID(l.Resource)
		case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
			rg := ev.Range()
			e["name"], e["rk"], e["rid"] = rg.Name, int(rg.Scope.Kind), resID(rg.Scope)
			if ev.Kind() == trace.EventRangeEnd {
				var attrs [][2]any
				for _, a := range ev.RangeAttributes() {
					attrs = append(attrs, [2]any{a.Name, value(a.Value)})
				}
				e["attrs"] = attrs
			}
		case trace.EventTaskBegin, trace.EventTaskEnd:
			t := ev.Task()
			e["id"], e["parent"], e["type"] = uint64(t.ID), uint64(t.Parent), t.Type
		case trace.EventRegionBegin, trace.EventRegionEnd:
			rg := ev.Region()
			e["task"], e["type"] = uint64(rg.Task), rg.Type
		case trace.EventLog:
			l := ev.Log()
			e["task"], e["category"], e["message"] = uint64(l.Task), l.Category, l.Message
		case trace.EventStateTransition:
			st := ev.StateTransition()
			e["rk"], e["rid"], e["reason"], e["ss"] = int(st.Resource.Kind), resID(st.Resource), st.Reason, stack(st.Stack)
			if st.Resource.Kind == trace.ResourceGoroutine {
				o, n := st.Goroutine()
				e["old"], e["new"] = int(o), int(n)
			} else {
				o, n := st.Proc()
				e["old"], e["new"] = int(o), int(n)
			}
		}
		emit(e)
	}
	sum := s.Finalize()
	ids := make([]int64, 0, len(sum.Goroutines))
	for id := range sum.Goroutines {
		ids = append(ids, int64(id))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		g := sum.Goroutines[trace.GoID(id)]
		emit(map[string]any{"summary": map[string]any{
			"id": id, "name": g.Name, "pc": g.PC,
			"creation": int64(g.CreationTime), "start": int64(g.StartTime), "end": int64(g.EndTime),
			"exec": int64(g.ExecTime), "sched_wait": int64(g.SchedWaitTime),
			"block": g.BlockTimeByReason, "syscall": int64(g.SyscallTime),
			"syscall_block": int64(g.SyscallBlockTime), "total": int64(g.TotalTime),
			"ranges": g.RangeTime, "regions": len(g.Regions),
		}})
	}
}

func resID(r trace.ResourceID) int64 {
	switch r.Kind {
	case trace.ResourceGoroutine:
		return int64(r.Goroutine())
	case trace.ResourceProc:
		return int64(r.Proc())
	case trace.ResourceThread:
		return int64(r.Thread())
	}
	return -1
}
