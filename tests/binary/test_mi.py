"""The gdb/MI record parser on records in the shapes gdb 13 prints (from the
GDB manual's examples), and on lines that are not records."""

from __future__ import annotations

from goblueprint.binary.mi import parse_record


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
