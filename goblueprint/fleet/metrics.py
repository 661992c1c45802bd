"""The fleet report's numbers: SQL over the batch's views, with ``trace metrics``'s definitions.

Each is ``goblueprint.timeline.metrics``'s, per trace and over all traces:

* stop-the-world pauses by reason: the STW lane's intervals, by label (``pauses``), and the
  worst single pauses of the whole batch;
* scheduling latency (runnable -> running): every flow that started its goroutine,
  ``to_time - from_time`` (``sched_latency``), here also by the start function of the
  goroutine it started (the ``goroutines`` table's name, as ``trace metrics`` groups them);
* P utilization: per P, the time running a goroutine over the trace's duration
  (``proc_utilization``), then per trace the mean, least and most of its Ps;
* goroutines: how many the trace's summary holds (``trace metrics``' count) and the most
  alive at once (the ``goroutines`` counter's peak).

Percentiles are nearest-rank as there (the smallest value with at least p% at or below it),
computed in DuckDB from the sorted list, with the same float arithmetic.
"""

from __future__ import annotations

from typing import Any

from goblueprint.timeline.model import LaneKind, State

WORST = 10  # single pauses and traces listed as the worst

_P_LANE = int(LaneKind.P)
_STW_LANE = int(LaneKind.STW)
_P_RUNNING = int(State.P_RUNNING)

# metrics.percentile: rank = max(1, ceil(p / 100 * n)), 1-based, of the sorted values.
_MACROS = """
CREATE OR REPLACE MACRO _nearest(l, p) AS
    CASE WHEN len(l) = 0 THEN NULL ELSE list_sort(l)[greatest(1, ceil(p / 100 * len(l)))::BIGINT] END;
"""


def _dist(col: str) -> str:
    """metrics.distribution's fields, as SQL aggregates of COL."""
    return (
        f"count(*)::BIGINT AS count, sum({col})::BIGINT AS total, "
        f"_nearest(list({col}), 50) AS p50, _nearest(list({col}), 90) AS p90, "
        f"_nearest(list({col}), 99) AS p99, max({col})::BIGINT AS max"
    )


def _rows(con: Any, sql: str) -> list[dict[str, Any]]:
    rel = con.sql(sql)
    cols = rel.columns
    return [dict(zip(cols, row, strict=True)) for row in rel.fetchall()]


def _views(con: Any) -> None:
    con.execute(_MACROS)
    con.execute(
        f"""CREATE OR REPLACE TEMP VIEW _pauses AS
        SELECT trace, label AS reason, start, "end" - start AS d FROM intervals WHERE lane_kind = {_STW_LANE}"""
    )
    # Flows name the goroutine they start; its start function is the goroutines table's name.
    con.execute(
        """CREATE OR REPLACE TEMP VIEW _latency AS
        SELECT f.trace, coalesce(g.name, '') AS function, f.to_time - f.from_time AS d
        FROM flows f LEFT JOIN goroutines g ON g.trace = f.trace AND g.id = f.g
        WHERE f.to_time >= 0"""
    )
    con.execute(
        f"""CREATE OR REPLACE TEMP VIEW _procs AS
        SELECT i.trace, i.lane_id AS p,
               coalesce(sum("end" - start) FILTER (WHERE state = {_P_RUNNING} AND g >= 0), 0)::BIGINT
                   AS running_g,
               running_g / greatest(1, any_value(t.duration_ns)) AS utilization
        FROM intervals i JOIN traces t USING (trace)
        WHERE lane_kind = {_P_LANE} GROUP BY i.trace, i.lane_id"""
    )


def compute(con: Any, has: set[str]) -> dict[str, Any]:
    """The report of the traces registered in CON (``tables.register``); HAS: the views made."""
    failures = _rows(con, 'SELECT trace, error, "offset" FROM failures')
    out: dict[str, Any] = {"traces": [], "failures": failures}
    if not {"intervals", "flows", "goroutines", "metrics"} <= has:
        return out  # every trace failed before any table: nothing to measure
    _views(con)
    per_trace = _rows(
        con,
        f"""
        WITH g AS (SELECT trace, count(*)::BIGINT AS goroutines FROM goroutines GROUP BY trace),
        peak AS (SELECT trace, max(value)::BIGINT AS peak_goroutines FROM metrics
                 WHERE name = 'goroutines' GROUP BY trace),
        p AS (SELECT trace, count(*)::BIGINT AS procs, round(avg(utilization), 6) AS utilization,
                     round(min(utilization), 6) AS utilization_min, round(max(utilization), 6) AS utilization_max
              FROM _procs GROUP BY trace),
        s AS (SELECT trace, count(*)::BIGINT AS stw_count, sum(d)::BIGINT AS stw_total,
                     max(d)::BIGINT AS stw_max FROM _pauses GROUP BY trace),
        l AS (SELECT trace, {_dist("d")} FROM _latency GROUP BY trace)
        SELECT t.trace, t.go_version, t.duration_ns, t.events,
               coalesce(g.goroutines, 0) AS goroutines, peak.peak_goroutines,
               coalesce(p.procs, 0) AS procs, p.utilization, p.utilization_min, p.utilization_max,
               coalesce(s.stw_count, 0) AS stw_count, coalesce(s.stw_total, 0) AS stw_total, s.stw_max,
               coalesce(l.count, 0) AS latency_count, l.p50 AS latency_p50, l.p90 AS latency_p90,
               l.p99 AS latency_p99, l.max AS latency_max
        FROM traces t LEFT JOIN g USING (trace) LEFT JOIN peak USING (trace) LEFT JOIN p USING (trace)
             LEFT JOIN s USING (trace) LEFT JOIN l USING (trace)
        WHERE t.content IS NOT NULL ORDER BY t.trace
        """,
    )
    out["traces"] = per_trace
    out["pauses"] = {
        "by_reason": _rows(
            con,
            f"SELECT reason, contains(reason, 'GC') AS gc, count(DISTINCT trace)::BIGINT AS traces, "
            f"{_dist('d')} FROM _pauses GROUP BY reason ORDER BY reason",
        ),
        "per_trace": _rows(
            con,
            f"SELECT trace, reason, contains(reason, 'GC') AS gc, {_dist('d')} FROM _pauses "
            "GROUP BY trace, reason ORDER BY trace, reason",
        ),
        "worst": _rows(
            con,
            "SELECT p.trace, p.reason, p.start - t.start_ns AS at_ns, p.d AS duration_ns "
            f"FROM _pauses p JOIN traces t USING (trace) ORDER BY p.d DESC, p.trace, p.start LIMIT {WORST}",
        ),
    }
    out["sched_latency"] = {
        "all": _rows(con, f"SELECT {_dist('d')} FROM _latency")[0],
        "by_function": _rows(
            con,
            f"SELECT function, count(DISTINCT trace)::BIGINT AS traces, {_dist('d')} FROM _latency "
            "GROUP BY function ORDER BY count DESC, function",
        ),
        "per_trace": _rows(
            con,
            f"SELECT trace, function, {_dist('d')} FROM _latency GROUP BY trace, function "
            "ORDER BY trace, count DESC, function",
        ),
    }
    # Rounded as metrics.proc_utilization rounds, in Python, so the two agree to the digit.
    out["procs"] = [
        {**row, "utilization": round(row["utilization"], 6)}
        for row in _rows(con, "SELECT trace, p, running_g, utilization FROM _procs ORDER BY trace, p")
    ]
    out["all"] = _overall(con, per_trace)
    return out


def _overall(con: Any, per_trace: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over the batch, and the worst traces by each measure."""

    def worst(key: str, *, low: bool = False) -> list[dict[str, Any]]:
        have = [t for t in per_trace if t[key] is not None]
        have.sort(key=lambda t: (t[key] if low else -t[key], t["trace"]))
        return [{"trace": t["trace"], key: t[key]} for t in have[:WORST]]

    procs = _rows(
        con,
        "SELECT count(*)::BIGINT AS procs, round(avg(utilization), 6) AS utilization, "
        "round(min(utilization), 6) AS utilization_min, round(max(utilization), 6) AS utilization_max "
        "FROM _procs",
    )[0]
    return {
        "traces": len(per_trace),
        "events": sum(t["events"] for t in per_trace),
        "goroutines": sum(t["goroutines"] for t in per_trace),
        "stw_count": sum(t["stw_count"] for t in per_trace),
        "stw_total": sum(t["stw_total"] for t in per_trace),
        **procs,
        "worst": {
            "stw_max": worst("stw_max"),
            "stw_total": worst("stw_total"),
            "latency_p99": worst("latency_p99"),
            "utilization": worst("utilization", low=True),
        },
    }
