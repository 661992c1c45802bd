"""Which runtime sites a lab build records, and the overlay that records them.

The sites come from the source layer's facts (go/parser + go/types positions);
the Go helper's rewrite mode edits them in the AST and hands back whole files.
The result — rewritten runtime files, the lab's runtime file and the site table —
is cached under the goblueprint cache by content, and passed to `go build
-overlay`: neither the GOROOT nor the user's tree is written.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from goblueprint import toolchain
from goblueprint.errors import LabError
from goblueprint.lab import probes as lab_probes
from goblueprint.source import facts as source_facts
from goblueprint.source import helper, states, tables

FORMAT = 1  # bump when the overlay's meaning changes
DEFAULT_CAPACITY = 1 << 22  # records (64 bytes each): 256 MiB of address space, touched only when used
LAB_FILE = "zz_goblueprint_lab.go"
TEMPLATE = "zz_goblueprint_lab.go.txt"
OUT_ENV = "GOBLUEPRINT_LAB_OUT"
# The owner's identity field of each status word, as the record's obj column.
OBJECTS = {"g.atomicstatus": "goid", "p.status": "id"}
# Functions whose entry (or return) dumps the records, with the reason code the dump carries.
DUMP_ENTRIES = (
    ("runExitHooks", 1, True),  # normal return and os.Exit: after the hooks (the trace's stop) ran
    ("dieFromSignal", 2, False),
    ("fatalpanic", 3, False),
    ("fatalthrow", 4, False),
)
DUMP_REASONS = {1: "exit", 2: "fatal signal", 3: "fatal panic", 4: "fatal throw"}
_ENTRY_BASE = 1_000_000  # ids of dump entries in the helper's spec, apart from record sites


@dataclass(frozen=True)
class Site:
    """One recorded site: a record's `site` column indexes a table of these."""

    id: int
    kind: str  # "g_status", "p_status", or a probe's kind (probes.COLUMNS)
    function: str
    file: str
    line: int
    mechanism: str  # how the source writes there: assignment, atomic.Store, CompareAndSwap, ...
    wrapper: bool  # statuses come from parameters: the caller (record's pc) is the site that counts


@dataclass
class Instrumented:
    """A ready overlay for one release."""

    go_version: str
    goroot: Path
    directory: Path
    replace: dict[str, str]  # GOROOT file -> instrumented copy (or the new lab file)
    sites: list[Site]
    build_id: int
    missed: list[dict[str, Any]] = field(default_factory=list)  # sites the helper could not rewrite
    dumps: list[str] = field(default_factory=list)  # functions that dump the records
    notes: list[str] = field(default_factory=list)  # what this release cannot be probed for
    knobs: dict[str, Any] = field(default_factory=dict)  # knobs changed: value and the sites rewritten

    def table(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "go_version": self.go_version,
            "build_id": self.build_id,
            "sites": [asdict(s) for s in self.sites],
            "missed": self.missed,
            "dumps": self.dumps,
            "notes": self.notes,
            "knobs": self.knobs,
        }


def status_sites(facts: dict[str, Any]) -> list[Site]:
    """Every write of a G or P status word in the release, numbered from 1."""
    kinds = {m.field: f"{m.name}_status" for m in tables.MACHINES.values()}
    out: list[Site] = []
    for site in facts["sites"]:
        kind = kinds.get(site["field"])
        how = states.write_kind(site)
        if kind is None or how is None:
            continue
        mechanism = "assignment" if site["how"] == "assign" else site.get("callee") or site["how"]
        out.append(
            Site(
                id=len(out) + 1,
                kind=kind,
                function=site["func"],
                file=site["file"],
                line=site["line"],
                mechanism=mechanism,
                wrapper=states.is_wrapper_site(site, facts),
            )
        )
    return out


def probe_sites(facts: dict[str, Any], first_id: int) -> tuple[list[Site], list[lab_probes.Probe], list[str]]:
    """The probes of this release as sites numbered from FIRST_ID (site line: the function's)."""
    found, notes = lab_probes.probes(facts)
    funcs = {f["name"]: f for f in facts["funcs"] if f["body"]}
    sites, kept = [], []
    for probe in found:
        fn = funcs.get(probe.func)
        if fn is None:
            notes.append(f"no function {probe.func}: no {probe.kind} records from it")
            continue
        where = (
            "defer" if probe.defer else f"before {probe.before}" if probe.before
            else f"after {probe.after}" if probe.after else f"return {probe.returning}" if probe.returning
            else "entry"
        )  # fmt: skip
        sites.append(
            Site(first_id + len(sites), probe.kind, probe.func, fn["file"], fn["line"], where, False)
        )
        kept.append(probe)
    return sites, kept, notes


def _spec(
    facts: dict[str, Any], sites: list[Site], probes: list[lab_probes.Probe] | None = None
) -> dict[str, Any]:
    by_pos = {(s["file"], s["line"], s["field"], s["how"], s.get("callee") or ""): s for s in facts["sites"]}
    fields = {f"{m.name}_status": m.field for m in tables.MACHINES.values()}
    spec_sites = []
    probe_ids = {}
    for site in sites:
        if site.kind not in fields:
            probe_ids[len(probe_ids)] = site.id
            continue
        field_name = fields[site.kind]
        how = "assign" if site.mechanism == "assignment" else None
        match = None
        for key, fact in by_pos.items():
            if key[0] == site.file and key[1] == site.line and key[2] == field_name:
                if how is None and key[4] != site.mechanism:
                    continue
                match = fact
                break
        if match is None:  # cannot happen: sites are made from these facts
            raise LabError(f"site {site.file}:{site.line} is not among the source facts")
        spec_sites.append(
            {
                "id": site.id,
                "field": field_name,
                "how": match["how"],
                "callee": match.get("callee") or "",
                "file": site.file,
                "line": site.line,
                "kind": states.write_kind(match),
                "callerpc": site.wrapper,
            }
        )
    entries = [
        {"id": _ENTRY_BASE + i, "func": name, "call": f"goblueprintLabDump({code})", "defer": deferred}
        for i, (name, code, deferred) in enumerate(DUMP_ENTRIES)
    ]
    for i, probe in enumerate(probes or []):
        entries.append(
            {
                "id": probe_ids[i],
                "func": probe.func,
                "call": probe.call.format(site=probe_ids[i]),
                "defer": probe.defer,
                "before": probe.before,
                "after": probe.after,
                "returning": probe.returning,
            }
        )
    return {"sites": spec_sites, "entries": entries, "objects": OBJECTS}


def _template() -> str:
    return (resources.files("goblueprint.lab") / "overlay" / TEMPLATE).read_text()


def instrument(
    root: source_facts.Goroot, capacity: int = DEFAULT_CAPACITY, knobs: dict[str, str] | None = None
) -> Instrumented:
    """The overlay recording every status write and probe of ROOT's runtime (built once, cached).

    KNOBS (name -> value, checked by knobs.parse_settings) are changed in the same overlay.
    """
    if not 1 <= capacity <= 1 << 28:
        raise LabError(f"buffer capacity {capacity} out of range 1..{1 << 28} records")
    facts = source_facts.load(root)
    sites = status_sites(facts)
    if not sites:
        raise LabError(f"Go {root.version}: the source layer found no G or P status write to instrument")
    extra, probes, notes = probe_sites(facts, len(sites) + 1)
    sites += extra
    spec = _spec(facts, sites, probes)
    from goblueprint.lab.knobs import BY_NAME

    spec["knobs"] = [BY_NAME[name].spec(value) for name, value in sorted((knobs or {}).items())]
    size = lab_probes.global_queue_size(facts) or "before"
    template = _template().replace("GOBLUEPRINT_GLOBSIZE", size)
    digest = hashlib.sha256(
        json.dumps(
            [FORMAT, helper.helper_source_hash(), str(root.path), root.version, capacity, spec, template],
            sort_keys=True,
        ).encode()
    ).hexdigest()
    build_id = int(digest[:15], 16)
    directory = toolchain.cache_dir() / "lab" / f"go{root.version}-{digest[:20]}"
    done = directory / "sites.json"
    if not done.exists():
        # One producer at a time (parallel test workers, concurrent CLI calls): the files are
        # written in place, and a go build reading them half-written would fail oddly.
        directory.parent.mkdir(parents=True, exist_ok=True)
        with open(directory.parent / f"{directory.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                _produce(root, spec, template, capacity, build_id, directory, sites)
    table = json.loads(done.read_text())
    replace = {str(root.path / rel): str(directory / rel) for rel in table["rewritten"]}
    replace[str(root.path / "src" / "runtime" / LAB_FILE)] = str(directory / LAB_FILE)
    return Instrumented(
        go_version=root.version,
        goroot=root.path,
        directory=directory,
        replace=replace,
        sites=sites,
        build_id=build_id,
        missed=table["missed"],
        dumps=table["dumps"],
        notes=notes,
        knobs=table["knobs"],
    )


def _produce(
    root: source_facts.Goroot,
    spec: dict[str, Any],
    template: str,
    capacity: int,
    build_id: int,
    directory: Path,
    sites: list[Site],
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    spec_path = directory / f"spec.{os.getpid()}.json"
    spec_path.write_text(json.dumps(spec, sort_keys=True))
    fields = ",".join(tables.STATUS_FIELDS)
    try:
        out = helper.run_helper(
            "rewrite",
            root.path,
            [
                "-pkg",
                tables.PACKAGE,
                "-fields",
                fields,
                "-goos",
                tables.GOOS,
                "-goarch",
                tables.GOARCH,
                "-spec",
                str(spec_path),
            ],
        )
    finally:
        spec_path.unlink(missing_ok=True)
    if not out.get("atomic"):
        raise LabError(f"Go {root.version}: the runtime imports no atomic package the lab can use")
    for rel, text in out["files"].items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    lab = (
        template.replace("GOBLUEPRINT_ATOMIC", out["atomic"])
        .replace("GOBLUEPRINT_CAPACITY", str(capacity))
        .replace("GOBLUEPRINT_BUILD", str(build_id))
    )
    (directory / LAB_FILE).write_text(lab)
    by_id = {s.id: s for s in sites}
    missed = []
    dumps = []
    for miss in out["missed"]:
        if miss["id"] >= _ENTRY_BASE:
            missed.append({"function": DUMP_ENTRIES[miss["id"] - _ENTRY_BASE][0], "file": "", "line": 0,
                           "reason": miss["reason"]})  # fmt: skip
            continue
        s = by_id[miss["id"]]
        missed.append({"function": s.function, "file": s.file, "line": s.line, "reason": miss["reason"]})
    for i, (name, _code, _deferred) in enumerate(DUMP_ENTRIES):
        if _ENTRY_BASE + i in out["applied"]:
            dumps.append(name)
    changed = {
        k["name"]: [[x["file"], x["line"], x["text"]] for x in k["sites"]] for k in out.get("knobs") or []
    }
    table = {"rewritten": sorted(out["files"]), "missed": missed, "dumps": dumps, "callerpc": out["callerpc"],
             "knobs": {name: {"value": v, "sites": changed.get(name, [])} for name, v in
                       sorted((k["name"], k["set"]) for k in spec["knobs"])}}  # fmt: skip
    tmp = directory / f"sites.json.{os.getpid()}"
    tmp.write_text(json.dumps(table, sort_keys=True, indent=1))
    tmp.replace(directory / "sites.json")
