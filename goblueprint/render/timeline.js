// goblueprint timeline viewer: one self-contained page, no network, no innerHTML with data.
//
// The page embeds a JSON header (lanes, strings, stacks) and one binary blob of typed
// arrays (optionally gzip-compressed, decoded with the browser's DecompressionStream).
// Every lane keeps its spans sorted by start, so the visible window is found by binary
// search and spans narrower than a pixel are merged: drawing costs O(pixels * log n)
// per lane instead of O(spans), which keeps a million spans smooth.
//
// Levels of detail (goblueprint.timeline.detail): per lane, runs of time buckets, each
// with the state covering most of it and how much of it is covered.  Level k's buckets
// are width0 / fanout^k ns wide; a lane is drawn from the finest level whose buckets are
// at least a pixel wide, or from its exact spans once few enough of them are in view.
// A page holds the levels and exact spans its size bound allows (it says when a finer
// one is missing); the page of `goblueprint trace view` fetches them as tiles.
"use strict";
(function () {
  const LANE_H = 18, GROUP_H = 22, SUB_H = 18, COUNTER_H = 42, AXIS_H = 26, LABEL_W = 190;
  // A start-function group of goroutines with more members than this starts folded.
  const FOLD_ABOVE = 16;
  // Frames shown per stack in the hover tip (the pinned details show them all).
  const TIP_FRAMES = 12;
  // Keyed by state name (lower case), as goblueprint.timeline.model.STATE_NAMES spells them.
  const PALETTE = {
    running: "#2e9e5b", runnable: "#e3b23c", waiting: "#9aa7b8", syscall: "#d9534f",
    idle: "#d6dbe3", "stopped (stw)": "#b0243b", gc: "#8e5bd9", "stop-the-world": "#b0243b",
    "gc mark assist": "#a56de2", "gc sweep": "#b58edb", range: "#4a78c2", region: "#5aa0e6", task: "#3c7dbf",
  };
  const EXTRA = ["#4a78c2", "#e07b39", "#3aa6a0", "#c45ab3", "#7d9f35", "#a0522d", "#5f6caf", "#d4a017"];

  const S = {
    hdr: null, strings: [], lanes: [], counters: [], groups: [], flows: null,
    t0: 0, t1: 1, // visible window, ns relative to the trace origin
    scrollY: 0, rows: [], contentH: 0,
    subFolded: new Map(), // "group:function" -> folded? (start-function groups of goroutines)
    activity: new Map(), // folded group -> its goroutines' runs, for the header's activity strip
    ticks: [], axisBase: "", // what the time axis shows, for tests and tools
    filter: { gids: null, fn: "", state: -1, minDur: 0, search: "", flows: true },
    searchHits: null, strMatchFn: null, stateColors: [], pinned: null, hover: null,
    stats: { frames: 0, rects: 0, merged: 0, flows: 0, runs: 0, lastMs: 0, tiles: 0, flowTiles: 0 },
    drawn: new Map(), // lane index -> how it was last drawn: { mode: "exact" } or { mode: "level", k }
    coarse: 0, // lanes drawn coarser than the zoom asks (this page does not hold finer detail)
    served: false, inflight: null, extraStacks: [], strIndex: null,
    // The page of `trace view`: the window its arrows were fetched for, and the request out.
    flowsWin: null, flowsInflight: null, flowsNote: "",
    ready: false, error: null,
  };
  // Exposed for tests and for the curious: read-only use expected.
  window.__gbp = S;

  const $ = (id) => document.getElementById(id);
  const cv = $("cv"), tip = $("tip"), details = $("details"), vscroll = $("vscroll"), vspace = $("vspace");
  let ctx = null, dpr = 1, W = 0, H = 0, raf = 0;

  // ---------- formatting ----------
  function fmtDur(ns) {
    const a = Math.abs(ns);
    if (a < 1e3) return ns.toFixed(0) + " ns";
    if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 2 : 1) + " µs";
    if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 3 : 2) + " ms";
    return (ns / 1e9).toFixed(3) + " s";
  }
  // Time axis: ticks every STEP ns, labelled as offsets from BASE (the last tick at or
  // before the left edge), BASE itself written once in full.  Absolute labels would all
  // read "43.55 ms" in a 2 µs window; offsets stay distinct down to a few ns.
  const UNITS = [[1e9, "s"], [1e6, "ms"], [1e3, "µs"], [1, "ns"]];
  function fmtIn(ns, step) {
    const a = Math.abs(ns);
    const [mul, unit] = UNITS.find(([m]) => a >= m) || UNITS[3];
    const dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / mul) - 1e-9)));
    return (ns / mul).toFixed(dec) + " " + unit;
  }
  function fmtOffset(ns, step) {
    return ns === 0 ? "0" : "+" + fmtIn(ns, step);
  }
  // A point in the trace to the nanosecond (hover details, the visible range).
  function fmtTime(ns) {
    return fmtIn(Math.round(ns), 1);
  }
  function parseDur(text) {
    const m = /^\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)?\s*$/.exec(text);
    if (!m) return NaN;
    const mul = { ns: 1, us: 1e3, "µs": 1e3, ms: 1e6, s: 1e9 }[m[2] || "us"];
    return parseFloat(m[1]) * mul;
  }
  function parseGids(text) {
    if (!text.trim()) return null;
    const set = new Set();
    for (const part of text.split(/[\s,]+/)) {
      if (!part) continue;
      const m = /^(\d+)(?:-(\d+))?$/.exec(part);
      if (!m) return undefined;
      const a = +m[1], b = m[2] === undefined ? a : +m[2];
      if (b - a > 1e6) return undefined;
      for (let g = a; g <= b; g++) set.add(g);
    }
    return set;
  }

  // ---------- loading ----------
  function b64ToBytes(text) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text.trim());
    const bin = atob(text.trim());
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  async function inflate(bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }
  function view(buf, Type, off, n) {
    return new Type(buf, off, n);
  }

  async function load() {
    const hdr = JSON.parse($("gbp-header").textContent);
    let bytes = b64ToBytes($("gbp-blob").textContent);
    if (hdr.blob.codec === "gzip") bytes = await inflate(bytes);
    if (bytes.byteLength !== hdr.blob.size) throw new Error("timeline data is damaged");
    const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    S.hdr = hdr;
    S.strings = hdr.strings;
    S.groups = hdr.groups.map((g) => ({ name: g.name, kind: g.kind, collapsed: !!g.collapsed, n: 0 }));
    for (const st of hdr.states) {
      const key = st.toLowerCase();
      S.stateColors.push(PALETTE[key] || EXTRA[S.stateColors.length % EXTRA.length]);
    }
    // All lanes share one set of columns; a lane is a row range [lo, hi) of them.
    const col = (tab, name, Type) => view(buf, Type, tab.arrays[name], tab.n);
    const SP = hdr.spans, IN = hdr.instants, CO = hdr.samples, FL = hdr.flows;
    const sp = {
      start: col(SP, "start", Float64Array), end: col(SP, "end", Float64Array),
      label: col(SP, "label", Int32Array), stack: col(SP, "stack", Int32Array),
      endStack: col(SP, "end_stack", Int32Array),
      gid: col(SP, "gid", Int32Array), state: col(SP, "state", Uint8Array),
    };
    const inst = { t: col(IN, "time", Float64Array), label: col(IN, "label", Int32Array), stack: col(IN, "stack", Int32Array) };
    const D = hdr.detail;
    S.served = !!D.served;
    const levelCols = D.levels.map((T) => ({
      b0: col(T, "b0", Uint32Array), b1: col(T, "b1", Uint32Array), state: col(T, "state", Uint8Array), fill: col(T, "fill", Uint8Array),
    }));
    S.lanes = hdr.lanes.map((L, index) => {
      const lo = L.spans[0], hi = L.spans[1], il = L.instants[0], ih = L.instants[1];
      const lane = {
        index, group: L.group, name: L.name, gid: L.gid, fn: L.fn, n: hi - lo, ni: ih - il,
        total: L.total === undefined ? hi - lo : L.total,
        start: sp.start.subarray(lo, hi), end: sp.end.subarray(lo, hi),
        label: sp.label.subarray(lo, hi), stack: sp.stack.subarray(lo, hi), endStack: sp.endStack.subarray(lo, hi),
        sgid: sp.gid.subarray(lo, hi), state: sp.state.subarray(lo, hi),
        it: inst.t.subarray(il, ih), ilabel: inst.label.subarray(il, ih), istack: inst.stack.subarray(il, ih),
        // The window [a, b) (ns) its exact spans cover: the whole trace if the page holds them.
        exactWin: L.exact === false ? null : [-Infinity, Infinity],
        lod: (L.levels || []).map(([a, b], k) => {
          const C = levelCols[k];
          return makeLevel(k, -Infinity, Infinity, C.b0.subarray(a, b), C.b1.subarray(a, b), C.state.subarray(a, b), C.fill.subarray(a, b));
        }),
      };
      prepareLane(lane);
      S.groups[lane.group].n++;
      return lane;
    });
    const ct = col(CO, "time", Float64Array), cvv = col(CO, "value", Float64Array);
    S.counters = hdr.counters.map((C, index) => {
      const c = {
        index, group: C.group, lane: C.lane === undefined ? -1 : C.lane, name: C.name, unit: C.unit, n: C.samples[1] - C.samples[0],
        t: ct.subarray(C.samples[0], C.samples[1]), v: cvv.subarray(C.samples[0], C.samples[1]), max: 0,
      };
      for (let i = 0; i < c.n; i++) if (c.v[i] > c.max) c.max = c.v[i];
      S.groups[c.group].n++;
      if (c.lane >= 0) (S.lanes[c.lane].counters ||= []).push(c);
      return c;
    });
    S.flows = {
      n: FL.n, from: col(FL, "from", Float64Array), to: col(FL, "to", Float64Array),
      fromLane: col(FL, "from_lane", Int32Array), toLane: col(FL, "to_lane", Int32Array),
    };
    // Interned stacks: stack k is frames first[k] .. first[k+1]-1, each a (func, file, line).
    const ST = hdr.stacks;
    const first = view(buf, Uint32Array, ST.arrays.first, ST.n + 1);
    S.stackTable = {
      n: ST.n, first, frame: view(buf, Uint32Array, ST.arrays.frame, first[ST.n]),
      func: view(buf, Int32Array, ST.arrays.func, ST.frames), file: view(buf, Int32Array, ST.arrays.file, ST.frames),
      line: view(buf, Int32Array, ST.arrays.line, ST.frames),
    };
    for (const gi of S.groups.keys()) {
      if (S.groups[gi].kind !== "G") continue;
      const count = new Map();
      for (const lane of S.lanes) if (lane.group === gi && lane.fn >= 0) count.set(lane.fn, (count.get(lane.fn) || 0) + 1);
      for (const [fn, k] of count) if (k > FOLD_ABOVE) S.subFolded.set(gi + ":" + fn, true);
    }
    S.t0 = 0;
    S.t1 = Math.max(hdr.duration, 1);
  }
  // Frames of stack IDX as [func, file, line] strings/numbers, leaf first; [] for none.
  function stackFrames(idx) {
    const T = S.stackTable;
    if (T && idx >= T.n && idx - T.n < S.extraStacks.length) return S.extraStacks[idx - T.n];
    if (!T || idx < 0 || idx >= T.n) return [];
    const out = [];
    for (let k = T.first[idx]; k < T.first[idx + 1]; k++) {
      const f = T.frame[k];
      out.push([S.strings[T.func[f]], S.strings[T.file[f]], T.line[f]]);
    }
    return out;
  }

  // Level K's runs over the window [a, b) of the trace: buckets [b0, b1) with a state and a fill.
  function makeLevel(k, a, b, b0, b1, state, fill) {
    return { k, a, b, n: b0.length, b0, b1, state, fill, width: levelWidth(k) };
  }
  function levelWidth(k) {
    const D = S.hdr.detail;
    return D.width0 / Math.pow(D.fanout, k);
  }
  // Per-lane indexes: running max of ends (monotone, so binary-searchable even if spans
  // overlap), whether spans are disjoint (enables pixel skipping), state histogram.
  // A lane without its exact spans counts its states from its coarsest level instead.
  function prepareLane(lane) {
    const n = lane.n, cmax = new Float64Array(n);
    let m = -Infinity, disjoint = true, maxDur = 0;
    lane.states = new Uint32Array(256);
    for (let i = 0; i < n; i++) {
      if (lane.start[i] < m) disjoint = false;
      if (lane.end[i] > m) m = lane.end[i];
      cmax[i] = m;
      const d = lane.end[i] - lane.start[i];
      if (d > maxDur) maxDur = d;
      lane.states[lane.state[i]]++;
    }
    lane.cmax = cmax;
    lane.disjoint = disjoint;
    lane.maxDur = maxDur;
    if (lane.n < lane.total && lane.lod.length) {
      const L0 = lane.lod[0];
      for (let i = 0; i < L0.n; i++) lane.states[L0.state[i]]++;
      lane.maxDur = Infinity; // unknown without its spans: never hidden by "min dur"
    }
  }

  // First index whose value is >= x in a sorted array (lo..hi).
  function lowerBound(arr, x, lo, hi) {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (arr[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  // ---------- filters and layout ----------
  function spanFilterActive() {
    const f = S.filter;
    return f.state >= 0 || f.minDur > 0 || f.gids !== null || f.fn !== "";
  }
  function laneVisible(lane) {
    const f = S.filter, kind = S.groups[lane.group].kind;
    if (kind === "G") {
      if (f.gids && !f.gids.has(lane.gid)) return false;
      if (f.fn) {
        const name = (lane.name + " " + (lane.fn >= 0 ? S.strings[lane.fn] : "")).toLowerCase();
        if (!name.includes(f.fn)) return false;
      }
    }
    if (f.state >= 0 && lane.states[f.state] === 0) return false;
    if (f.minDur > 0 && lane.maxDur < f.minDur) return false;
    return true;
  }
  function spanPasses(lane, i) {
    const f = S.filter;
    if (f.state >= 0 && lane.state[i] !== f.state) return false;
    if (f.minDur > 0 && lane.end[i] - lane.start[i] < f.minDur) return false;
    if (f.gids && lane.sgid[i] >= 0 && !f.gids.has(lane.sgid[i])) return false;
    if (f.fn && S.strMatchFn && !S.strMatchFn[lane.label[i]] && S.groups[lane.group].kind !== "G") return false;
    return true;
  }
  // Goroutine lanes, grouped by start function as Go's goroutine analysis groups them:
  // a function with two or more goroutines gets a foldable header row with its count,
  // placed where its lowest goroutine id would be; a lone goroutine stays a plain lane.
  function withSubgroups(gi, members) {
    const byFn = new Map();
    for (const m of members) {
      const key = m.lane.fn;
      if (!byFn.has(key)) byFn.set(key, []);
      byFn.get(key).push(m);
    }
    const out = [];
    for (const [fn, list] of byFn) {
      if (fn < 0 || list.length < 2) { out.push(...list); continue; }
      const key = gi + ":" + fn;
      out.push({ type: "sub", gi, fn, key, count: list.length, members: list.map((m) => m.lane), folded: !!S.subFolded.get(key) });
      if (!S.subFolded.get(key)) for (const m of list) { m.indent = true; out.push(m); }
    }
    return out;
  }
  function layout() {
    const rows = [];
    let y = 0;
    S.groups.forEach((g, gi) => {
      let members = [];
      const showCounters = S.filter.state < 0 && !S.filter.gids;
      for (const lane of S.lanes) {
        if (lane.group !== gi || !laneVisible(lane)) continue;
        members.push({ type: "lane", lane });
        // A lane's own counters (a P's run-queue length) come right under it.
        if (showCounters && lane.counters) for (const c of lane.counters) members.push({ type: "counter", c });
      }
      for (const c of S.counters) if (c.group === gi && c.lane < 0 && showCounters) members.push({ type: "counter", c });
      if (members.length === 0) return;
      rows.push({ type: "group", gi, y, h: GROUP_H, count: members.length });
      y += GROUP_H;
      if (g.collapsed) return;
      if (g.kind === "G") members = withSubgroups(gi, members);
      for (const m of members) {
        m.y = y;
        m.h = m.type === "lane" ? LANE_H : m.type === "sub" ? SUB_H : COUNTER_H;
        rows.push(m);
        y += m.h;
      }
    });
    S.rows = rows;
    S.contentH = y;
    S.visibleLanes = rows.filter((r) => r.type === "lane").length;
    vspace.style.height = S.contentH + "px";
    clampScroll();
  }
  function clampScroll() {
    const maxY = Math.max(0, S.contentH - (H - AXIS_H));
    S.scrollY = Math.min(Math.max(0, S.scrollY), maxY);
    // The native scrollbar mirrors scrollY; its own scroll events come back through onScrollbar.
    if (Math.abs(vscroll.scrollTop - S.scrollY) >= 1) vscroll.scrollTop = S.scrollY;
  }
  function scrollBy(dy) {
    S.scrollY += dy;
    clampScroll();
    schedule();
  }

  // ---------- view transform ----------
  const plotW = () => Math.max(10, W - LABEL_W);
  const t2x = (t) => LABEL_W + ((t - S.t0) / (S.t1 - S.t0)) * plotW();
  const x2t = (x) => S.t0 + ((x - LABEL_W) / plotW()) * (S.t1 - S.t0);

  function setWindow(a, b) {
    const dur = Math.max(S.hdr.duration, 1);
    let span = Math.min(Math.max(b - a, 1000 / 1e3 * 10), dur * 1.2); // never below 10 ns
    let mid = (a + b) / 2;
    a = mid - span / 2;
    b = mid + span / 2;
    if (a < -dur * 0.1) { b += -dur * 0.1 - a; a = -dur * 0.1; }
    if (b > dur * 1.1) { a -= b - dur * 1.1; b = dur * 1.1; }
    S.t0 = a;
    S.t1 = b;
    schedule();
  }
  function zoomAt(x, factor) {
    const t = x2t(Math.max(LABEL_W, x));
    setWindow(t - (t - S.t0) * factor, t + (S.t1 - t) * factor);
  }
  function panBy(dxPixels) {
    const dt = (dxPixels / plotW()) * (S.t1 - S.t0);
    setWindow(S.t0 + dt, S.t1 + dt);
  }

  // ---------- drawing ----------
  function resize() {
    const r = cv.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    W = Math.max(1, Math.floor(r.width));
    H = Math.max(1, Math.floor(r.height));
    cv.width = Math.floor(W * dpr);
    cv.height = Math.floor(H * dpr);
    ctx = cv.getContext("2d", { alpha: false });
    clampScroll();
    schedule();
  }
  function schedule() {
    if (!raf) raf = requestAnimationFrame(draw);
  }
  function draw() {
    raf = 0;
    if (!S.ready || !ctx) return;
    const started = performance.now();
    const st = S.stats;
    st.rects = 0;
    st.merged = 0;
    st.flows = 0;
    st.runs = 0;
    S.coarse = 0;
    S.drawn.clear();
    S.wanted = [];
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#fcfcfd";
    ctx.fillRect(0, 0, W, H);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, W, H - AXIS_H);
    ctx.clip();
    const top = S.scrollY - AXIS_H;
    const lo = lowerBoundRows(S.scrollY);
    for (let r = lo; r < S.rows.length; r++) {
      const row = S.rows[r];
      const y = row.y - top;
      if (y > H) break;
      if (row.type === "group") drawGroup(row, y);
      else if (row.type === "sub") drawSub(row, y);
      else if (row.type === "lane") drawLane(row.lane, y, r, row.indent);
      else drawCounter(row.c, y);
    }
    if (S.filter.flows) drawFlows(top);
    drawHighlight(top);
    ctx.restore();
    drawAxis();
    st.frames++;
    st.lastMs = performance.now() - started;
    $("range").textContent = fmtTime(S.t0) + " – " + fmtTime(S.t1) + "  (" + fmtDur(S.t1 - S.t0) + " shown, " + S.visibleLanes + " lanes)";
    $("detail-note").textContent = detailNote();
    if (S.served) { requestTiles(); requestFlows(); }
  }
  function lowerBoundRows(y) {
    let lo = 0, hi = S.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const row = S.rows[mid];
      if (row.y + row.h <= y) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  function drawGroup(row, y) {
    const g = S.groups[row.gi];
    ctx.fillStyle = "#e8ebf1";
    ctx.fillRect(0, y, W, GROUP_H);
    ctx.fillStyle = "#1d2330";
    ctx.font = "600 12px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.fillText((g.collapsed ? "▸ " : "▾ ") + g.name + "  (" + row.count + ")", 6, y + GROUP_H / 2);
  }
  // How many goroutines of a folded start-function group run over time, as sorted run
  // starts and ends with prefix sums: the time integral of "goroutines running" up to x
  // is x * (starts <= x - ends <= x) - (sum of those starts - sum of those ends), so a
  // pixel column's average costs four binary searches whatever the number of goroutines.
  // Built once per group (and membership, which filters change), on first use.
  function groupActivity(row) {
    const key = row.key + "/" + row.members.length;
    let act = S.activity.get(key);
    if (act) return act;
    const running = S.runningState;
    let n = 0;
    for (const L of row.members) for (let i = 0; i < L.n; i++) if (L.state[i] === running) n++;
    const starts = new Float64Array(n), ends = new Float64Array(n);
    let k = 0;
    for (const L of row.members) for (let i = 0; i < L.n; i++) if (L.state[i] === running) { starts[k] = L.start[i]; ends[k++] = L.end[i]; }
    starts.sort();
    ends.sort();
    const ps = new Float64Array(n + 1), pe = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) { ps[i + 1] = ps[i] + starts[i]; pe[i + 1] = pe[i] + ends[i]; }
    act = { n, starts, ends, ps, pe };
    S.activity.set(key, act);
    return act;
  }
  function runningIntegral(act, x) {
    const i = lowerBound(act.starts, x, 0, act.n), j = lowerBound(act.ends, x, 0, act.n);
    return x * (i - j) - (act.ps[i] - act.pe[j]);
  }
  // A start-function header: its name, its count, and (folded) how many of its goroutines
  // run, averaged over each pair of pixel columns and scaled to the busiest one in view.
  function drawSub(row, y) {
    ctx.fillStyle = "#eef1f6";
    ctx.fillRect(0, y, W, SUB_H);
    ctx.fillStyle = "#2b3240";
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    const count = "×" + row.count;
    const cw = ctx.measureText(count).width;
    ctx.fillText(count, LABEL_W - 8 - cw, y + SUB_H / 2);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, y, LABEL_W - 14 - cw, SUB_H);
    ctx.clip();
    ctx.fillText((row.folded ? "▸ " : "▾ ") + S.strings[row.fn], 8, y + SUB_H / 2);
    ctx.restore();
    if (!row.folded || S.runningState < 0) return;
    const act = groupActivity(row);
    if (!act.n) return;
    const pw = plotW(), a = S.t0, dt = (S.t1 - S.t0) / pw, step = 2;
    const avg = new Float64Array(Math.ceil(pw / step));
    let peak = 0, prev = runningIntegral(act, a);
    for (let c = 0; c < avg.length; c++) {
      const next = runningIntegral(act, a + (c + 1) * step * dt);
      avg[c] = (next - prev) / (step * dt);
      prev = next;
      if (avg[c] > peak) peak = avg[c];
    }
    if (peak <= 0) return;
    ctx.fillStyle = S.stateColors[S.runningState];
    const full = SUB_H - 4;
    for (let c = 0; c < avg.length; c++) {
      if (avg[c] <= peak * 1e-3) continue;
      const h = Math.max(1, (full * avg[c]) / peak);
      ctx.fillRect(LABEL_W + c * step, y + SUB_H - 2 - h, step, h);
    }
  }
  function laneLabel(lane, y, striped, indent) {
    ctx.fillStyle = striped ? "#f4f6f9" : "#fcfcfd";
    ctx.fillRect(0, y, W, LANE_H);
    ctx.fillStyle = "#2b3240";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    const text = lane.name;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, y, LABEL_W - 6, LANE_H);
    ctx.clip();
    ctx.fillText(text, indent ? 24 : 14, y + LANE_H / 2);
    ctx.restore();
  }
  // ---------- levels of detail ----------
  // The finest level whose buckets are at least a pixel wide at this zoom.
  function wantLevel() {
    const D = S.hdr.detail, px = (S.t1 - S.t0) / plotW();
    const k = Math.floor(Math.log(D.width0 / px) / Math.log(D.fanout) + 1e-9);
    return Math.max(0, Math.min(D.count - 1, k));
  }
  const covers = (w, a, b) => w[0] <= a && b <= w[1];
  // How to draw LANE now: its exact spans when the page (or a tile) holds them for the
  // window and few enough are in view, else the finest level held that is not finer than
  // the zoom asks.  "short": the zoom asks for more detail than what is drawn.
  function lanePlan(lane) {
    const a = Math.max(S.t0, 0), b = Math.min(S.t1, S.hdr.duration), want = wantLevel();
    const exact = lane.exactWin !== null && covers(lane.exactWin, a, b);
    let best = null;
    for (let k = Math.min(want, lane.lod.length - 1); k >= 0; k--) {
      const lv = lane.lod[k];
      if (lv && lv.a <= a && b <= lv.b) { best = lv; break; }
    }
    // Finer than the finest level: only the exact spans say more.
    const D = S.hdr.detail, px = (S.t1 - S.t0) / plotW();
    const short = !best || best.k < want || (best.k === D.count - 1 && px * D.fanout < best.width);
    if (exact) {
      const i0 = lowerBound(lane.cmax, S.t0, 0, lane.n), i1 = lowerBound(lane.start, S.t1, i0, lane.n);
      if (short || i1 - i0 <= plotW() / 2) return { mode: "exact", want };
    }
    if (!best) return { mode: "none", want, short: lane.total > 0 };
    return { mode: "level", lv: best, want, short };
  }
  function detailNote() {
    const parts = [];
    if (S.served) {
      if (S.inflight) parts.push("loading detail…");
      if (S.tileError) parts.push("detail not loaded: " + S.tileError);
      if (S.flowsNote && S.filter.flows) parts.push(S.flowsNote);
    } else if (S.coarse) {
      parts.push(S.coarse + (S.coarse > 1 ? " lanes" : " lane") + " drawn coarser than this zoom: the page holds finer detail only up to its size bound (goblueprint trace view serves all of it)");
    }
    if (!S.served && S.hdr.flows_whole === false && S.filter.flows) parts.push("wake-up arrows only between lanes the page holds exactly");
    return parts.join(" · ");
  }
  // ---------- tiles (the page of `goblueprint trace view`) ----------
  function wantTile(lane, k) {
    S.wanted.push(lane.index);
  }
  // One request at a time, for the lanes on screen that want more detail: their spans (when
  // few enough in the window) or the level the zoom asks, over the view and half a view
  // either side so that a small pan needs nothing new.
  function requestTiles() {
    if (S.inflight || !S.wanted.length) return;
    const dur = S.hdr.duration, span = S.t1 - S.t0;
    const a = Math.max(0, Math.floor(S.t0 - span / 2)), b = Math.min(dur, Math.ceil(S.t1 + span / 2));
    const url = "tile?level=" + wantLevel() + "&from=" + a + "&to=" + b + "&lanes=" + S.wanted.slice(0, 64).join(",");
    S.asked ||= new Set();
    if (S.asked.has(url)) return;
    if (S.asked.size > 4096) S.asked.clear();
    S.asked.add(url);
    S.inflight = url;
    fetch(url)
      .then(async (r) => {
        const body = await r.json();
        if (!r.ok) throw new Error(body.error || r.statusText);
        applyTile(body);
        S.tileError = null;
      })
      .catch((err) => { S.tileError = String(err && err.message ? err.message : err); })
      .finally(() => { S.inflight = null; schedule(); });
  }
  // Wake-up arrows of the page of `trace view`: those of the view and a view before it
  // (drawFlows looks that far back), fetched again when the view leaves that window or
  // zooms far into it (a narrower window may hold few enough arrows to send).
  function requestFlows() {
    if (!S.filter.flows || S.flowsInflight) return;
    const dur = S.hdr.duration, span = S.t1 - S.t0;
    const a = Math.max(0, Math.floor(S.t0 - span)), b = Math.min(dur, Math.ceil(S.t1 + span / 2));
    const W = S.flowsWin;
    if (W && W[0] <= Math.max(0, S.t0 - span) && W[1] >= Math.min(dur, S.t1) && W[1] - W[0] <= 8 * span) return;
    if (!(a < b)) return;
    const url = "flows?from=" + a + "&to=" + b;
    S.flowsInflight = url;
    fetch(url)
      .then(async (r) => {
        const body = await r.json();
        if (!r.ok) throw new Error(body.error || r.statusText);
        const F = body.flows;
        if (F) {
          S.flows = {
            n: F.from.length, from: Float64Array.from(F.from), to: Float64Array.from(F.to),
            fromLane: Int32Array.from(F.from_lane), toLane: Int32Array.from(F.to_lane),
          };
          S.flowsNote = "";
        } else {
          S.flows = { n: 0, from: new Float64Array(0), to: new Float64Array(0), fromLane: new Int32Array(0), toLane: new Int32Array(0) };
          S.flowsNote = body.n + " wake-up arrows here: zoom in to see them";
        }
        S.flowsWin = [body.from, body.to];
        S.stats.flowTiles++;
      })
      .catch((err) => { S.flowsNote = "wake-up arrows not loaded: " + String(err && err.message ? err.message : err); S.flowsWin = [a, b]; })
      .finally(() => { S.flowsInflight = null; schedule(); });
  }
  function internString(text) {
    if (!S.strIndex) { S.strIndex = new Map(); S.strings.forEach((x, k) => S.strIndex.set(x, k)); }
    let k = S.strIndex.get(text);
    if (k === undefined) { k = S.strings.length; S.strings.push(text); S.strIndex.set(text, k); }
    return k;
  }
  function applyTile(T) {
    const sid = T.strings.map(internString);
    const base = (S.stackTable ? S.stackTable.n : 0) + S.extraStacks.length;
    for (const frames of T.stacks) S.extraStacks.push(frames);
    for (const L of T.lanes) {
      const lane = S.lanes[L.lane];
      if (!lane) continue;
      if (L.exact) {
        const E = L.exact;
        lane.start = Float64Array.from(E.start);
        lane.end = Float64Array.from(E.end);
        lane.label = Int32Array.from(E.label, (x) => (x >= 0 ? sid[x] : -1));
        lane.stack = Int32Array.from(E.stack, (x) => (x >= 0 ? base + x : -1));
        lane.endStack = Int32Array.from(E.end_stack, (x) => (x >= 0 ? base + x : -1));
        lane.sgid = Int32Array.from(E.gid);
        lane.state = Uint8Array.from(E.state);
        lane.n = lane.start.length;
        lane.exactWin = [T.from, T.to];
        prepareLane(lane);
      } else {
        const R = L.runs;
        lane.lod[T.level] = makeLevel(T.level, R.from, R.to, Uint32Array.from(R.b0), Uint32Array.from(R.b1), Uint8Array.from(R.state), Uint8Array.from(R.fill));
      }
    }
    S.stats.tiles++;
  }
  function drawLevel(lane, lv, y) {
    const a = S.t0, b = S.t1, scale = plotW() / (b - a), w = lv.width, y0 = y + 2, h = LANE_H - 4;
    let i = lowerBound(lv.b1, a / w + 1e-9, 0, lv.n);
    const filtered = S.filter.state >= 0;
    for (; i < lv.n; i++) {
      const s = lv.b0[i] * w;
      if (s > b) break;
      if (filtered && lv.state[i] !== S.filter.state) continue;
      const x0 = Math.max(LABEL_W - 1, LABEL_W + (s - a) * scale), x1 = Math.min(W + 1, LABEL_W + (lv.b1[i] * w - a) * scale);
      // A bucket partly covered (a goroutine created or ending inside it) is paler, not a full column.
      const f = lv.fill[i];
      ctx.globalAlpha = f === 255 ? 1 : 0.25 + (0.6 * f) / 255;
      ctx.fillStyle = S.stateColors[lv.state[i]] || "#888";
      ctx.fillRect(x0, y0, Math.max(1, x1 - x0), h);
      S.stats.runs++;
    }
    ctx.globalAlpha = 1;
  }
  function drawLane(lane, y, rowIndex, indent) {
    laneLabel(lane, y, rowIndex % 2 === 0, indent);
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, y, W - LABEL_W, LANE_H);
    ctx.clip();
    const plan = lanePlan(lane);
    S.drawn.set(lane.index, plan.mode === "level" ? { mode: "level", k: plan.lv.k, want: plan.want } : { mode: plan.mode, want: plan.want });
    if (plan.short) { S.coarse++; if (S.served) wantTile(lane, plan.want); }
    if (plan.mode !== "exact") {
      if (plan.mode === "level") drawLevel(lane, plan.lv, y);
      drawInstants(lane, y);
      ctx.restore();
      return;
    }
    const st = S.stats, n = lane.n, a = S.t0, b = S.t1;
    const scale = plotW() / (b - a);
    const filtered = spanFilterActive();
    const skip = lane.disjoint && !filtered;
    const y0 = y + 2, h = LANE_H - 4;
    let i = lowerBound(lane.cmax, a, 0, n);
    // Pending run of merged sub-pixel spans: [rx0, rx1) in pixels with one colour.
    let rx0 = -1, rx1 = -1, rcol = -1;
    const flush = () => {
      if (rx0 < 0) return;
      ctx.fillStyle = S.stateColors[rcol] || "#888";
      ctx.globalAlpha = 0.75;
      ctx.fillRect(rx0, y0, Math.max(1, rx1 - rx0), h);
      ctx.globalAlpha = 1;
      st.merged++;
      rx0 = -1;
    };
    while (i < n) {
      const s = lane.start[i];
      if (s > b) break;
      const e = lane.end[i];
      if (e < a || (filtered && !spanPasses(lane, i))) { i++; continue; }
      const x0 = LABEL_W + (s - a) * scale, x1 = LABEL_W + (e - a) * scale;
      const col = lane.state[i];
      if (x1 - x0 < 1) {
        if (rx0 >= 0 && x0 <= rx1 + 1 && (rcol === col || x1 - rx0 < 2)) {
          if (x1 > rx1) rx1 = x1;
        } else {
          flush();
          rx0 = Math.floor(x0); rx1 = Math.max(x1, rx0 + 1); rcol = col;
        }
        if (skip) {
          // Jump past every span that starts inside this pixel column: they merge anyway.
          // Spans are disjoint here, so only the last of them can reach past the column;
          // that one is drawn normally next.
          const colEnd = LABEL_W + Math.floor(x1 - LABEL_W) + 1;
          const next = a + (colEnd - LABEL_W) / scale;
          const from = i;
          const j = lowerBound(lane.start, next, i + 1, n);
          i = j > i + 1 && lane.end[j - 1] > next ? j - 1 : j;
          if (i - 1 > from) {
            const xe = LABEL_W + (lane.end[i - 1] - a) * scale;
            if (xe > rx1) rx1 = Math.min(xe, colEnd);
          }
          continue;
        }
        i++;
        continue;
      }
      flush();
      const cx0 = Math.max(x0, LABEL_W - 1), cx1 = Math.min(x1, W + 1);
      ctx.fillStyle = S.stateColors[col] || "#888";
      ctx.fillRect(cx0, y0, cx1 - cx0, h);
      st.rects++;
      // In-span text only when it says more than the colour does (not a bare "running").
      if (cx1 - cx0 > 40 && lane.label[i] >= 0 && S.strings[lane.label[i]] !== S.hdr.states[col]) {
        ctx.fillStyle = "#fff";
        ctx.font = "10px system-ui, sans-serif";
        ctx.textBaseline = "middle";
        ctx.save();
        ctx.beginPath();
        ctx.rect(cx0 + 2, y0, cx1 - cx0 - 4, h);
        ctx.clip();
        ctx.fillText(S.strings[lane.label[i]], cx0 + 3, y + LANE_H / 2);
        ctx.restore();
      }
      i++;
    }
    flush();
    drawInstants(lane, y);
    ctx.restore();
  }
  function drawInstants(lane, y) {
    if (lane.ni === 0 || S.filter.state >= 0) return;
    const a = S.t0, b = S.t1, scale = plotW() / (b - a);
    let i = lowerBound(lane.it, a, 0, lane.ni);
    let lastX = -10;
    ctx.fillStyle = "#1d2330";
    for (; i < lane.ni; i++) {
      const t = lane.it[i];
      if (t > b) break;
      const x = LABEL_W + (t - a) * scale;
      if (x - lastX < 3) {
        i = lowerBound(lane.it, a + (lastX + 3 - LABEL_W) / scale, i + 1, lane.ni) - 1;
        continue;
      }
      ctx.beginPath();
      ctx.moveTo(x, y + 1);
      ctx.lineTo(x + 3, y + 5);
      ctx.lineTo(x, y + 9);
      ctx.lineTo(x - 3, y + 5);
      ctx.fill();
      lastX = x;
    }
  }
  function drawCounter(c, y) {
    ctx.fillStyle = "#fcfcfd";
    ctx.fillRect(0, y, W, COUNTER_H);
    ctx.fillStyle = "#2b3240";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.fillText(c.name, 14, y + 12);
    ctx.fillStyle = "#6b7280";
    ctx.fillText("max " + fmtValue(c.max, c.unit), 14, y + 28);
    if (c.n === 0) return;
    const a = S.t0, b = S.t1, scale = plotW() / (b - a), h = COUNTER_H - 6, base = y + COUNTER_H - 2;
    const k = c.max > 0 ? h / c.max : 0;
    let i = Math.max(0, lowerBound(c.t, a, 0, c.n) - 1);
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, y, W - LABEL_W, COUNTER_H);
    ctx.clip();
    ctx.beginPath();
    ctx.moveTo(Math.max(LABEL_W, LABEL_W + (c.t[i] - a) * scale), base);
    let lastY = base;
    while (i < c.n) {
      const x = LABEL_W + (c.t[i] - a) * scale;
      // Per pixel column keep the maximum: peaks must survive zooming out.
      let v = c.v[i];
      let j = i + 1;
      const colEnd = a + (Math.floor(x - LABEL_W) + 1) / scale;
      while (j < c.n && c.t[j] < colEnd) { if (c.v[j] > v) v = c.v[j]; j++; }
      const yy = base - v * k;
      ctx.lineTo(x, lastY);
      ctx.lineTo(x, yy);
      lastY = yy;
      if (c.t[i] > b) break;
      i = j;
    }
    ctx.lineTo(W, lastY);
    ctx.lineTo(W, base);
    ctx.closePath();
    ctx.fillStyle = "rgba(74, 120, 194, 0.35)";
    ctx.fill();
    ctx.strokeStyle = "#4a78c2";
    ctx.stroke();
    ctx.restore();
  }
  function fmtValue(v, unit) {
    if (unit === "bytes") {
      if (v >= 1 << 30) return (v / (1 << 30)).toFixed(2) + " GiB";
      if (v >= 1 << 20) return (v / (1 << 20)).toFixed(2) + " MiB";
      if (v >= 1 << 10) return (v / (1 << 10)).toFixed(1) + " KiB";
      return v + " B";
    }
    return String(v);
  }
  function laneRowY(laneIndex) {
    if (!S.laneRowCache || S.laneRowCache.rows !== S.rows) {
      const m = new Map();
      for (const r of S.rows) if (r.type === "lane") m.set(r.lane.index, r.y);
      S.laneRowCache = { rows: S.rows, m };
    }
    return S.laneRowCache.m.get(laneIndex);
  }
  function drawFlows(top) {
    const F = S.flows;
    if (!F || F.n === 0) return;
    const a = S.t0, b = S.t1, scale = plotW() / (b - a);
    // Flows are sorted by source time; arrows are only worth drawing when they are few.
    // Count the ones that reach into the window (a busy stretch just before it must not
    // hide the arrows inside it).
    const i0 = lowerBound(F.from, a - (b - a), 0, F.n), i1 = lowerBound(F.from, b, i0, F.n);
    if (i1 - i0 > 100000) return;
    let shown = 0;
    for (let i = i0; i < i1; i++) if (F.to[i] >= a) shown++;
    if (shown > 3000) return;
    ctx.strokeStyle = "rgba(40, 40, 60, 0.55)";
    ctx.fillStyle = "rgba(40, 40, 60, 0.7)";
    ctx.lineWidth = 1;
    for (let i = i0; i < i1; i++) {
      if (F.to[i] < a) continue;
      const ya = laneRowY(F.fromLane[i]), yb = laneRowY(F.toLane[i]);
      if (ya === undefined || yb === undefined) continue;
      const x0 = LABEL_W + (F.from[i] - a) * scale, x1 = LABEL_W + (F.to[i] - a) * scale;
      const y0 = ya - top + LANE_H / 2, y1 = yb - top + LANE_H / 2;
      if ((y0 < AXIS_H && y1 < AXIS_H) || (y0 > H && y1 > H)) continue;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.bezierCurveTo(x0 + 20, y0, x1 - 20, y1, x1, y1);
      ctx.stroke();
      ctx.beginPath();
      ctx.arc(x1, y1, 2, 0, 2 * Math.PI);
      ctx.fill();
      S.stats.flows++;
    }
  }
  function drawHighlight(top) {
    const sel = S.pinned || S.hover;
    if (!sel || sel.kind !== "span") return;
    const y = laneRowY(sel.lane.index);
    if (y === undefined) return;
    const x0 = t2x(sel.lane.start[sel.i]), x1 = t2x(sel.lane.end[sel.i]);
    ctx.strokeStyle = "#111";
    ctx.lineWidth = 1.5;
    ctx.strokeRect(Math.max(LABEL_W, x0) - 0.5, y - top + 1, Math.max(2, Math.min(W, x1) - Math.max(LABEL_W, x0)) + 1, LANE_H - 2);
  }
  function niceStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function drawAxis() {
    ctx.fillStyle = "#f1f3f7";
    ctx.fillRect(0, 0, W, AXIS_H);
    ctx.strokeStyle = "#d9dde5";
    ctx.beginPath();
    ctx.moveTo(0, AXIS_H - 0.5);
    ctx.lineTo(W, AXIS_H - 0.5);
    ctx.stroke();
    const step = niceStep(((S.t1 - S.t0) / plotW()) * 110);
    const base = Math.floor(S.t0 / step) * step;
    ctx.fillStyle = "#4b5563";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    const ticks = [];
    for (let k = 1; base + k * step <= S.t1; k++) {
      const t = base + k * step, x = t2x(t);
      if (x < LABEL_W) continue;
      const text = fmtOffset(k * step, step);
      ctx.fillRect(x, AXIS_H - 7, 1, 7);
      ctx.fillText(text, x + 3, AXIS_H / 2 - 2);
      ticks.push({ x, t, text });
    }
    S.ticks = ticks;
    S.axisBase = fmtIn(base, step);
    ctx.fillStyle = "#f1f3f7";
    ctx.fillRect(0, 0, LABEL_W, AXIS_H - 1);
    ctx.fillStyle = "#1d2330";
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.fillText("from " + S.axisBase, 8, AXIS_H / 2 - 2);
  }

  // ---------- picking and details ----------
  function rowAt(y) {
    const cy = y - AXIS_H + S.scrollY;
    const r = lowerBoundRows(cy + 0.0001);
    if (r < S.rows.length) {
      const row = S.rows[r];
      if (row.y <= cy && cy < row.y + row.h) return row;
    }
    return null;
  }
  function pick(x, y) {
    if (y < AXIS_H) return null;
    const row = rowAt(y);
    if (!row) return null;
    if (row.type === "group") return { kind: "group", row };
    if (row.type === "sub") return { kind: "sub", row };
    if (row.type === "counter") {
      const c = row.c, t = x2t(x);
      const i = lowerBound(c.t, t, 0, c.n) - 1;
      return i >= 0 ? { kind: "counter", c, i } : null;
    }
    if (x < LABEL_W) return { kind: "lane", lane: row.lane };
    const lane = row.lane, t = x2t(x), slop = (3 * (S.t1 - S.t0)) / plotW();
    // Instants first: they are tiny, so give them a few pixels of slack.
    if (lane.ni) {
      const k = lowerBound(lane.it, t - slop, 0, lane.ni);
      if (k < lane.ni && lane.it[k] <= t + slop) return { kind: "instant", lane, i: k };
    }
    const drawn = S.drawn.get(lane.index);
    if (drawn && drawn.mode === "none") return { kind: "lane", lane };
    if (drawn && drawn.mode === "level") {
      const lv = lane.lod[drawn.k], b = t / lv.width;
      const i = lowerBound(lv.b1, b + 1e-9, 0, lv.n);
      return i < lv.n && lv.b0[i] <= b ? { kind: "run", lane, lv, i } : { kind: "lane", lane };
    }
    let best = -1, bestDist = Infinity;
    let i = lowerBound(lane.cmax, t - slop, 0, lane.n);
    for (; i < lane.n && lane.start[i] <= t + slop; i++) {
      if (spanFilterActive() && !spanPasses(lane, i)) continue;
      const s = lane.start[i], e = lane.end[i];
      const d = t < s ? s - t : t > e ? t - e : 0;
      if (d < bestDist || (d === bestDist && d === 0)) { best = i; bestDist = d; }
      if (i - best > 64 && bestDist === 0) break;
    }
    return best >= 0 ? { kind: "span", lane, i: best } : { kind: "lane", lane };
  }
  function addLine(parent, cls, text) {
    const d = document.createElement("div");
    if (cls) d.className = cls;
    d.textContent = text;
    parent.appendChild(d);
    return d;
  }
  function addStack(parent, idx, title, limit) {
    const fr = stackFrames(idx);
    if (!fr.length) return;
    addLine(parent, "h", title);
    for (const [fn, file, line] of fr.slice(0, limit)) {
      addLine(parent, "fr", fn);
      addLine(parent, "fl", file + ":" + line);
    }
    if (fr.length > limit) addLine(parent, "fl", "… " + (fr.length - limit) + " more frames");
  }
  function describe(target, into, limit = 1000) {
    into.replaceChildren();
    if (!target) return false;
    if (target.kind === "span") {
      const L = target.lane, i = target.i;
      addLine(into, "h", (L.label[i] >= 0 ? S.strings[L.label[i]] : S.hdr.states[L.state[i]]));
      addLine(into, "", L.name + " · " + S.hdr.states[L.state[i]]);
      addLine(into, "", "start " + fmtTime(L.start[i]) + " · duration " + fmtDur(L.end[i] - L.start[i]));
      if (L.sgid[i] >= 0) addLine(into, "", "goroutine " + L.sgid[i]);
      if (S.hdr.states[L.state[i]] === "running") {
        // Go records no stack when a goroutine starts running: it resumes where it last
        // stopped (or, new, at its start function), and stops where the next span begins.
        addStack(into, L.stack[i], "stack at start (where it resumed)", limit);
        addStack(into, L.endStack[i], "stack at end (where it stopped)", limit);
      } else {
        addStack(into, L.stack[i], "stack", limit);
      }
      return true;
    }
    if (target.kind === "run") {
      const L = target.lane, lv = target.lv, i = target.i, name = S.hdr.states[lv.state[i]];
      addLine(into, "h", name);
      addLine(into, "", L.name + " · mostly " + name + " from " + fmtTime(lv.b0[i] * lv.width) + " to " + fmtTime(lv.b1[i] * lv.width));
      addLine(into, "", Math.round(lv.fill[i] / 2.55) + "% of the time covered · level " + lv.k + " of " + (S.hdr.detail.count - 1) + ", buckets of " + fmtDur(lv.width));
      addLine(into, "", "zoom in for its " + (L.total === 1 ? "span" : "spans") + (S.served ? "" : L.exactWin ? "" : " (not held by this page: goblueprint trace view)"));
      return true;
    }
    if (target.kind === "instant") {
      const L = target.lane, i = target.i;
      addLine(into, "h", L.ilabel[i] >= 0 ? S.strings[L.ilabel[i]] : "event");
      addLine(into, "", L.name + " · at " + fmtTime(L.it[i]));
      addStack(into, L.istack[i], "stack", limit);
      return true;
    }
    if (target.kind === "counter") {
      const c = target.c;
      addLine(into, "h", c.name);
      addLine(into, "", fmtValue(c.v[target.i], c.unit) + " at " + fmtTime(c.t[target.i]));
      return true;
    }
    if (target.kind === "lane") {
      const L = target.lane;
      addLine(into, "h", L.name);
      addLine(into, "", L.total + " spans, " + L.ni + " events");
      return true;
    }
    return false;
  }
  function showTip(target, mx, my) {
    if (!describe(target, tip, TIP_FRAMES)) { tip.hidden = true; return; }
    tip.hidden = false;
    const vw = cv.clientWidth, vh = cv.clientHeight;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.max(0, Math.min(mx + 14, vw - w - 4)) + "px";
    tip.style.top = Math.max(0, Math.min(my + 14, vh - h - 4)) + "px";
  }

  // ---------- search ----------
  function runSearch() {
    const q = S.filter.search;
    S.searchHits = null;
    const info = $("search-info");
    if (!q) { info.textContent = ""; schedule(); return; }
    const hit = new Uint8Array(S.strings.length);
    S.strings.forEach((s, k) => { if (String(s).toLowerCase().includes(q)) hit[k] = 1; });
    const hits = [];
    for (const lane of S.lanes) {
      let first = -1, count = 0;
      for (let i = 0; i < lane.n; i++) {
        const lb = lane.label[i];
        if (lb >= 0 && hit[lb]) { if (first < 0) first = i; count++; }
      }
      for (let i = 0; i < lane.ni; i++) if (lane.ilabel[i] >= 0 && hit[lane.ilabel[i]]) count++;
      if (lane.fn >= 0 && hit[lane.fn] && first < 0 && lane.n) first = 0;
      if (count || (lane.fn >= 0 && hit[lane.fn])) hits.push({ lane, first, count });
    }
    S.searchHits = { hits, pos: -1 };
    const total = hits.reduce((acc, h) => acc + h.count, 0);
    info.textContent = total + " matches in " + hits.length + " lanes";
    if (S.served) searchServer(q);
    schedule();
  }
  // The page of `trace view` holds no spans: the server searches the goroutines (their
  // block reasons, start functions, ids) and its hits join the page's own, a goroutine's
  // lane once.  An answer to a text no longer in the box is dropped.
  function searchServer(q) {
    S.searchAsked = q;
    fetch("search?q=" + encodeURIComponent(q))
      .then(async (r) => {
        const body = await r.json();
        if (!r.ok) throw new Error(body.error || r.statusText);
        if (S.searchAsked !== q || !S.searchHits) return;
        const sh = S.searchHits, have = new Set(sh.hits.map((h) => h.lane.index));
        for (const g of body.hits) {
          const lane = S.lanes[g.lane];
          if (!lane || have.has(g.lane)) continue;
          sh.hits.push({ lane, first: -1, count: 1, win: [g.from, g.to] });
        }
        const total = sh.hits.reduce((acc, h) => acc + h.count, 0);
        $("search-info").textContent = total + " matches in " + sh.hits.length + " lanes (" + body.n + " goroutines on the server" + (body.n > body.hits.length ? ", " + body.hits.length + " shown" : "") + ")";
        S.stats.searches = (S.stats.searches || 0) + 1;
      })
      .catch((err) => { $("search-info").textContent = "search not answered: " + String(err && err.message ? err.message : err); })
      .finally(schedule);
  }
  // Unfold whatever hides LANE (its group, its start-function group) so it gets a row.
  function reveal(lane) {
    if (laneRowY(lane.index) !== undefined) return;
    S.groups[lane.group].collapsed = false;
    S.subFolded.delete(lane.group + ":" + lane.fn);
    layout();
  }
  function nextSearchHit() {
    const sh = S.searchHits;
    if (!sh || !sh.hits.length) return;
    sh.pos = (sh.pos + 1) % sh.hits.length;
    const h = sh.hits[sh.pos];
    reveal(h.lane);
    const y = laneRowY(h.lane.index);
    if (y !== undefined) S.scrollY = y - (H - AXIS_H) / 3;
    clampScroll();
    if (h.first >= 0) {
      const s = h.lane.start[h.first], e = h.lane.end[h.first], pad = Math.max((e - s) * 4, 1000);
      setWindow(s - pad, e + pad);
      S.pinned = { kind: "span", lane: h.lane, i: h.first };
      describe(S.pinned, details);
    } else if (h.win && h.win[1] > h.win[0]) {
      setWindow(h.win[0], h.win[1]); // a server hit: the goroutine's life
    }
    schedule();
  }

  // ---------- events ----------
  function applyFilters() {
    const f = S.filter;
    const gidEl = $("f-gid"), durEl = $("f-mindur");
    const gids = parseGids(gidEl.value);
    gidEl.classList.toggle("bad", gids === undefined);
    f.gids = gids === undefined ? null : gids;
    f.fn = $("f-fn").value.trim().toLowerCase();
    f.state = $("f-state").value === "" ? -1 : +$("f-state").value;
    const md = durEl.value.trim() ? parseDur(durEl.value) : 0;
    durEl.classList.toggle("bad", Number.isNaN(md));
    f.minDur = Number.isNaN(md) ? 0 : md;
    f.flows = $("f-flows").checked;
    S.strMatchFn = null;
    if (f.fn) {
      S.strMatchFn = new Uint8Array(S.strings.length);
      S.strings.forEach((s, k) => { if (String(s).toLowerCase().includes(f.fn)) S.strMatchFn[k] = 1; });
    }
    S.pinned = null;
    layout();
    schedule();
  }
  // ---------- keys: one table drives both the handler and the help ----------
  // Conventions of Perfetto and chrome://tracing: W/S zoom, A/D pan; arrows pan and scroll.
  const mid = () => LABEL_W + plotW() / 2;
  const KEYS = [
    { keys: ["w", "+", "="], what: "zoom in", run: () => zoomAt(mid(), 0.7) },
    { keys: ["s", "-"], what: "zoom out", run: () => zoomAt(mid(), 1 / 0.7) },
    { keys: ["a", "ArrowLeft"], what: "pan left", run: () => panBy(-plotW() * 0.15) },
    { keys: ["d", "ArrowRight"], what: "pan right", run: () => panBy(plotW() * 0.15) },
    { keys: ["ArrowUp"], what: "scroll lanes up", run: () => scrollBy(-LANE_H * 3) },
    { keys: ["ArrowDown"], what: "scroll lanes down", run: () => scrollBy(LANE_H * 3) },
    { keys: ["PageUp"], what: "scroll lanes a page up", run: () => scrollBy(-(H - AXIS_H) * 0.9) },
    { keys: ["PageDown"], what: "scroll lanes a page down", run: () => scrollBy((H - AXIS_H) * 0.9) },
    { keys: ["f"], what: "zoom to the selected span", run: fitSelection },
    { keys: ["0"], what: "show the whole trace", run: () => setWindow(0, S.hdr.duration) },
    { keys: ["Escape"], what: "clear the selection", run: clearSelection },
    { keys: ["?"], what: "show or hide this help", run: toggleHelp },
  ];
  const MOUSE = [
    ["wheel", "scroll lanes"],
    ["ctrl/⌘ + wheel", "zoom at the pointer"],
    ["shift + wheel, drag", "pan"],
    ["hover / click", "details / pin them"],
    ["click a header", "fold or unfold its lanes"],
  ];
  const KEY_NAMES = { ArrowLeft: "←", ArrowRight: "→", ArrowUp: "↑", ArrowDown: "↓", Escape: "Esc", PageUp: "PgUp", PageDown: "PgDn" };
  const keyName = (k) => KEY_NAMES[k] || (k.length === 1 ? k.toUpperCase() : k);
  const KEY_MAP = new Map();
  for (const entry of KEYS) for (const k of entry.keys) KEY_MAP.set(k, entry);
  function keyEntry(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return undefined;
    return KEY_MAP.get(ev.key) || KEY_MAP.get(ev.key.toLowerCase());
  }
  function fitSelection() {
    const sel = S.pinned || S.hover;
    if (!sel || sel.kind !== "span") return;
    const s = sel.lane.start[sel.i], e = sel.lane.end[sel.i], pad = Math.max((e - s) * 0.1, 5);
    setWindow(s - pad, e + pad);
  }
  function clearSelection() {
    S.pinned = null;
    details.textContent = "nothing selected";
    schedule();
  }
  function toggleHelp() {
    $("help").hidden = !$("help").hidden;
  }
  // The help panel and the one-line hint, written from KEYS and MOUSE only.
  function buildHelp() {
    const list = $("help-keys");
    for (const entry of KEYS) {
      const li = document.createElement("li");
      const k = document.createElement("span");
      k.className = "keys";
      k.textContent = entry.keys.map(keyName).join(" ");
      li.appendChild(k);
      li.appendChild(document.createTextNode(entry.what));
      list.appendChild(li);
    }
    const mouse = $("help-mouse");
    for (const [what, does] of MOUSE) {
      const li = document.createElement("li");
      const k = document.createElement("span");
      k.className = "keys";
      k.textContent = what;
      li.appendChild(k);
      li.appendChild(document.createTextNode(does));
      mouse.appendChild(li);
    }
    const short = KEYS.filter((e) => /^(zoom (in|out)|pan )/.test(e.what) || e.keys.includes("?"));
    $("hint").textContent = "hover a span for details, click to pin · " +
      MOUSE.slice(0, 3).map(([w, d]) => w + ": " + d).join(" · ") + " · " +
      short.map((e) => e.keys.map(keyName).join("/") + ": " + e.what).join(" · ");
  }

  function onClick(d) {
    const target = pick(d.x, d.y);
    if (target && target.kind === "group") {
      const g = S.groups[target.row.gi];
      g.collapsed = !g.collapsed;
      layout();
      schedule();
      return;
    }
    if (target && target.kind === "sub") {
      S.subFolded.set(target.row.key, !target.row.folded);
      layout();
      schedule();
      return;
    }
    S.pinned = target && target.kind !== "lane" ? target : null;
    if (!describe(S.pinned, details)) details.textContent = "nothing selected";
    schedule();
  }
  function bind() {
    for (const id of ["f-gid", "f-fn", "f-mindur"]) $(id).addEventListener("input", applyFilters);
    $("f-state").addEventListener("change", applyFilters);
    $("f-flows").addEventListener("change", applyFilters);
    $("f-search").addEventListener("input", () => { S.filter.search = $("f-search").value.trim().toLowerCase(); runSearch(); });
    $("f-search").addEventListener("keydown", (ev) => { if (ev.key === "Enter") nextSearchHit(); });
    $("b-reset").addEventListener("click", () => setWindow(0, S.hdr.duration));
    $("b-help").addEventListener("click", toggleHelp);
    $("help").addEventListener("click", toggleHelp);
    window.addEventListener("resize", resize);
    vscroll.addEventListener("scroll", () => {
      if (Math.abs(vscroll.scrollTop - S.scrollY) < 1) return;
      S.scrollY = vscroll.scrollTop;
      clampScroll();
      schedule();
    });

    let drag = null;
    cv.addEventListener("mousedown", (ev) => {
      cv.focus();
      drag = { x: ev.offsetX, y: ev.offsetY, t0: S.t0, t1: S.t1, sy: S.scrollY, moved: false };
    });
    window.addEventListener("mouseup", () => {
      if (!drag) return;
      const d = drag;
      drag = null;
      cv.classList.remove("dragging");
      if (!d.moved) onClick(d);
    });
    cv.addEventListener("mousemove", (ev) => {
      if (drag) {
        const dx = ev.offsetX - drag.x, dy = ev.offsetY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          cv.classList.add("dragging");
          tip.hidden = true;
          const dt = (dx / plotW()) * (drag.t1 - drag.t0);
          S.t0 = drag.t0 - dt;
          S.t1 = drag.t1 - dt;
          S.scrollY = drag.sy - dy;
          clampScroll();
          schedule();
        }
        return;
      }
      const target = pick(ev.offsetX, ev.offsetY);
      const same = target && S.hover && target.kind === S.hover.kind && target.i === S.hover.i && target.lane === S.hover.lane;
      S.hover = target;
      if (target && target.kind !== "group" && target.kind !== "sub") showTip(target, ev.offsetX, ev.offsetY);
      else tip.hidden = true;
      if (!same) schedule();
    });
    cv.addEventListener("mouseleave", () => { tip.hidden = true; S.hover = null; schedule(); });
    // Wheel as in Perfetto and every browser page: it scrolls; ctrl/⌘ + wheel (and a
    // touchpad pinch, which browsers report as ctrl + wheel) zooms at the pointer;
    // shift + wheel or a sideways wheel pans.
    cv.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const unit = ev.deltaMode === 1 ? 30 : ev.deltaMode === 2 ? H : 1;
      let dx = ev.deltaX * unit, dy = ev.deltaY * unit;
      if (ev.ctrlKey || ev.metaKey) {
        zoomAt(ev.offsetX, Math.exp(dy * 0.0022));
        return;
      }
      if (ev.shiftKey && dx === 0) { dx = dy; dy = 0; }
      if (dx) panBy(dx);
      if (dy) scrollBy(dy);
    }, { passive: false });
    window.addEventListener("keydown", (ev) => {
      if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT")) return;
      const entry = keyEntry(ev);
      if (!entry) return;
      entry.run();
      S.lastKey = entry.what;
      ev.preventDefault();
    });
  }

  // Where span I of lane L is on screen (CSS pixels in the canvas), for tests and tools.
  function locate(laneIndex, i) {
    const y = laneRowY(laneIndex);
    const lane = S.lanes[laneIndex];
    if (y === undefined || !lane || i >= lane.n) return null;
    const x0 = Math.max(LABEL_W, t2x(lane.start[i])), x1 = Math.min(W, t2x(lane.end[i]));
    return { x: (x0 + x1) / 2, y: y - S.scrollY + AXIS_H + LANE_H / 2, visible: x1 > x0 };
  }
  // The key table as the handler uses it, for tests and tools.
  const keyTable = () => KEYS.map((e) => ({ keys: e.keys.slice(), names: e.keys.map(keyName), what: e.what }));
  // Top of lane I's row on screen (CSS pixels in the canvas), undefined when it has no row.
  function laneY(i) {
    const y = laneRowY(i);
    return y === undefined ? undefined : y - S.scrollY + AXIS_H;
  }
  S.api = { locate, setWindow, layout, keyTable, stackFrames, laneY, t2x, wantLevel, levelWidth };

  async function main() {
    try {
      await load();
    } catch (err) {
      S.error = String(err && err.message ? err.message : err);
      const box = $("loading");
      box.classList.add("err");
      box.textContent = "cannot show this timeline: " + S.error;
      return;
    }
    $("title").textContent = S.hdr.title;
    $("title").title = S.hdr.title;
    const sel = $("f-state");
    S.hdr.states.forEach((name, k) => {
      const o = document.createElement("option");
      o.value = String(k);
      o.textContent = name;
      sel.appendChild(o);
    });
    // Legend: one swatch per state actually present in the trace.
    const present = new Uint32Array(256);
    for (const lane of S.lanes) for (let k = 0; k < 256; k++) present[k] += lane.states[k];
    const legend = $("legendbar");
    S.hdr.states.forEach((name, k) => {
      if (!present[k]) return;
      const item = document.createElement("span");
      const sw = document.createElement("span");
      sw.className = "sw";
      sw.style.background = S.stateColors[k];
      item.appendChild(sw);
      item.appendChild(document.createTextNode(name));
      legend.appendChild(item);
    });
    S.runningState = S.hdr.states.indexOf("running");
    buildHelp();
    bind();
    S.ready = true;
    layout();
    resize();
    $("loading").classList.add("gone");
  }
  main();
})();
