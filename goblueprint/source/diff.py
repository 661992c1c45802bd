"""What changed in the scheduler between two releases: states, transitions, structs, functions."""

from __future__ import annotations

from collections import Counter
from typing import Any

from goblueprint.source import states, tables

_RENAME_MIN_SIMILARITY = 0.6


def _transition_key(t: states.Transition) -> tuple[str, str, str, str, bool]:
    # Lines move between releases; a transition is the same when its ends, function and mechanism are.
    return (t.src, t.dst, t.function, t.mechanism, t.indirect)


def _transitions(a: states.Blueprint, b: states.Blueprint) -> dict[str, list[dict[str, Any]]]:
    def grouped(bp: states.Blueprint) -> dict[tuple, list[states.Transition]]:
        out: dict[tuple, list[states.Transition]] = {}
        for t in bp.transitions:
            out.setdefault(_transition_key(t), []).append(t)
        return out

    ga, gb = grouped(a), grouped(b)
    return {
        "added": [t.as_json() for k in sorted(gb.keys() - ga.keys()) for t in gb[k]],
        "removed": [t.as_json() for k in sorted(ga.keys() - gb.keys()) for t in ga[k]],
    }


def _structs(fa: dict[str, Any], fb: dict[str, Any]) -> dict[str, Any]:
    sa = {s["name"]: s for s in fa["structs"]}
    sb = {s["name"]: s for s in fb["structs"]}
    changed = {}
    for name in sorted(sa.keys() & sb.keys()):
        fields_a = {f["name"]: f["type"] for f in sa[name]["fields"]}
        fields_b = {f["name"]: f["type"] for f in sb[name]["fields"]}
        added = [{"name": n, "type": fields_b[n]} for n in fields_b if n not in fields_a]
        removed = [{"name": n, "type": fields_a[n]} for n in fields_a if n not in fields_b]
        retyped = [
            {"name": n, "from": fields_a[n], "to": fields_b[n]}
            for n in fields_a
            if n in fields_b and fields_a[n] != fields_b[n]
        ]
        if added or removed or retyped:
            changed[name] = {"added": added, "removed": removed, "retyped": retyped}
    return {
        "added": sorted(sb.keys() - sa.keys()),
        "removed": sorted(sa.keys() - sb.keys()),
        "changed": changed,
    }


def _sched_funcs(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f["name"]: f
        for f in facts["funcs"]
        if f["file"].rsplit("/", 1)[-1] in tables.SCHED_FILES and f["file"].startswith("src/runtime/")
    }


def _similarity(a: dict[str, Any], b: dict[str, Any]) -> float:
    ca, cb = Counter(c["callee"] for c in a["calls"]), Counter(c["callee"] for c in b["calls"])
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union if union else 0.0


def _functions(fa: dict[str, Any], fb: dict[str, Any]) -> dict[str, Any]:
    a, b = _sched_funcs(fa), _sched_funcs(fb)
    removed = sorted(a.keys() - b.keys())
    added = sorted(b.keys() - a.keys())
    renamed = []
    # A removed and an added function of the same file whose calls mostly agree: a rename.
    candidates = sorted(
        ((_similarity(a[r], b[n]), r, n) for r in removed for n in added
         if a[r]["file"] == b[n]["file"] and len(a[r]["params"]) == len(b[n]["params"])),
        reverse=True,
    )  # fmt: skip
    used: set[str] = set()
    for score, r, n in candidates:
        if score < _RENAME_MIN_SIMILARITY or r in used or n in used:
            continue
        used |= {r, n}
        renamed.append({"from": r, "to": n, "file": b[n]["file"], "similarity": round(score, 3)})
    renamed.sort(key=lambda x: x["from"])
    return {
        "added": [n for n in added if n not in used],
        "removed": [r for r in removed if r not in used],
        "renamed": renamed,
    }


def state_changes(a: states.Blueprint, b: states.Blueprint) -> dict[str, Any]:
    """States added and removed from A to B; a removed state whose value a new name took is renamed."""
    na, nb = a.state_names(), b.state_names()
    removed, added = sorted(na - nb), sorted(nb - na)
    value_b = {s.value: s.name for s in b.states if s.name in added}
    renamed = [
        {"from": s.name, "to": value_b[s.value], "value": s.value}
        for s in a.states
        if s.name in removed and s.value in value_b
    ]
    return {"added": added, "removed": removed, "renamed": sorted(renamed, key=lambda r: r["from"])}


def diff(fa: dict[str, Any], fb: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "from_version": fa.get("go_version"),
        "to_version": fb.get("go_version"),
        "states": {},
        "transitions": {},
    }
    for m in tables.MACHINES:
        a, b = states.blueprint(fa, m), states.blueprint(fb, m)
        out["states"][m] = state_changes(a, b)
        out["transitions"][m] = _transitions(a, b)
    out["structs"] = _structs(fa, fb)
    out["functions"] = _functions(fa, fb)
    return out
