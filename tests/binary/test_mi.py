"""The gdb/MI record parser on records in the shapes gdb 13 prints (from the
GDB manual's examples), and on lines that are not records."""

from __future__ import annotations

import queue

import pytest

from goblueprint.binary.mi import Gdb, parse_record
from goblueprint.errors import CaptureError


def test_result_and_async_records():
    assert parse_record('12^done,value="5"') == ("12", "^", "done", {"value": "5"})
    assert parse_record("^running") == ("", "^", "running", {})
    stop = parse_record(
        '*stopped,reason="breakpoint-hit",disp="keep",bkptno="1",frame={addr="0x000000000044ea20",'
        'func="runtime.execute",args=[{name="gp",value="0xc000007c00"},{name="inheritTime",value="true"}]},'
        'thread-id="3",stopped-threads="all",core="1"'
    )
    assert stop is not None and stop[2] == "stopped"
    res = stop[3]
    assert res["reason"] == "breakpoint-hit" and res["thread-id"] == "3"
    assert res["frame"]["args"] == [
        {"name": "gp", "value": "0xc000007c00"},
        {"name": "inheritTime", "value": "true"},
    ]
    err = parse_record('7^error,msg="No symbol \\"nosuch\\" in current context."')
    assert err == ("7", "^", "error", {"msg": 'No symbol "nosuch" in current context.'})
    lst = parse_record('9^done,register-names=["rax","rbx",""]')
    assert lst == ("9", "^", "done", {"register-names": ["rax", "rbx", ""]})


def test_non_records_are_ignored():
    assert parse_record('~"GNU gdb (Debian 13.1-3) 13.1\\n"') is None
    assert parse_record("(gdb) ") is None
    assert parse_record("hello from the program") is None
    assert parse_record('3^done,a="unterminated') is None
    assert parse_record("4^done,novalue") is None


def test_a_run_gdb_aborts_after_running_is_an_error_not_a_wait():
    # gdb answers ^running, then ^error when it cannot insert a breakpoint: no *stopped follows.
    gdb = Gdb.__new__(Gdb)  # the record stream alone, no gdb process
    gdb.lines, gdb.console, gdb.log = queue.Queue(), [], []
    for line in ['3^running', '*running,thread-id="all"', "(gdb) ", '&"Warning:\\n"',
                 '&"Cannot insert breakpoint 1.\\n"', '&"Cannot access memory at address 0x44cf40\\n"',
                 '3^error,msg="Command aborted."']:  # fmt: skip
        gdb.lines.put(line)
    with pytest.raises(
        CaptureError, match=r"Command aborted\. \(Warning: Cannot insert breakpoint 1\. Cannot"
    ):
        gdb.wait_stopped(1)
