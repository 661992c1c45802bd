// gosummary: Go's whole summary of a trace (internal/trace.Summarizer), for
// goblueprint's summary tests: every goroutine with its regions, and every task
// with its parent, children, start and end, log count, regions and goroutines.
// goref prints only the goroutines' totals; this pins regions and tasks too.
// Built from inside a copy of GOROOT (cmd/gosummary) because internal/trace is internal.
//
// usage: gosummary TRACE  (one JSON object on stdout; the reader's error, if any, in "error")
package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"sort"

	"internal/trace"
)

type stats map[string]any

func execStats(s trace.GoroutineExecStats) stats {
	return stats{
		"exec": int64(s.ExecTime), "sched_wait": int64(s.SchedWaitTime), "block": s.BlockTimeByReason,
		"syscall": int64(s.SyscallTime), "syscall_block": int64(s.SyscallBlockTime),
		"total": int64(s.TotalTime), "ranges": s.RangeTime,
	}
}

// eventTime is an event's time, or nil for Go's nil event (unknown start or end).
func eventTime(ev *trace.Event) any {
	if ev == nil {
		return nil
	}
	return int64(ev.Time())
}

func regions(rs []*trace.UserRegionSummary) []map[string]any {
	out := []map[string]any{}
	for _, r := range rs {
		out = append(out, map[string]any{
			"task": uint64(r.TaskID), "name": r.Name, "start": eventTime(r.Start), "end": eventTime(r.End),
			"stats": execStats(r.GoroutineExecStats),
		})
	}
	return out
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	r, err := trace.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		panic(err)
	}
	s := trace.NewSummarizer()
	result := map[string]any{}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			result["error"] = err.Error()
			break
		}
		s.Event(&ev)
	}
	sum := s.Finalize()
	gs := []map[string]any{}
	for id, g := range sum.Goroutines {
		gs = append(gs, map[string]any{
			"id": int64(id), "name": g.Name, "pc": g.PC, "creation": int64(g.CreationTime),
			"start": int64(g.StartTime), "end": int64(g.EndTime), "regions": regions(g.Regions),
			"stats": execStats(g.GoroutineExecStats),
		})
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i]["id"].(int64) < gs[j]["id"].(int64) })
	tasks := []map[string]any{}
	for id, t := range sum.Tasks {
		var parent any
		if t.Parent != nil {
			parent = uint64(t.Parent.ID)
		}
		children := []uint64{}
		for _, c := range t.Children {
			children = append(children, uint64(c.ID))
		}
		members := []int64{}
		for gid := range t.Goroutines {
			members = append(members, int64(gid))
		}
		sort.Slice(members, func(i, j int) bool { return members[i] < members[j] })
		tasks = append(tasks, map[string]any{
			"id": uint64(id), "name": t.Name, "parent": parent, "children": children,
			"start": eventTime(t.Start), "end": eventTime(t.End), "logs": len(t.Logs),
			"regions": regions(t.Regions), "goroutines": members,
		})
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i]["id"].(uint64) < tasks[j]["id"].(uint64) })
	result["goroutines"] = gs
	result["tasks"] = tasks
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	if err := json.NewEncoder(w).Encode(result); err != nil {
		panic(err)
	}
}
