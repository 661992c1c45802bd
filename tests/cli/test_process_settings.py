"""Process-wide settings the CLI makes before any heavy library loads."""

from __future__ import annotations

import os
import subprocess
import sys

_PROBE = """
import sys
import goblueprint.cli
loaded = sorted(m for m in ("numpy", "polars", "pyarrow", "duckdb") if m in sys.modules)
import os
print(",".join(loaded) or "-", os.environ.get("_RJEM_MALLOC_CONF"), os.environ.get("OPENBLAS_NUM_THREADS"))
"""


def _probe(env: dict[str, str]) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_allocator_and_blas_settings_come_before_the_libraries_that_read_them() -> None:
    # jemalloc (polars) and OpenBLAS (numpy) read their settings when they load: the CLI must
    # set them while neither is loaded yet.
    env = {k: v for k, v in os.environ.items() if k not in ("_RJEM_MALLOC_CONF", "OPENBLAS_NUM_THREADS")}
    loaded, malloc_conf, blas = _probe(env)
    assert loaded == "-"
    assert "dirty_decay_ms" in malloc_conf
    assert blas == "1"


def test_a_users_allocator_setting_wins() -> None:
    env = {**os.environ, "_RJEM_MALLOC_CONF": "narenas:2"}
    assert _probe(env)[1] == "narenas:2"


_POOL_PROBE = """
import goblueprint.cli
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


def _pool(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", _POOL_PROBE], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_arrow_allocates_through_the_system_malloc_a_users_choice_aside() -> None:
    # mimalloc (Arrow's default) keeps freed pages resident until it is called again; glibc's
    # malloc gives them back to malloc_trim between a view's stages.
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    assert _pool(env) == "system"
    assert _pool({**env, "ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}) == "mimalloc"
