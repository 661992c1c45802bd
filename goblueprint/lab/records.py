"""Read a lab dump: a 64-byte header, then fixed 64-byte records (see the lab's runtime file).

The file is read with numpy as one structured array; any mismatch with the
layout raises LabError with the byte offset where it was found.
"""

from __future__ import annotations

import errno
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from goblueprint.errors import LabError, PathError

MAGIC = b"GBPLAB01"
VERSION = 1
HEADER = np.dtype(
    [
        ("magic", "S8"),
        ("version", "<u4"),
        ("rec_size", "<u4"),
        ("capacity", "<u8"),
        ("count", "<u8"),
        ("start", "<i8"),
        ("pid", "<i8"),
        ("reason", "<u4"),
        ("pad", "<u4"),
        ("build", "<u8"),
    ]
)
RECORD = np.dtype(
    [
        ("t", "<i8"),
        ("m", "<u8"),
        ("g", "<u8"),
        ("obj", "<u8"),
        ("a", "<u8"),
        ("b", "<u8"),
        ("c", "<u8"),  # caller PC of a status site; a probe's third value
        ("site", "<u4"),
        ("p", "<i4"),
    ]
)
SITES_FILE = "lab.json"


@dataclass
class Dump:
    path: Path
    header: dict[str, Any]
    records: np.ndarray  # RECORD, in reservation order; unfinished slots removed
    unfinished: int  # slots reserved but not written when the dump was taken (a crash)

    @property
    def overflow(self) -> int:
        return max(0, self.header["count"] - self.header["capacity"])


def read_dump(path: Path, build_id: int | None = None) -> Dump:
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except OSError as exc:
        raise LabError(f"cannot read {path}: {exc}") from exc
    if data.size < HEADER.itemsize:
        raise LabError(f"{path}: {data.size} bytes, shorter than the 64-byte header", offset=0)
    head = data[: HEADER.itemsize].view(HEADER)[0]
    if bytes(head["magic"]) != MAGIC:
        raise LabError(f"{path}: not a goblueprint lab dump (magic {bytes(head['magic'])!r})", offset=0)
    if int(head["version"]) != VERSION:
        raise LabError(
            f"{path}: dump version {int(head['version'])}, this goblueprint reads {VERSION}", offset=8
        )
    if int(head["rec_size"]) != RECORD.itemsize:
        raise LabError(f"{path}: record size {int(head['rec_size'])}, expected {RECORD.itemsize}", offset=12)
    header = {name: (bytes(head[name]) if name == "magic" else int(head[name])) for name in HEADER.names}
    if build_id is not None and header["build"] != build_id:
        raise LabError(f"{path}: made by another lab build than the site table in {SITES_FILE}", offset=56)
    body = data[HEADER.itemsize :]
    if body.size % RECORD.itemsize:
        whole = body.size // RECORD.itemsize
        raise LabError(
            f"{path}: truncated record {whole} ({body.size % RECORD.itemsize} of {RECORD.itemsize} bytes)",
            offset=HEADER.itemsize + whole * RECORD.itemsize,
        )
    recs = body.view(RECORD)
    expected = min(header["count"], header["capacity"])
    if recs.size != expected:
        raise LabError(
            f"{path}: {recs.size} records where the header announces {expected}",
            offset=HEADER.itemsize + recs.size * RECORD.itemsize,
        )
    done = recs["t"] != 0
    return Dump(path, header, recs[done].copy(), int((~done).sum()))


def find_dump(out_dir: Path) -> Path | None:
    """The dump of the program itself: of several (a program that ran copies of itself), the earliest start."""
    found = sorted(out_dir.glob("lab.*.bin"))
    if not found:
        return None
    starts = []
    for path in found:
        with open(path, "rb") as handle:
            raw = handle.read(HEADER.itemsize)
        start = np.frombuffer(raw, dtype=HEADER)[0]["start"] if len(raw) == HEADER.itemsize else 1 << 62
        starts.append((int(start), path))
    return min(starts)[1]


def load(out_dir: Path) -> tuple[dict[str, Any], Dump]:
    """The site table and the program's dump from a `lab observe` folder."""
    table_path = out_dir / SITES_FILE
    if not out_dir.is_dir():
        raise PathError(out_dir, errno.ENOTDIR if out_dir.exists() else errno.ENOENT)
    try:
        table = json.loads(table_path.read_text())
    except FileNotFoundError as exc:
        raise LabError(
            f"{out_dir} is not a lab folder (no {SITES_FILE}: a `lab observe -o` folder is)"
        ) from exc
    except OSError as exc:
        raise PathError.from_os(table_path, exc) from exc
    except ValueError as exc:
        raise LabError(f"{table_path}: not JSON: {exc}") from exc
    if table.get("error_records"):
        raise LabError(table["error_records"])
    path = find_dump(out_dir)
    if path is None:
        raise LabError(f"{out_dir}: no lab records ({table.get('no_dump') or 'the program wrote none'})")
    return table, read_dump(path, table.get("build_id"))
