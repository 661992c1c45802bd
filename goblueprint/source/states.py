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

Every record says how its prior status was found (``prior``, one of PRIOR_RULES);
a plain store that no rule decides keeps ``from: "*"`` with ``prior: "unstated"``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from goblueprint.errors import SourceError
from goblueprint.source import operands, tables

WILDCARD = "*"
_MAX_WRAPPER_DEPTH = 8
_RECEIVER_TYPE = re.compile(r"^\(\*?([A-Za-z_][A-Za-z0-9_]*)\)\.")

# How the prior status ("from") of a transition was found, in the order the rules are tried for a store.
PRIOR_RULES: dict[str, str] = {
    "cas": "the old value of a compare-and-swap",
    "guard": "a guard on the same path (enclosing if/switch, && operand, earlier check that throws or returns)",
    "constructor": "checked where the receiver value was built (setBlockOnExitSyscall -> syscallingThread)",
    "earlier-write": "a status written earlier, at top level, on the same object in the same function",
    "callee-result": "the status the called function leaves on the P it returns (pp := releasep() -> _Pidle)",
    "world-stopped": "the function asserts the world is stopped, when every P is in _Pgcstop",
    "callee": "decided inside the called function (e.g. acquirep requires _Pidle), lifted to its callers",
    "unstated": "not determined statically",
}


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
    prior: str = "unstated"  # a key of PRIOR_RULES

    def as_json(self) -> dict[str, Any]:
        return {
            "prior": self.prior,
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
    prior: str = "unstated"  # the rule that gave known_src (stores) or "cas"


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
    """The write at SITE as a template; a store's prior status is left to _Resolver.store_prior."""
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
    if kind == "cas":
        if len(ops) < 2:
            return None
        return _Template(ops[0], ops[1], None, [], mechanism, "cas")
    if not ops:
        return None
    return _Template(None, ops[-1], None, [], mechanism)


def _constructor_guards(literals: list[dict[str, Any]]) -> dict[str, operands.Guards]:
    """Per struct type, what every literal that sets a field proves about it where it is built.

    Keys are paths below the value (`pp.status` for a syscallingThread built as
    `syscallingThread{gp, mp, pp, status}` after `if pp.status != _Prunning { return }`).
    A literal that leaves the field unset gives a nil field that no status write goes through,
    so only literals that set it count; one of them without the guard drops the key.
    """
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for lit in literals:
        by_type[lit["type"]].append(lit)
    out: dict[str, operands.Guards] = {}
    for typ, lits in by_type.items():
        per_lit: list[tuple[set[str], dict[str, dict[str, Any]]]] = []
        for lit in lits:
            matched: dict[str, dict[str, Any]] = {}
            for fld, expr in lit["fields"].items():
                for key, cons in (lit.get("guards") or {}).items():
                    if "in" not in cons:
                        continue
                    if key == expr:
                        matched[fld] = cons
                    elif key.startswith(expr + "."):
                        matched[fld + key[len(expr) :]] = cons
            per_lit.append((set(lit["fields"]), matched))
        merged: operands.Guards = {}
        for path in sorted({p for _, m in per_lit for p in m}):
            root = path.split(".", 1)[0]
            setters = [m for fields, m in per_lit if root in fields]
            if any(path not in m for m in setters):
                continue
            values = {v["v"]: v for m in setters for v in m[path]["in"]}
            merged[path] = {"in": [values[k] for k in sorted(values)]}
        if merged:
            out[typ] = merged
    return out


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
        self.constructed = _constructor_guards(facts.get("literals") or [])
        self.world_stopped = {
            f["name"]
            for f in facts["funcs"]
            if any(c["callee"] in tables.WORLD_STOPPED_ASSERTIONS and c.get("top") for c in f["calls"])
        }
        self.result_memo: dict[str, frozenset[int] | None] = {}
        # Functions that write the status, directly or one or two calls away: a call of one of them
        # between `pp := f()` and a store through pp may change pp's status.
        writers = {site["func"] for site in facts["sites"] if site["field"] == machine.field}
        for _ in range(2):
            writers |= {caller for w in list(writers) for caller, _c in self.callers.get(w, [])}
        self.writers = writers
        # Top-level stores of a function with a constant value, for the earlier-write rule.
        self.top_stores: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
        for site in facts["sites"]:
            if site["field"] == machine.field and site.get("top") and site["ops"] and "v" in site["ops"][-1]:
                tpl = _site_template(site, machine)
                if tpl is not None and tpl.src is None:
                    self.top_stores[site["func"]].append((site["line"], site["subj"], site["ops"][-1]["v"]))
        # function -> (src, dst) pairs it performs at top level (for indirect P transitions)
        self.top_pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)

    def name(self, value: int | None) -> str:
        if value is None:
            return WILDCARD
        return self.names.get(value, hex(value))

    def receiver_guards(self, func: str, texts: list[str]) -> operands.Guards:
        """Guards on `recv.path` expressions of a method, from where its receiver's values are built."""
        m = _RECEIVER_TYPE.match(func)
        known = self.constructed.get(m.group(1)) if m else None
        if not known:
            return {}
        out: operands.Guards = {}
        for text in texts:
            head, _, rest = text.partition(".")
            if head.isidentifier() and rest in known:
                out[text] = known[rest]
        return out

    def store_prior(self, site: dict[str, Any], guards: operands.Guards) -> tuple[frozenset[int] | None, str]:
        """The prior status of a plain store, and the rule that decides it (PRIOR_RULES order)."""
        subj = site["subj"]
        obj = subj.rsplit(".", 1)[0]
        for form in tables.STATUS_READS:
            known = operands.const_set(guards.get(form.format(subj=subj, obj=obj)))
            if known:
                return frozenset(known), "guard"
        known = operands.const_set(self.receiver_guards(site["func"], [subj]).get(subj))
        if known:
            return frozenset(known), "constructor"
        if site.get("top"):
            earlier = [(line, v) for line, s, v in self.top_stores.get(site["func"], []) if s == subj
                       and line < site["line"]]  # fmt: skip
            if earlier:
                return frozenset({max(earlier)[1]}), "earlier-write"
        known = self.from_callee_result(site)
        if known:
            return known, "callee-result"
        stopped = self.machine.world_stopped
        if stopped and site["func"] in self.world_stopped:
            value = next((v for v, n in self.names.items() if n == stopped), None)
            if value is not None:
                return frozenset({value}), "world-stopped"
        return None, "unstated"

    def result_status(self, func: str, depth: int = 0) -> frozenset[int] | None:
        """The status FUNC leaves on the object it returns (`pp.status = _Pidle; return pp`), if known."""
        if func in self.result_memo:
            return self.result_memo[func]
        self.result_memo[func] = None  # cycles know nothing
        fn = self.funcs.get(func)
        ret = fn.get("ret") if fn else None
        got: frozenset[int] | None = None
        if ret and depth < _MAX_WRAPPER_DEPTH:
            field_name = self.machine.field.split(".", 1)[1]
            stores = [(line, v) for line, subj, v in self.top_stores.get(func, [])
                      if ret["var"] and subj == f"{ret['var']}.{field_name}" and line > ret["line"]]  # fmt: skip
            if stores:
                got = frozenset({max(stores)[1]})
            else:
                results = {self.result_status(callee, depth + 1) for callee in ret["from"]}
                if len(results) == 1 and None not in results:
                    got = results.pop()
        self.result_memo[func] = got
        return got

    def from_callee_result(self, site: dict[str, Any]) -> frozenset[int] | None:
        """`pp := releasep(); ...; pp.status = X`: the prior status is what releasep left on pp."""
        obj = site.get("obj")
        if not obj or not site.get("top"):
            return None
        results = {self.result_status(callee) for callee in obj["from"]}
        if len(results) != 1 or None in results:
            return None
        fn = self.funcs.get(site["func"])
        between = [c for c in (fn["calls"] if fn else []) if obj["line"] < c["line"] < site["line"]]
        if any(c["callee"] in self.writers for c in between):
            return None  # something in between may have moved it
        return results.pop()

    def emit(self, tpl: _Template, guards: operands.Guards, where: dict[str, Any], func: str, mechanism: str):
        prior = tpl.prior
        unknown = operands.unknown_texts([tpl.src, tpl.dst])
        extra = {k: v for k, v in self.receiver_guards(func, sorted(unknown)).items() if k not in guards}
        if extra:
            if tpl.src is not None and operands.unknown_texts([tpl.src]) & set(extra):
                prior = "constructor"  # the CAS's old value is a receiver field its constructor checked
            guards = {**guards, **extra}
            tpl = _Template(operands.promote(tpl.src, set(extra)), operands.promote(tpl.dst, set(extra)),
                            tpl.known_src, tpl.filters, tpl.mechanism, tpl.prior)  # fmt: skip
        nodes = [tpl.src, tpl.dst] + [f[0] for f in tpl.filters]
        for combo in operands.joint(nodes, guards):
            src_v, dst_v, rest = combo[0], combo[1], combo[2:]
            ok = True
            for (_, allowed, banned), v in zip(tpl.filters, rest, strict=True):
                if v is not None and ((allowed is not None and v not in allowed) or v in banned):
                    ok = False
            if not ok:
                continue
            if tpl.src is None:  # plain store: the prior status is what a rule proves, else unknown
                srcs = sorted(tpl.known_src) if tpl.known_src else [None]
            else:
                srcs = [src_v]
            for s in srcs:
                rec = Transition(
                    prior=prior if s is not None else "unstated",
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
            if tpl.src is None:
                tpl.known_src, tpl.prior = self.store_prior(site, guards)
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
                tpl.prior,
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
                            prior="unstated" if src == WILDCARD else "callee",
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
