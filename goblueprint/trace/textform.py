"""Go's text form of execution traces, and the txtar ``.test`` files that hold them.

Go's trace reader is tested on hand-written traces kept as txtar archives
(``internal/trace/testdata/tests/*.test``) with two files: ``expect`` (``SUCCESS``
or ``FAILURE "<Go regexp>"``) and ``trace`` (the line-oriented text form of
``internal/trace/raw/doc.go``).  Go turns the text into wire bytes with
``raw.TextReader`` -> ``raw.Writer`` and feeds them to its reader; this module does
the same with the tables of :mod:`goblueprint.trace.spec`, so our reader reads a
``.test`` like any binary trace.

Everything here works on bytes already in memory: no I/O, no printing.  Malformed
input raises :class:`TraceError` naming the 1-based line of the ``.test`` file (or of
the text trace when parsed alone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from goblueprint.errors import TraceError
from goblueprint.trace import spec
from goblueprint.trace.wire import put_uvarint

# Go's unicode.IsSpace (the White_Space property); Python's str.isspace differs
# (it also counts the ASCII separators U+001C..U+001F).
_GO_SPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# bufio.Scanner's default limit: a longer line makes Go's text reader fail.
_MAX_LINE = 64 * 1024
_FRAME_FIELDS = ("pc", "func", "file", "line")
_DIGITS = re.compile(r"[0-9]+\Z")
_U64 = 1 << 64


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One wire-level record (Go's raw.Event): event type, arguments, trailing data."""

    ev: int
    args: tuple[int, ...]
    data: bytes | None = None


@dataclass(frozen=True, slots=True)
class TextTrace:
    version: int
    events: tuple[RawEvent, ...]


@dataclass(frozen=True, slots=True)
class GoldenTest:
    """A parsed ``.test`` file: its expectation and its trace already in wire format."""

    expect_failure: bool
    pattern: str | None  # the Go regexp of a FAILURE expectation, unquoted
    version: int
    wire: bytes

    def matches(self, error: str | None) -> bool:
        """Go's testtrace.Expectation.Check: does a reader outcome meet the expectation?"""
        if not self.expect_failure:
            return error is None
        if error is None or self.pattern is None:
            return False
        return go_regexp(self.pattern).search(error) is not None


# --------------------------------------------------------------------------- txtar


def parse_txtar(data: bytes) -> list[tuple[str, bytes, int]]:
    """Go's internal/txtar.Parse: the files of an archive as (name, data, first line).

    The first line is the 1-based line number of the file's first data line, so
    errors inside a file can point into the archive.  The leading comment is dropped.
    """
    files: list[tuple[str, bytes, int]] = []
    pos = _next_marker(data, 0)
    while pos is not None:
        _, name, body = pos
        nxt = _next_marker(data, body)
        end = nxt[0] if nxt is not None else len(data)
        chunk = data[body:end]
        if nxt is None and chunk and not chunk.endswith(b"\n"):
            chunk += b"\n"  # txtar's fixNL
        files.append((name, chunk, data.count(b"\n", 0, body) + 1))
        pos = nxt
    return files


def _next_marker(data: bytes, i: int) -> tuple[int, str, int] | None:
    """The next ``-- name --`` line at or after line start i: (line start, name, data start)."""
    while True:
        found = _is_marker(data, i)
        if found is not None:
            return i, found[0], found[1]
        j = data.find(b"\n-- ", i)
        if j < 0:
            return None
        i = j + 1


def _is_marker(data: bytes, i: int) -> tuple[str, int] | None:
    if not data.startswith(b"-- ", i):
        return None
    nl = data.find(b"\n", i)
    line_end, after = (nl, nl + 1) if nl >= 0 else (len(data), len(data))
    line = data[i:line_end]
    if not (line.endswith(b" --") and len(line) >= 6):
        return None
    name = line[3:-3].decode("utf-8", "replace").strip(" \t\n\v\f\r\x85\xa0")
    if not name:
        return None
    return name, after


def parse_test_file(data: bytes) -> GoldenTest:
    """Go's testtrace.ParseFile: expectation plus the trace text encoded to wire bytes."""
    files = parse_txtar(data)
    if len(files) != 2:
        raise TraceError(f"malformed test: wrong number of files ({len(files)}, want expect and trace)")
    (name0, expect, expect_line), (name1, text, text_line) = files
    if name0 != "expect":
        raise TraceError(f"malformed test: bad filename {name0} (line {expect_line - 1})")
    if name1 != "trace":
        raise TraceError(f"malformed test: bad filename {name1} (line {text_line - 1})")
    trace = parse_text(text, first_line=text_line)
    failure, pattern = parse_expectation(expect, first_line=expect_line)
    return GoldenTest(failure, pattern, trace.version, encode(trace))


def parse_expectation(data: bytes, *, first_line: int = 1) -> tuple[bool, str | None]:
    """Go's testtrace.ParseExpectation: (expects failure, unquoted regexp or None)."""
    lines = _scan_lines(data, first_line)
    if not lines:
        return False, None  # Go: an empty expectation expects success
    lineno, text = lines[0]
    head, sep, rest = text.partition(" ")
    if head == "SUCCESS":
        return False, None
    if head != "FAILURE":
        raise TraceError(f"bad expectation header line {lineno}: {text!r}")
    if not sep:
        raise TraceError(f"bad header line for FAILURE at line {lineno}: {text!r}")
    try:
        pattern = go_unquote(rest).decode("utf-8", "surrogateescape")
    except ValueError as exc:
        raise TraceError(f"malformed pattern at line {lineno}: not correctly quoted: {rest}") from exc
    try:
        go_regexp(pattern)
    except ValueError as exc:
        raise TraceError(f"malformed pattern at line {lineno}: not a valid regexp: {pattern}: {exc}") from exc
    return True, pattern


# ------------------------------------------------------------------ the text form


def parse_text(data: bytes, *, first_line: int = 1) -> TextTrace:
    """Go's raw.TextReader over a whole text trace."""
    lines = _scan_lines(data, first_line)
    if not lines:
        raise TraceError("failed to parse header: empty trace text")
    it = iter(_content_lines(lines))
    lineno, header = next(it, (first_line, ""))
    word, rest = _read_token(header)
    if word != "Trace":
        raise TraceError(f"failed to parse header (line {lineno})")
    gover, rest = _read_token(rest)
    if not gover.startswith("Go1."):
        raise TraceError(f"failed to parse header Go version (line {lineno})")
    minor = gover[4:]
    if not _DIGITS.match(minor) or int(minor) >= _U64:
        raise TraceError(f"failed to parse header Go version {gover!r} (line {lineno})")
    version = int(minor) & 0xFFFFFFFF  # Go keeps the parsed uint64 as a uint32 version
    if not spec.version_valid(version):
        raise TraceError(f"unknown or unsupported Go version 1.{version} (line {lineno})")
    if any(ch not in _GO_SPACE for ch in rest):
        raise TraceError(
            f"encountered unexpected non-space at the end of the header: {rest!r} (line {lineno})"
        )
    specs = spec.VERSION_SPECS[version] or ()
    names = spec.event_names(specs) if specs else {}
    events: list[RawEvent] = []
    for lineno, line in it:
        name, rest = _read_token(line)
        ev = names.get(name)
        if ev is None or not name:
            raise TraceError(f"unidentified event: {name} (line {lineno})")
        es = specs[ev]
        try:
            args = _read_args(rest, es.args)
        except ValueError as exc:
            raise TraceError(f"reading args for {name}: {exc} (line {lineno})") from None
        if es.is_stack:
            for _ in range(args[1]):
                frame = next(it, None)
                if frame is None:
                    raise TraceError(
                        f"unexpected EOF while reading stack: args={_go_list(args)} (line {lineno})"
                    )
                try:
                    args.extend(_read_args(frame[1], _FRAME_FIELDS))
                except ValueError as exc:
                    raise TraceError(f"{exc} (line {frame[0]})") from None
        data_bytes = None
        if es.has_data:
            trailer = next(it, None)
            if trailer is None:
                raise TraceError(
                    f"unexpected EOF while reading data for {name}: args={_go_list(args)} (line {lineno})"
                )
            data_bytes = _read_data(trailer[1], trailer[0])
        events.append(RawEvent(ev, tuple(args), data_bytes))
    return TextTrace(version, tuple(events))


def encode(trace: TextTrace) -> bytes:
    """Go's raw.Writer: header, then each event as type byte, uvarint args, data."""
    specs = spec.VERSION_SPECS[trace.version] or ()
    out = bytearray(spec.header(trace.version))
    for event in trace.events:
        es = specs[event.ev]
        out.append(event.ev)
        for arg in event.args:  # the declared args, then the stack frames if any
            put_uvarint(out, arg)
        if es.has_data:
            data = event.data or b""
            put_uvarint(out, len(data))
            out += data
    return bytes(out)


def text_to_wire(data: bytes) -> bytes:
    """A text-form trace straight to wire bytes."""
    return encode(parse_text(data))


def _go_list(values: list[int]) -> str:
    return "[" + " ".join(str(v) for v in values) + "]"


def _scan_lines(data: bytes, first_line: int) -> list[tuple[int, str]]:
    """bufio.Scanner(ScanLines): split on \\n, drop one trailing \\r, enforce its line limit."""
    if not data:
        return []
    raw = data.split(b"\n")
    if raw[-1] == b"":
        raw.pop()
    out = []
    for n, line in enumerate(raw, start=first_line):
        if len(line) >= _MAX_LINE:  # the line and its newline must fit in the 64 KiB buffer
            raise TraceError(f"line {n}: token too long ({_MAX_LINE} bytes or more)")
        if line.endswith(b"\r"):
            line = line[:-1]
        # surrogateescape keeps invalid UTF-8 bytes distinct from U+FFFD and never a space.
        out.append((n, line.decode("utf-8", "surrogateescape")))
    return out


def _content_lines(lines: list[tuple[int, str]]):
    """Go's TextReader.nextLine: skip lines whose first token is empty (blank or comment)."""
    for lineno, text in lines:
        if _read_token(text)[0]:
            yield lineno, text


def _read_token(s: str) -> tuple[str, str]:
    """Go's raw.readToken: the next space-separated token; '#' starts a comment."""
    n = len(s)
    i = 0
    while i < n and s[i] in _GO_SPACE:
        i += 1
    if i == n or s[i] == "#":
        return "", ""
    j = i
    while j < n and s[j] not in _GO_SPACE and s[j] != "#":
        j += 1
    return s[i:j], s[j:]


def _read_args(s: str, names: tuple[str, ...]) -> list[int]:
    """Go's raw.readArgs: exactly NAMES, in order, as name=uint64; then only spaces."""
    args = []
    for name in names:
        tok, rest = _read_token(s)
        if not tok:
            raise ValueError("no argument")
        arg, eq, val = tok.partition("=")
        if not eq:
            raise ValueError(f"malformed argument: {_go_quote(tok)}")
        if not _DIGITS.match(val) or int(val) >= _U64:
            raise ValueError(f"failed to parse argument value {_go_quote(val)} for arg {_go_quote(arg)}")
        if arg != name:
            raise ValueError(f"expected argument {_go_quote(name)}, but got {_go_quote(arg)}")
        args.append(int(val))
        s = rest
    if any(ch not in _GO_SPACE for ch in s):
        raise ValueError(f"encountered unexpected non-space at the end of an event: {_go_quote(s)}")
    return args


def _read_data(line: str, lineno: int) -> bytes:
    key, eq, value = line.partition("=")
    if not eq or key.strip("".join(_GO_SPACE)) != "data":
        raise TraceError(f"malformed data: {_go_quote(line)} (line {lineno})")
    try:
        return go_unquote(value.strip("".join(_GO_SPACE)))
    except ValueError:
        raise TraceError(f"failed to parse data: {_go_quote(line)}: invalid syntax (line {lineno})") from None


def _go_quote(s: str) -> str:
    """Close enough to Go's %q for error messages."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ------------------------------------------------------------------ Go literals

_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}


def go_unquote(s: str) -> bytes:
    """Go's strconv.Unquote of a "..." , `...` or '.' literal, as the bytes Go's string holds.

    Invalid UTF-8 outside escapes becomes U+FFFD as in Go; ``\\x`` and octal escapes
    give raw bytes.  Raises ValueError on what Go calls ErrSyntax.
    """
    if len(s) < 2 or s[0] != s[-1] or s[0] not in "\"'`":
        raise ValueError("invalid syntax")
    quote, body = s[0], s[1:-1]
    if quote == "`":
        if "`" in body:
            raise ValueError("invalid syntax")
        return body.replace("\r", "").encode("utf-8", "surrogateescape")
    out = bytearray()
    i, n = 0, len(body)
    chars = 0
    while i < n:
        c = body[i]
        chars += 1
        if c == quote or c == "\n":
            raise ValueError("invalid syntax")
        if c != "\\":
            # A lone surrogate stands for an invalid UTF-8 byte: Go decodes it as U+FFFD.
            out += ("\ufffd" if "\udc80" <= c <= "\udcff" else c).encode("utf-8", "surrogatepass")
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("invalid syntax")
        e = body[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
        elif e == quote and e != "`":
            out.append(ord(e))
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = body[i : i + width]
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError("invalid syntax")
            value = int(digits, 16)
            i += width
            if e == "x":
                out.append(value)  # a byte, even when not valid UTF-8 on its own
            else:
                if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                    raise ValueError("invalid syntax")
                out += chr(value).encode("utf-8")
        elif e in "01234567":
            digits = body[i - 1 : i + 2]
            if len(digits) != 3 or any(d not in "01234567" for d in digits):
                raise ValueError("invalid syntax")
            value = int(digits, 8)
            if value > 255:
                raise ValueError("invalid syntax")
            out.append(value)
            i += 2
        else:
            raise ValueError("invalid syntax")
    if quote == "'" and chars != 1:
        raise ValueError("invalid syntax")
    return bytes(out)


# ------------------------------------------------------------------ Go regexps

_ASCII_CLASSES = {
    "d": "0-9",
    "s": "\\t\\n\\f\\r ",
    "w": "0-9A-Za-z_",
}
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_WORD = "[0-9A-Za-z_]"
_ASSERTIONS = {
    "A": "(?:\\A)",
    "z": "(?:\\Z)",
    # Go's \b and \B are ASCII word boundaries.
    "b": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "B": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
}
_GO_ESCAPES = {"a": "\\x07", "f": "\\x0c", "t": "\\t", "n": "\\n", "r": "\\r", "v": "\\x0b"}
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")
_FLAGS = re.compile(r"([imsU]*)(?:-([imsU]*))?([:)])")
_cache: dict[str, re.Pattern[str]] = {}


def go_regexp(pattern: str) -> re.Pattern[str]:
    """Compile a Go (RE2) regexp into an equivalent Python pattern.

    Go and Python disagree on enough syntax that passing the text through would
    be wrong: ``$`` (Go: end of text only), ``\\z``, ``\\Q..\\E``, POSIX classes,
    octal escapes, ``{,n}`` (a literal in Go), mid-pattern ``(?flags)``, ASCII-only
    ``\\d \\w \\s \\b`` in Go, and Python-only constructs (lookaround, backrefs,
    possessive repeats) that Go rejects.  Unsupported: Unicode classes ``\\p{..}``
    and the ungreedy flag ``U``.  Raises ValueError for what Go or we reject.
    """
    compiled = _cache.get(pattern)
    if compiled is None:
        try:
            compiled = re.compile(_Translator(pattern).run())
        except re.error as exc:
            raise ValueError(str(exc)) from None
        _cache[pattern] = compiled
    return compiled


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.out: list[str] = []
        # Per open group: [multiline flag in force, flags of mid-group (?flags) scoped groups
        # to close with it, index in out where the group starts].
        self.stack: list[list] = [[False, [], 0]]
        self.last_was_repeat = False
        self.lazy_ok = False
        self.can_repeat = False
        self.atom_start = 0  # index in out of the last atom (what a repetition applies to)
        # Go's flag groups are transparent: "a(?i)*" repeats the a.  Their Python scoped
        # groups are opened only at the next token that is not a repetition.
        self.deferred: list[str] = []
        self.flags_since_repeat = False
        self._pending = ""
        self._pending_neg = False

    def _is_repeat(self) -> bool:
        c = self.p[self.i]
        return c in "*+?" or (c == "{" and _REPEAT.match(self.p, self.i) is not None)

    def _flush(self) -> None:
        for flags in self.deferred:
            self.out.append(f"(?{flags}:")
            self.stack[-1][1].append(flags)
        self.deferred = []

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if not self._is_repeat():
                self._flush()
            if c == "\\":
                self._escape()
            elif c == "[":
                start = len(self.out)
                self._atom(self._class(), start)
            elif c == "(":
                self._open()
            elif c == ")":
                if len(self.stack) == 1:
                    raise ValueError("unexpected )")
                _, extra, start = self.stack.pop()
                self.out.append(")" * (len(extra) + 1))
                self.i += 1
                self._mark_atom(start)
            elif c == "|":
                # Go's mid-group (?flags) stay in force across '|', but the scoped groups
                # standing for them must not swallow the alternation: close and reopen them.
                extra = self.stack[-1][1]
                self.out.append(")" * len(extra) + "|" + "".join(f"(?{f}:" for f in extra))
                self.i += 1
                self._no_atom()
            elif c in "*+?":
                self._repeat(c)
            elif c == "{":
                m = _REPEAT.match(p, self.i)
                if m is None:
                    self._atom("\\{")
                    self.i += 1
                else:
                    lo, hi = int(m.group(1)), m.group(3)
                    if lo > 1000 or (hi and int(hi) > 1000) or (hi and int(hi) < lo):
                        raise ValueError(f"invalid repeat count: {m.group(0)}")
                    self._repeat(m.group(0))
            elif c == "$":
                # Go's $ is the end of the text unless (?m); Python's would also match before a final \n.
                self._atom("(?:$)" if self.stack[-1][0] else "(?:(?!(?s:.)))")
                self.i += 1
            elif c == "^":
                self._atom("(?:^)")  # a group, so that it may be repeated as Go allows
                self.i += 1
            elif c == ".":
                self._atom(".")
                self.i += 1
            else:
                self._atom(re.escape(c))
                self.i += 1
        self._flush()
        if len(self.stack) != 1:
            raise ValueError("missing closing )")
        self.out.append(")" * len(self.stack[0][1]))
        return "".join(self.out)

    def _atom(self, text: str, start: int | None = None) -> None:
        start = len(self.out) if start is None else start
        self.out.append(text)
        self._mark_atom(start)

    def _mark_atom(self, start: int) -> None:
        self.atom_start = start
        self.can_repeat = True
        self.last_was_repeat = False
        self.flags_since_repeat = False

    def _no_atom(self) -> None:
        self.can_repeat = False
        self.last_was_repeat = False
        self.flags_since_repeat = False

    def _repeat(self, op: str) -> None:
        if self.last_was_repeat and not self.flags_since_repeat:
            if op == "?" and self.lazy_ok:
                self.out.append("?")  # the non-greedy modifier
                self.i += 1
                self.lazy_ok = False
                return
            raise ValueError(f"invalid nested repetition operator: {op}")
        if not self.can_repeat:
            raise ValueError(f"missing argument to repetition operator: {op}")
        if self.last_was_repeat:
            # A flag group separated two operators ("a*(?i)+"): Go repeats the repetition.
            self.out[self.atom_start :] = ["(?:" + "".join(self.out[self.atom_start :]) + ")"]
        self.out.append(op)
        self.i += len(op)
        self.last_was_repeat = True
        self.lazy_ok = True
        self.flags_since_repeat = False

    def _open(self) -> None:
        p = self.p
        multiline = self.stack[-1][0]
        start = len(self.out)
        if not p.startswith("(?", self.i):
            self.out.append("(")
            self.stack.append([multiline, [], start])
            self.i += 1
            self._no_atom()
            return
        j = self.i + 2
        if p.startswith("P<", j) or p.startswith("<", j):
            j += 2 if p[j] == "P" else 1
            end = p.find(">", j)
            name = p[j:end] if end >= 0 else ""
            if not re.fullmatch(r"[A-Za-z0-9_]+", name):
                raise ValueError(f"invalid named capture: {p[self.i : end + 1]}")
            self.out.append(f"(?P<{name}>")
            self.stack.append([multiline, [], start])
            self.i = end + 1
            self._no_atom()
            return
        m = _FLAGS.match(p, j)
        if m is None or m.group(2) == "" or (not m.group(1) and m.group(2) is None and m.group(3) == ")"):
            raise ValueError(f"invalid or unsupported Perl syntax: {p[self.i : self.i + 3]}")
        on, off, kind = m.group(1), m.group(2) or "", m.group(3)
        self.i = m.end()
        if not on and not off:
            self.out.append("(?:")
            self.stack.append([multiline, [], start])
            self._no_atom()
            return
        if "U" in on + off:
            raise ValueError("the ungreedy flag (?U) is not supported")
        new_multi = (multiline or "m" in on) and "m" not in off
        flags = on + ("-" + off if off else "")
        if kind == ":":
            self.out.append(f"(?{flags}:")
            self.stack.append([new_multi, [], start])
            self._no_atom()
        else:
            # Go applies (?flags) to the rest of the group; Python takes global flags only at
            # the very start, so a scoped group stands for it, closed with the enclosing group.
            self.stack[-1][0] = new_multi
            self.deferred.append(flags)
            self.flags_since_repeat = True

    def _escape(self) -> None:
        p = self.p
        if self.i + 1 >= len(p):
            raise ValueError("trailing backslash at end of expression")
        e = p[self.i + 1]
        self.i += 2
        if e == "Q":
            end = p.find("\\E", self.i)
            lit = p[self.i :] if end < 0 else p[self.i : end]
            self.i = len(p) if end < 0 else end + 2
            for ch in lit:
                self._atom(re.escape(ch))
            return
        if e in "AzbB":
            self._atom(_ASSERTIONS[e])
            return
        self._atom(self._escape_atom(e, in_class=False))

    def _escape_atom(self, e: str, *, in_class: bool) -> str:
        """Python text for an escape whose letter e was just consumed."""
        p = self.p
        if e in _GO_ESCAPES:
            return _GO_ESCAPES[e]
        if e.lower() in _ASCII_CLASSES:
            body = _ASCII_CLASSES[e.lower()]
            if in_class:
                if e.isupper():
                    raise ValueError(f"negated class \\{e} inside brackets is not supported")
                return body
            return f"[{'^' if e.isupper() else ''}{body}]"
        if e == "x":
            if p.startswith("{", self.i):
                end = p.find("}", self.i)
                digits = p[self.i + 1 : end] if end >= 0 else ""
                if not digits or any(d not in "0123456789abcdefABCDEF" for d in digits):
                    raise ValueError("invalid escape sequence: \\x{")
                value = int(digits, 16)
                self.i = end + 1
            else:
                digits = p[self.i : self.i + 2]
                if len(digits) != 2 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                    raise ValueError("invalid escape sequence: \\x")
                value = int(digits, 16)
                self.i += 2
            if value > 0x10FFFF:
                raise ValueError("invalid escape sequence: \\x")
            return f"\\U{value:08x}"
        if e in "01234567":
            # Go: \0 and \1..\7 followed by more digits are octal (up to three digits);
            # a lone \1..\7 would be a backreference, which RE2 rejects.
            if e != "0" and not (self.i < len(p) and p[self.i] in "01234567"):
                raise ValueError(f"invalid escape sequence: \\{e}")
            digits = e
            while len(digits) < 3 and self.i < len(p) and p[self.i] in "01234567":
                digits += p[self.i]
                self.i += 1
            return f"\\U{int(digits, 8):08x}"
        if e in "pP":
            raise ValueError("Unicode classes (\\p, \\P) are not supported")
        if e == "C":
            return "(?s:.)" if not in_class else "\\x00-\\U0010ffff"
        if e.isascii() and not e.isalnum():
            return re.escape(e) if e not in "-]^\\[" else "\\" + e
        raise ValueError(f"invalid escape sequence: \\{e}")

    def _class(self) -> str:
        p = self.p
        self.i += 1
        items: list[str] = []  # members, as Python class text
        negs: list[str] = []  # negated members ([:^alpha:], \D, \W, \S), as the class they exclude
        negate = p.startswith("^", self.i)
        if negate:
            self.i += 1
        first = True
        while True:
            if self.i >= len(p):
                raise ValueError("missing closing ]")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if p.startswith("[:", self.i):
                end = p.find(":]", self.i + 2)
                name = p[self.i + 2 : end] if end >= 0 else ""
                neg = name.startswith("^")
                key = name[1:] if neg else name
                if end >= 0 and key in _POSIX_CLASSES:
                    (negs if neg else items).append(_POSIX_CLASSES[key])
                    self.i = end + 2
                    continue
            self._pending_neg = False
            lo = self._class_char()
            if p.startswith("-", self.i) and self.i + 1 < len(p) and p[self.i + 1] != "]":
                self.i += 1
                hi = self._class_char()
                if lo is None or hi is None:
                    raise ValueError("invalid character class range")
                if ord(lo) > ord(hi):
                    raise ValueError(f"invalid character class range: {lo}-{hi}")
                items.append(f"\\U{ord(lo):08x}-\\U{ord(hi):08x}")
            elif lo is not None:
                items.append(f"\\U{ord(lo):08x}")
            else:
                (negs if self._pending_neg else items).append(self._pending)
        pos = "".join(items)
        if not negs:
            return "[" + ("^" if negate else "") + pos + "]"
        # Python classes cannot hold a negated member: spell the set out with one-character
        # lookaheads.  [P¬N1¬N2] is P ∪ ¬N1 ∪ ¬N2; its negation is ¬P ∩ N1 ∩ N2.
        if not negate:
            return "(?:" + "|".join(([f"[{pos}]"] if pos else []) + [f"[^{n}]" for n in negs]) + ")"
        guard = f"(?![{pos}])" if pos else ""
        return "(?:" + guard + "".join(f"(?=[{n}])" for n in negs[:-1]) + f"[{negs[-1]}])"

    def _class_char(self) -> str | None:
        """One class member: a character, or None with self._pending set for a class escape."""
        p = self.p
        c = p[self.i]
        if c != "\\":
            self.i += 1
            return c
        if self.i + 1 >= len(p):
            raise ValueError("trailing backslash at end of expression")
        e = p[self.i + 1]
        self.i += 2
        if e in "DWS":
            self._pending = _ASCII_CLASSES[e.lower()]
            self._pending_neg = True
            return None
        if e.lower() in _ASCII_CLASSES or e in "pPC":
            self._pending = self._escape_atom(e, in_class=True)
            return None
        text = self._escape_atom(e, in_class=True)
        if text.startswith("\\U"):
            return chr(int(text[2:], 16))
        if text.startswith("\\x"):
            return chr(int(text[2:], 16))
        return {"\\t": "\t", "\\n": "\n", "\\r": "\r"}.get(text, text[-1])
