// gometrics: Go's own numbers for goblueprint's trace metrics tests. Reads a trace
// with internal/trace and prints one JSON object: for each UtilFlags value given,
// MutatorUtilizationV2's functions, MMUCurve.MMU at the given windows and the MMU
// plot of go tool trace (cmd/trace's HandlePlot, copied); then the task and region
// duration lists that go tool trace's /usertasks and /userregions histogram.
// Built from inside a copy of GOROOT (cmd/gometrics) because internal/trace is internal.
//
// usage: gometrics TRACE WINDOWS(ns, comma-separated) FLAGS...
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"internal/trace"
)

func plot(mu [][]trace.MutatorUtil, c *trace.MMUCurve) [][2]float64 {
	xMin := time.Second
	for xMin > 1 {
		if mmu := c.MMU(xMin); mmu < 0.0001 {
			break
		}
		xMin /= 1000
	}
	xMax := xMin * 1e6
	minEvent, maxEvent := mu[0][0].Time, mu[0][len(mu[0])-1].Time
	for _, mu1 := range mu[1:] {
		if mu1[0].Time < minEvent {
			minEvent = mu1[0].Time
		}
		if mu1[len(mu1)-1].Time > maxEvent {
			maxEvent = mu1[len(mu1)-1].Time
		}
	}
	if maxMax := time.Duration(maxEvent - minEvent); xMax > maxMax {
		xMax = maxMax
	}
	logMin, logMax := math.Log(float64(xMin)), math.Log(float64(xMax))
	const samples = 100
	out := make([][2]float64, samples)
	for i := 0; i < samples; i++ {
		window := time.Duration(math.Exp(float64(i)/(samples-1)*(logMax-logMin) + logMin))
		out[i] = [2]float64{float64(window), c.MMU(window)}
	}
	return out
}

// utilization is MutatorUtilizationV2, or how it panicked: Go 1.27.3's indexes its
// per-P table with the event's P, which is -1 when a GC worker leaves a syscall blocked.
func utilization(events []trace.Event, flags trace.UtilFlags) (mu [][]trace.MutatorUtil, panicked any) {
	defer func() { panicked = recover() }()
	return trace.MutatorUtilizationV2(events, flags), nil
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var windows []time.Duration
	for _, w := range strings.Split(os.Args[2], ",") {
		n, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		windows = append(windows, time.Duration(n))
	}
	r, err := trace.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var events []trace.Event
	s := trace.NewSummarizer()
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s.Event(&ev)
		events = append(events, ev)
	}
	result := map[string]any{}
	var utils []any
	for _, a := range os.Args[3:] {
		flags, err := strconv.Atoi(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		mu, panicked := utilization(events, trace.UtilFlags(flags))
		if panicked != nil {
			utils = append(utils, map[string]any{"flags": flags, "panic": fmt.Sprint(panicked)})
			continue
		}
		c := trace.NewMMUCurve(mu)
		var series [][][2]any
		for _, s := range mu {
			var pts [][2]any
			for _, u := range s {
				pts = append(pts, [2]any{u.Time, u.Util})
			}
			series = append(series, pts)
		}
		var mmus []float64
		for _, w := range windows {
			mmus = append(mmus, c.MMU(w))
		}
		utils = append(utils, map[string]any{"flags": flags, "series": series, "mmu": mmus, "curve": plot(mu, c)})
	}
	result["util"] = utils

	sum := s.Finalize()
	start, end := events[0].Time(), events[len(events)-1].Time()
	type taskStat struct {
		Count     int     `json:"count"`
		Durations []int64 `json:"durations"`
	}
	tasks := map[string]*taskStat{}
	for _, t := range sum.Tasks {
		ts := tasks[t.Name]
		if ts == nil {
			ts = &taskStat{Durations: []int64{}}
			tasks[t.Name] = ts
		}
		ts.Count++
		if t.Complete() {
			ts.Durations = append(ts.Durations, int64(t.End.Time().Sub(t.Start.Time())))
		}
	}
	regions := map[string][]int64{}
	for _, g := range sum.Goroutines {
		for _, rg := range g.Regions {
			b, e := start, end
			if rg.Start != nil {
				b = rg.Start.Time()
			}
			if rg.End != nil {
				e = rg.End.Time()
			}
			regions[rg.Name] = append(regions[rg.Name], int64(e.Sub(b)))
		}
	}
	result["tasks"], result["regions"] = tasks, regions
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	if err := json.NewEncoder(out).Encode(result); err != nil {
		panic(err)
	}
}
