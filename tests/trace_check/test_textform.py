"""Text-form traces, txtar files, Go literals and Go regexps, against Go where Go answers."""

from __future__ import annotations

import random

import pytest

from goblueprint.errors import TraceError
from goblueprint.trace import spec, textform
from goblueprint.trace.reader import Reader

SIMPLE = b"""\
-- expect --
SUCCESS
-- trace --
Trace Go1.22
# a comment, then a blank line

EventBatch gen=1 m=0 time=0 size=4
ProcStatus dt=1 p=0 pstatus=1
EventBatch gen=1 m=18446744073709551615 time=0 size=5
Frequency freq=15625000
EventBatch gen=1 m=18446744073709551615 time=0 size=8
Stacks
Stack id=1 nframes=1
\tpc=4 func=1 file=2 line=3
EventBatch gen=1 m=18446744073709551615 time=0 size=15
Strings
String id=1
\tdata="f\\x00\\u00e9"
String id=2
\tdata="f.go"
"""


def test_parse_and_encode_by_hand():
    golden = textform.parse_test_file(SIMPLE)
    assert not golden.expect_failure and golden.version == 22
    w = golden.wire
    assert w.startswith(spec.header(22))
    body = w[len(spec.header(22)) :]
    # EventBatch with m = 2**64-1 is 10 varint bytes; the stack's four frame fields follow nframes.
    assert body[:5] == bytes([spec.EV_EVENT_BATCH, 1, 0, 0, 4])
    assert bytes([spec.EV_STACK, 1, 1, 4, 1, 2, 3]) in body
    assert body.endswith(
        bytes([spec.EV_STRING, 1, 4]) + b"f\x00\xc3\xa9" + bytes([spec.EV_STRING, 2, 4]) + b"f.go"
    )
    # Go's reader accepts it: a Sync, the proc status transition, the closing Sync.
    assert [ev.kind.name for ev in Reader(w)] == ["SYNC", "STATE_TRANSITION", "SYNC"]


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (b"Trace Go1.22\nNoSuch x=1\n", "unidentified event: NoSuch", 2),
        (b"Trace Go1.99\n", "unknown or unsupported Go version 1.99", 1),
        (b"Tracer Go1.22\n", "failed to parse header", 1),
        (b"Trace Go1.22 extra\n", "unexpected non-space at the end of the header", 1),
        (b"Trace Go1.22\nProcStop dt=x\n", 'failed to parse argument value "x" for arg "dt"', 2),
        (b"Trace Go1.22\nProcStop dt=-1\n", "failed to parse argument value", 2),
        (b"Trace Go1.22\nProcStop dt=18446744073709551616\n", "failed to parse argument value", 2),
        (b"Trace Go1.22\nProcStop t=1\n", 'expected argument "dt", but got "t"', 2),
        (b"Trace Go1.22\nProcStop dt=1 p=2\n", "unexpected non-space at the end of an event", 2),
        (b"Trace Go1.22\nProcStop dt=1 # no comments after arguments\n", "unexpected non-space", 2),
        (b"Trace Go1.22\nProcStop\n", "no argument", 2),
        (b"Trace Go1.22\nProcStop dt\n", "malformed argument", 2),
        (b"Trace Go1.22\n\nStack id=1 nframes=2\n\tpc=1 func=1 file=1 line=1\n", "unexpected EOF while reading stack", 3),
        (b"Trace Go1.22\nStack id=1 nframes=1\n\tpc=1 func=1 line=1\n", 'expected argument "file"', 3),
        (b"Trace Go1.22\nString id=1\n", "unexpected EOF while reading data for String", 2),
        (b"Trace Go1.22\nString id=1\n\tdatum=\"x\"\n", "malformed data", 3),
        (b"Trace Go1.22\nString id=1\n\tdata=\"x\n", "failed to parse data", 3),
    ],
)  # fmt: skip
def test_text_errors_name_the_line(text, message, line):
    with pytest.raises(TraceError) as info:
        textform.parse_text(text)
    assert message in str(info.value) and f"line {line})" in str(info.value)


def test_test_file_errors_count_lines_of_the_whole_file():
    data = b"-- expect --\nSUCCESS\n-- trace --\nTrace Go1.22\nBogus\n"
    with pytest.raises(TraceError, match=r"unidentified event: Bogus \(line 5\)"):
        textform.parse_test_file(data)
    with pytest.raises(TraceError, match="wrong number of files"):
        textform.parse_test_file(b"-- expect --\nSUCCESS\n")
    with pytest.raises(TraceError, match="bad filename tracy"):
        textform.parse_test_file(b"-- expect --\nSUCCESS\n-- tracy --\nTrace Go1.22\n")
    with pytest.raises(TraceError, match="bad expectation header line 2"):
        textform.parse_test_file(b"-- expect --\nMAYBE\n-- trace --\nTrace Go1.22\n")
    with pytest.raises(TraceError, match="not correctly quoted"):
        textform.parse_test_file(b"-- expect --\nFAILURE oops\n-- trace --\nTrace Go1.22\n")
    with pytest.raises(TraceError, match="not a valid regexp"):
        textform.parse_test_file(b'-- expect --\nFAILURE "a**"\n-- trace --\nTrace Go1.22\n')


def test_txtar_rules():
    files = textform.parse_txtar(b"comment\n-- a --\nx\n-- b --  \n--  c  --\ny")
    # "-- b --  " is not a marker (it must end in " --"); the last file gains a newline.
    assert files == [("a", b"x\n-- b --  \n", 3), ("c", b"y\n", 6)]
    assert textform.parse_txtar(b"no files") == []


def test_crlf_lines_like_bufio_scanner():
    text = SIMPLE[SIMPLE.index(b"Trace Go1.22") :]
    assert textform.parse_text(text.replace(b"\n", b"\r\n")) == textform.parse_text(text)
    # txtar itself is not CRLF-aware (as in Go): "-- expect --\r" is no marker.
    assert textform.parse_txtar(SIMPLE.replace(b"\n", b"\r\n")) == []


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ('"plain"', b"plain"),
        ('"\\a\\b\\f\\n\\r\\t\\v\\\\\\""', b'\a\b\f\n\r\t\v\\"'),
        ('"\\x00\\xff\\377\\101"', b"\x00\xff\xffA"),
        ('"\\u00e9\\U0001F600"', "é😀".encode()),
        ("`raw\\n`", b"raw\\n"),
        ("`a\rb`", b"ab"),
        ("'x'", b"x"),
    ],
)
def test_go_unquote(literal, value):
    assert textform.go_unquote(literal) == value


@pytest.mark.parametrize(
    "literal", ['"', '"a', 'a"', '"a"b"', '"\\q"', '"\\400"', '"\\ud800"', "'ab'", '"\n"']
)
def test_go_unquote_rejects(literal):
    with pytest.raises(ValueError):
        textform.go_unquote(literal)


# ----------------------------------------------------------------------- regexps

# Pieces that combine into patterns exercising where Go and Python differ.
TOKENS = [
    "a", "b", "A", ".", " ", "\\n", "^", "$", "\\b", "\\B", "\\d", "\\D", "\\w", "\\s", "\\S",
    "[ab]", "[^a]", "[a-c]", "[[:alpha:]]", "[[:digit:]_]", "[]a]", "[\\d.]", "(?i)", "(?m)", "(?s)",
    "(?i:", "(?:", "(", ")", "|", "*", "+", "?", "*?", "{2}", "{,2}", "{1,}", "{1,2}", "\\z", "\\A",
    "\\Q.*\\E", "\\x41", "\\x{42}", "\\101", "\\.", "\\1", "(?P<n>", "(?=", "**", "{",
    "[[:^alpha:]]", "[^[:^digit:]a]", "[\\D]", "[^\\Wb]", "[\\Sa]", "[[:^space:][:^word:]]",
]  # fmt: skip
TEXTS = ["", "a", "ab", "AB", "a\nb", "b\n", "abab", "1 a", "x.y", "A.*", "aa{,2}", "_", "é"]
HAND = [
    (".*expected a proc but didn't have one.*", "x: expected a proc but didn't have one"),
    ("a$", "a\n"),
    ("(?m)a$", "a\nb"),
    ("x(?i)y|z", "Z"),
    ("\\d", "\u0663"),
    ("\\w+\\b", "é"),
    ("a{,2}", "a{,2}"),
    ("(?i)é", "É"),
]


def _ours(pattern: str, text: str) -> str:
    try:
        compiled = textform.go_regexp(pattern)
    except ValueError:
        return "error"
    return "match" if compiled.search(text) else "nomatch"


@pytest.mark.slow
def test_go_regexp_agrees_with_go(gohelper):
    rng = random.Random(20261202)  # fixed: the same patterns on every run
    pairs = list(HAND)
    for _ in range(1500):
        pattern = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 6)))
        pairs.append((pattern, rng.choice(TEXTS)))
    go = gohelper.regexp(pairs)
    assert len(go) == len(pairs)
    wrong = [(p, t, g, _ours(p, t)) for (p, t), g in zip(pairs, go, strict=True) if _ours(p, t) != g]
    assert not wrong, wrong[:10]


def test_go_regexp_unsupported_features_are_errors_not_silent():
    for pattern in ("\\pL", "\\p{Greek}", "(?U)a*"):
        with pytest.raises(ValueError, match="not supported"):
            textform.go_regexp(pattern)


@pytest.mark.slow
def test_by_hand_trace_matches_go(gohelper, tmp_path):
    path = tmp_path / "simple.test"
    path.write_bytes(SIMPLE)
    verdicts = gohelper.golden(tmp_path, [path])
    assert verdicts == {"simple.test": "SUCCESS"}
    assert (tmp_path / "simple.test.wire").read_bytes() == textform.parse_test_file(SIMPLE).wire


# ------------------------------------------------- random text traces vs Go's raw.TextReader

_SPACES = [" ", "  ", "\t", " \t ", "\v", "\u00a0", "\u2003", "\x85", "\x1c"]  # \x1c: not a Go space
_QUOTED = ['"plain"', '"a\\x00\\xff\\n\\t\\"q\\""', '"\\u00e9\\U0001F600"', "`raw \\n`", '"\\377\\000"',
           '"bad \\q"', '"unterminated', "'c'", '""', '"tab\there"']  # fmt: skip
_NUMBERS = ["0", "1", "7", "127", "128", "300", "18446744073709551615", "18446744073709551616", "-1", "+1",
            "1_0", "0x1", "", "٣"]  # fmt: skip


def _random_text(rng: random.Random) -> str:
    version = rng.choice([22, 23, 25, 26, 26, 21, 24])
    specs = spec.VERSION_SPECS.get(version) or spec.SPECS
    named = [(i, s) for i, s in enumerate(specs) if s.name]
    sp = lambda: rng.choice(_SPACES) if rng.random() < 0.1 else " "  # noqa: E731
    num = lambda: rng.choice(_NUMBERS) if rng.random() < 0.15 else str(rng.choice([0, 1, 2, 5, 200, 70000]))  # noqa: E731
    lines = [f"Trace{sp()}Go1.{version}" + (" x" if rng.random() < 0.03 else "")]
    for _ in range(rng.randint(0, 12)):
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "# comment", "   ", "\t# indented comment"]))
            continue
        _, es = rng.choice(named)
        args = list(es.args)
        if rng.random() < 0.05 and args:
            args[rng.randrange(len(args))] = "wrong"
        nframes = rng.randint(0, 2)
        values = [str(nframes) if es.is_stack and i == 1 else num() for i in range(len(args))]
        if rng.random() < 0.04:
            values = values[:-1]  # a missing argument
        lines.append(es.name + "".join(f"{sp()}{a}={v}" for a, v in zip(args, values, strict=False)))
        if es.is_stack:
            for _ in range(nframes):
                lines.append("\t" + " ".join(f"{f}={num()}" for f in ("pc", "func", "file", "line")))
        if es.has_data and rng.random() < 0.97:
            lines.append(f"\tdata{sp()}={sp()}{rng.choice(_QUOTED)}")
    return "\n".join(lines) + rng.choice(["\n", "", "\r\n"])


@pytest.mark.slow
def test_random_text_traces_encode_like_go(gohelper, tmp_path):
    rng = random.Random(7)  # fixed: the same 400 traces on every run
    paths = []
    for i in range(400):
        path = tmp_path / f"t{i:03d}.test"
        path.write_bytes(b"-- expect --\nSUCCESS\n-- trace --\n" + _random_text(rng).encode())
        paths.append(path)
    out = tmp_path / "wire"
    out.mkdir()
    go = gohelper.golden(out, paths)
    accepted = 0
    for path in paths:
        try:
            ours = textform.parse_test_file(path.read_bytes()).wire
        except TraceError as exc:
            assert go[path.name].startswith("PARSEERROR"), (path.name, str(exc), go[path.name])
            continue
        assert not go[path.name].startswith("PARSEERROR"), (path.name, go[path.name])
        assert ours == (out / f"{path.name}.wire").read_bytes(), path.name
        accepted += 1
    # Both outcomes occur in the sample, so the comparison means something either way.
    print(f"{accepted} of {len(paths)} accepted")
    assert 40 < accepted < 360, accepted


@pytest.mark.slow
def test_header_version_wraps_to_uint32_like_go(gohelper, tmp_path):
    # Go parses the number as a uint64 and keeps it as a uint32 trace version.
    data = f"-- expect --\nSUCCESS\n-- trace --\nTrace Go1.{(1 << 32) + 22}\n".encode()
    path = tmp_path / "wrap.test"
    path.write_bytes(data)
    assert "PARSEERROR" not in gohelper.golden(tmp_path, [path])["wrap.test"]
    golden = textform.parse_test_file(data)
    assert golden.version == 22 and golden.wire == (tmp_path / "wrap.test.wire").read_bytes()


@pytest.mark.slow
def test_line_length_limit_of_bufio_scanner(gohelper, tmp_path):
    paths = []
    for n in (65535, 65536):
        path = tmp_path / f"line{n}.test"
        path.write_bytes(b"-- expect --\nSUCCESS\n-- trace --\nTrace Go1.22\n#" + b"x" * (n - 1) + b"\n")
        paths.append(path)
    go = gohelper.golden(tmp_path, paths)
    assert "PARSEERROR" not in go["line65535.test"] and "token too long" in go["line65536.test"]
    textform.parse_test_file(paths[0].read_bytes())
    with pytest.raises(TraceError, match=r"line 5: token too long"):
        textform.parse_test_file(paths[1].read_bytes())
