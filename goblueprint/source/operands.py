"""Evaluate the helper's operand trees to the constants the code makes knowable.

Operand trees (see gohelper/main.go ``enc``):
``{"v": int, "c": name}`` constant, ``{"p": i, "n": name}`` parameter,
``{"var": name, "defs": [...] | None}`` local variable, ``{"op", "x", "y"}``
arithmetic, ``{"u": text}`` unknown.  Guards map an expression's source text to
``{"in": [...], "notin": [...]}``; they narrow parameters and variables by name.
"""

from __future__ import annotations

import itertools
from typing import Any

Node = dict[str, Any]
Guards = dict[str, dict[str, list[Node]]]

_MAX_COMBOS = 64
_OPS = {
    "|": lambda a, b: a | b,
    "&": lambda a, b: a & b,
    "&^": lambda a, b: a & ~b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
}


def substitute(node: Node | None, args: list[Node | None]) -> Node | None:
    """Replace parameter references by the caller's argument trees."""
    if node is None:
        return None
    if "p" in node:
        index = node["p"]
        return args[index] if index < len(args) and args[index] is not None else {"u": node.get("n", "?")}
    if "op" in node:
        return {"op": node["op"], "x": substitute(node["x"], args), "y": substitute(node["y"], args)}
    return node


def has_params(node: Node | None) -> bool:
    if node is None:
        return False
    if "p" in node:
        return True
    if "op" in node:
        return has_params(node["x"]) or has_params(node["y"])
    return False


def _leaves(node: Node | None, out: dict[str, Node]) -> None:
    if node is None:
        return
    if "var" in node:
        out[node["var"]] = node
    elif "p" in node:  # an unsubstituted parameter: only guards can say what it holds
        out[node["n"]] = {"var": node["n"], "defs": None}
    elif "op" in node:
        _leaves(node["x"], out)
        _leaves(node["y"], out)


def _var_values(node: Node, guards: Guards, depth: int = 0) -> set[int] | None:
    values: set[int] | None = None
    defs = node.get("defs")
    if defs is not None and depth < 4:
        values = set()
        for d in defs:
            got = _values(d, guards, depth + 1)
            if got is None:
                values = None
                break
            values |= got
    guard = guards.get(node["var"])
    if guard:
        allowed = {g["v"] for g in guard.get("in", [])} if "in" in guard else None
        if allowed is not None:
            values = allowed if values is None else values & allowed
        if values is not None:
            values -= {g["v"] for g in guard.get("notin", [])}
    return values


def _values(node: Node | None, guards: Guards, depth: int = 0) -> set[int] | None:
    """All values a tree can take, or None when the code does not make them knowable."""
    if node is None:
        return None
    if "v" in node:
        return {node["v"]}
    if "var" in node:
        return _var_values(node, guards, depth)
    if "op" in node:
        xs, ys = _values(node["x"], guards, depth), _values(node["y"], guards, depth)
        if xs is None or ys is None or len(xs) * len(ys) > _MAX_COMBOS:
            return None
        return {_OPS[node["op"]](a, b) for a in xs for b in ys}
    return None


def _eval(node: Node | None, binding: dict[str, int], guards: Guards) -> int | None:
    if node is None:
        return None
    if "var" in node:
        return binding.get(node["var"])
    if "p" in node:
        return binding.get(node["n"])
    if "op" in node:
        x, y = _eval(node["x"], binding, guards), _eval(node["y"], binding, guards)
        if x is None or y is None:
            return None
        return _OPS[node["op"]](x, y)
    vals = _values(node, guards)
    return next(iter(vals)) if vals is not None and len(vals) == 1 else None


def joint(nodes: list[Node | None], guards: Guards) -> list[tuple[int | None, ...]]:
    """Every tuple of values the operands take together (a variable has one value per tuple).

    ``None`` in a tuple means that operand is not knowable.
    """
    leaves: dict[str, Node] = {}
    for n in nodes:
        _leaves(n, leaves)
    names = sorted(leaves)
    choices: list[list[int | None]] = []
    for name in names:
        vals = _var_values(leaves[name], guards)
        choices.append(sorted(vals) if vals else [None])
    combos = 1
    for c in choices:
        combos *= len(c)
    if combos > _MAX_COMBOS:
        choices = [[None] for _ in names]
    out = []
    for pick in itertools.product(*choices):
        binding = {n: v for n, v in zip(names, pick, strict=True) if v is not None}
        out.append(tuple(_eval(n, binding, guards) for n in nodes))
    return sorted(set(out), key=lambda t: tuple(-1 if v is None else v for v in t))


def const_set(guard: dict[str, list[Node]] | None) -> set[int] | None:
    if not guard or "in" not in guard:
        return None
    return {g["v"] for g in guard["in"]}


def unknown_texts(nodes: list[Node | None]) -> set[str]:
    """Source texts of the operands' parts the helper could not encode (`s.status`)."""
    out: set[str] = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if "u" in n:
            out.add(n["u"])
        elif "op" in n:
            stack += [n["x"], n["y"]]
    return out


def promote(node: Node | None, texts: set[str]) -> Node | None:
    """Turn unknown parts named in TEXTS into variables, so guards on those texts give their values."""
    if node is None:
        return None
    if "u" in node and node["u"] in texts:
        return {"var": node["u"], "defs": None}
    if "op" in node:
        return {"op": node["op"], "x": promote(node["x"], texts), "y": promote(node["y"], texts)}
    return node
