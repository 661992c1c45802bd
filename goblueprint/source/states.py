"""Status transitions of the G and P state machines, each with its source site as evidence.

Resolution works on the helper's facts:

1. A *write site* stores to the status field (assignment, ``atomic.Store``,
   ``atomic.Cas``, ``atomicstatus.CompareAndSwap`` ...).  Its operands are trees.
2. If an operand is a parameter of the enclosing function, that function is a
   *wrapper* (``casgstatus``, ``casGToWaiting``, ``(syscallingThread).releaseP``):
   its template is substituted into every call of it, and the record is made at
   the call site with the wrapper's name as mechanism.  Guards inside the wrapper
   (``switch oldval { case ... }``, ``if state != _Pidle && ... { throw }``)
   filter the values callers may pass.
3. Variables are resolved through their assignments and the guards that hold
   at the site (enclosing ``switch``/``if`` and earlier checks that throw or
   return); one record per possible value.
4. For machines marked ``indirect`` (P), a function whose body always performs
   a transition (a top-level statement does) is itself a transition at every
   call of it (``acquirep``, ``releasep``, ``gcstopP``...), marked indirect.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from goblueprint.errors import SourceError
from goblueprint.source import operands, tables

WILDCARD = "*"
_MAX_WRAPPER_DEPTH = 8


@dataclass(frozen=True)
class State:
    name: str
    value: int
    comment: str

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "comment": self.comment}


@dataclass(frozen=True, order=True)
class Transition:
    file: str
    line: int
    src: str  # "from"
    dst: str  # "to"
    function: str
    mechanism: str
    context: str | None = None
    indirect: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "from": self.src,
            "to": self.dst,
            "function": self.function,
            "file": self.file,
            "line": self.line,
            "mechanism": self.mechanism,
            "context": self.context,
            "indirect": self.indirect,
        }


@dataclass
class Blueprint:
    go_version: str
    machine: str
    states: list[State]
    transitions: list[Transition]
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "go_version": self.go_version,
            "machine": self.machine,
            "states": [s.as_json() for s in self.states],
            "transitions": [t.as_json() for t in self.transitions],
        }

    def state_names(self) -> set[str]:
        return {s.name for s in self.states}


@dataclass
class _Template:
    """A status write whose operands may still mention the enclosing function's parameters."""

    src: operands.Node | None  # None: a plain store, prior status from guards or "*"
    dst: operands.Node | None
    known_src: frozenset[int] | None  # for stores: what guards prove about the prior status
    filters: list[tuple[operands.Node | None, frozenset[int] | None, frozenset[int]]]
    mechanism: str  # of the innermost write, used when the site itself is the record


def machine_of(name: str) -> tables.Machine:
    try:
        return tables.MACHINES[name]
    except KeyError:
        raise SourceError(f"unknown machine {name!r} (choose from: {', '.join(tables.MACHINES)})") from None


def states_of(facts: dict[str, Any], machine: tables.Machine) -> list[State]:
    """The constants declared in the same const block as the machine's anchor constant."""
    consts = facts["consts"]
    anchor = next((c for c in consts if c["name"] == machine.anchor), None)
    if anchor is None:
        raise SourceError(f"{machine.anchor} is not declared in this GOROOT's runtime")
    group = (anchor["file"], anchor["group"])
    found = [
        State(c["name"], c["value"], c["comment"])
        for c in consts
        if (c["file"], c["group"]) == group
        and c["name"].startswith(machine.prefix)
        and c["value"] is not None
    ]
    return found


def _guard_filters(guards: operands.Guards | None, params: set[str], ops: list[operands.Node]) -> list:
    """Guards inside a wrapper on its own parameters become filters on callers' values."""
    if not guards:
        return []
    by_name = {}
    for op in ops:
        stack = [op]
        while stack:
            n = stack.pop()
            if n is None:
                continue
            if "p" in n:
                by_name[n["n"]] = n
            elif "op" in n:
                stack += [n["x"], n["y"]]
    out = []
    for name, guard in guards.items():
        if name in params and name in by_name:
            allowed = operands.const_set(guard)
            banned = frozenset(g["v"] for g in guard.get("notin", []))
            out.append((by_name[name], frozenset(allowed) if allowed is not None else None, banned))
    return out


def _site_template(site: dict[str, Any], machine: tables.Machine) -> _Template | None:
    how, callee, ops = site["how"], site.get("callee") or "", site["ops"]
    if how == "assign":
        kind, mechanism = "store", "assignment"
    elif how == "call":
        kind = tables.WRITE_CALLS.get(callee)
        mechanism = callee
    else:
        kind = tables.WRITE_METHODS.get(callee)
        mechanism = f"{machine.field.split('.')[1]}.{callee}"
    if kind is None:
        return None  # a read
    guards = site.get("guards") or {}
    if kind == "cas":
        if len(ops) < 2:
            return None
        src, dst, known = ops[0], ops[1], None
    else:
        if not ops:
            return None
        src, dst = None, ops[-1]
        known = operands.const_set(guards.get(site["subj"]))
        known = frozenset(known) if known is not None else None
    return _Template(src, dst, known, [], mechanism)


def _pin(op: operands.Node | None, guards: operands.Guards, params: list[str]) -> operands.Node | None:
    """A constant operand that a guard proves equal to a parameter stands for that parameter.

    `casGToPreemptScan(gp, old, new)` throws unless old == _Grunning and new == _Gscan|_Gpreempted,
    then CASes the constants: it is a wrapper whose callers' arguments are the transition.
    """
    if op is None or "v" not in op:
        return op
    for index, name in enumerate(params):
        allowed = operands.const_set(guards.get(name))
        if allowed == {op["v"]}:
            return {"p": index, "n": name}
    return op


class _Resolver:
    def __init__(self, facts: dict[str, Any], machine: tables.Machine, states: list[State]):
        self.facts = facts
        self.machine = machine
        self.names: dict[int, str] = {}
        for s in states:
            self.names.setdefault(s.value, s.name)
        self.funcs = {f["name"]: f for f in facts["funcs"]}
        self.callers: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        for f in facts["funcs"]:
            for c in f["calls"]:
                if c["kind"] in ("call", "go", "defer"):
                    self.callers[c["callee"]].append((f["name"], c))
        self.records: set[Transition] = set()
        # function -> (src, dst) pairs it performs at top level (for indirect P transitions)
        self.top_pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)

    def name(self, value: int | None) -> str:
        if value is None:
            return WILDCARD
        return self.names.get(value, hex(value))

    def emit(self, tpl: _Template, guards: operands.Guards, where: dict[str, Any], func: str, mechanism: str):
        nodes = [tpl.src, tpl.dst] + [f[0] for f in tpl.filters]
        for combo in operands.joint(nodes, guards):
            src_v, dst_v, rest = combo[0], combo[1], combo[2:]
            ok = True
            for (_, allowed, banned), v in zip(tpl.filters, rest, strict=True):
                if v is not None and ((allowed is not None and v not in allowed) or v in banned):
                    ok = False
            if not ok:
                continue
            if tpl.src is None:  # plain store: the prior status is what guards prove, else unknown
                srcs = sorted(tpl.known_src) if tpl.known_src else [None]
            else:
                srcs = [src_v]
            for s in srcs:
                rec = Transition(
                    file=where["file"],
                    line=where["line"],
                    src=self.name(s),
                    dst=self.name(dst_v),
                    function=func,
                    mechanism=mechanism,
                    context=where.get("ctx") if where.get("ctx") in tables.CONTEXTS else None,
                )
                self.records.add(rec)
                if where.get("top"):
                    self.top_pairs[func].add((rec.src, rec.dst))

    def resolve(self) -> None:
        for site in self.facts["sites"]:
            if site["field"] != self.machine.field:
                continue
            tpl = _site_template(site, self.machine)
            if tpl is None:
                continue
            guards = site.get("guards") or {}
            fn = self.funcs.get(site["func"])
            if fn:
                tpl.src, tpl.dst = (_pin(op, guards, fn["params"]) for op in (tpl.src, tpl.dst))
            if operands.has_params(tpl.src) or operands.has_params(tpl.dst):
                fn = self.funcs.get(site["func"])
                params = set(fn["params"]) if fn else set()
                tpl.filters = _guard_filters(guards, params, [tpl.src, tpl.dst])
                self.wrap(site["func"], tpl, 0, (site, guards, tpl.mechanism))
            else:
                self.emit(tpl, guards, site, site["func"], tpl.mechanism)
        if self.machine.indirect:
            self.indirect()

    def wrap(self, wrapper: str, tpl: _Template, depth: int, origin: tuple) -> None:
        """Substitute a wrapper's template into each of its calls.

        ORIGIN (where, guards, mechanism) is the site itself: a wrapper nobody calls (or
        too deep a chain) is reported there, its parameters known only through guards.
        """
        callers = self.callers.get(wrapper, [])
        if depth > _MAX_WRAPPER_DEPTH or not callers:
            where, guards, mechanism = origin
            self.emit(tpl, guards, where, wrapper, mechanism)
            return
        for caller, call in callers:
            args = call.get("args") or []
            sub = _Template(
                operands.substitute(tpl.src, args),
                operands.substitute(tpl.dst, args),
                tpl.known_src,
                [(operands.substitute(n, args), a, b) for n, a, b in tpl.filters],
                tpl.mechanism,
            )
            guards = call.get("guards") or {}
            if operands.has_params(sub.src) or operands.has_params(sub.dst):
                fn = self.funcs.get(caller)
                params = set(fn["params"]) if fn else set()
                sub.filters = sub.filters + _guard_filters(guards, params, [sub.src, sub.dst])
                where = call | {"file": self.funcs[caller]["file"]}
                self.wrap(caller, sub, depth + 1, (where, guards, wrapper))
            else:
                self.emit(sub, guards, call | {"file": self.funcs[caller]["file"]}, caller, wrapper)

    def indirect(self) -> None:
        """Calls of functions that always perform a transition are transitions too."""
        queue = list(self.top_pairs)
        done: set[str] = set()
        while queue:
            performer = queue.pop()
            if performer in done:
                continue
            done.add(performer)
            pairs = self.top_pairs[performer]
            for caller, call in self.callers.get(performer, []):
                for src, dst in sorted(pairs):
                    self.records.add(
                        Transition(
                            file=self.funcs[caller]["file"],
                            line=call["line"],
                            src=src,
                            dst=dst,
                            function=caller,
                            mechanism=performer,
                            context=call.get("ctx") if call.get("ctx") in tables.CONTEXTS else None,
                            indirect=True,
                        )
                    )
                    if call.get("top") and (src, dst) not in self.top_pairs[caller]:
                        self.top_pairs[caller].add((src, dst))
                        done.discard(caller)
                        queue.append(caller)


def blueprint(facts: dict[str, Any], machine_name: str) -> Blueprint:
    machine = machine_of(machine_name)
    states = states_of(facts, machine)
    resolver = _Resolver(facts, machine, states)
    resolver.resolve()
    return Blueprint(facts.get("go_version", "unknown"), machine.name, states, sorted(resolver.records))


def is_wrapper_site(site: dict[str, Any], facts: dict[str, Any]) -> bool:
    """Whether a status write takes its statuses from its function's parameters.

    Such a function (casgstatus, castogscanstatus, ...) is a wrapper: the transition
    it performs is its caller's, so an observation of it is attributed to the caller.
    """
    field = site["field"]
    machine = next((m for m in tables.MACHINES.values() if m.field == field), None)
    if machine is None:
        return False
    tpl = _site_template(site, machine)
    if tpl is None:
        return False
    fn = next((f for f in facts["funcs"] if f["name"] == site["func"]), None)
    guards = site.get("guards") or {}
    src, dst = tpl.src, tpl.dst
    if fn:
        src, dst = (_pin(op, guards, fn["params"]) for op in (src, dst))
    return operands.has_params(src) or operands.has_params(dst)


def write_kind(site: dict[str, Any]) -> str | None:
    """The write's kind ("cas" or "store"), or None for a read, as the tables classify it."""
    how, callee = site["how"], site.get("callee") or ""
    if how == "assign":
        return "store"
    if how == "call":
        return tables.WRITE_CALLS.get(callee)
    return tables.WRITE_METHODS.get(callee)
