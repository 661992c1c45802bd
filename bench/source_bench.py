"""Speed of source blueprints: cold (helper run, no facts cache) and warm (facts cached).

Usage: .venv/bin/python bench/source_bench.py [--go 1.27] [--repeat 5]

Cold = the facts of GOROOT/src/runtime computed by the Go helper (already built)
plus both state machines and the call graph; warm = the same from the facts cache,
in a fresh process each time (as a CLI call would be).  The helper build itself
(once per helper version) is reported separately.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BLUEPRINT = """
import sys
from goblueprint.source import facts, states, calls
root = facts.resolve(go=sys.argv[1])
f = facts.load(root)
n = sum(len(states.blueprint(f, m).transitions) for m in ("g", "p"))
g = calls.CallGraph(f)
print(n, sum(len(v) for v in g.out.values()))
"""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(env: dict[str, str], go: str) -> tuple[float, float, str]:
    """Wall time and CPU time (user+sys of the process and its children, e.g. the helper)."""
    cpu0, start = _child_cpu(), time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", BLUEPRINT, go], env=env, capture_output=True, text=True, check=True
    )
    return time.perf_counter() - start, _child_cpu() - cpu0, out.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--go", default="1.27")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from goblueprint import toolchain
    from goblueprint.source import helper

    start = time.perf_counter()
    helper.helper_path()
    print(f"helper ready (built or found):        {time.perf_counter() - start:6.2f} s")
    real_cache = toolchain.cache_dir()
    colds, warms, cold_cpus, warm_cpus = [], [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            # A fresh cache holding only the toolchains and the built helper: facts are cold.
            for sub in ("toolchains", "source", "gocache"):
                if (real_cache / sub).exists() and sub != "source":
                    os.symlink(real_cache / sub, Path(tmp) / sub)
            (Path(tmp) / "source").mkdir()
            hp = helper.helper_path()
            (Path(tmp) / "source" / hp.parent.name).symlink_to(hp.parent)
            env = dict(os.environ, GOBLUEPRINT_CACHE=tmp, PYTHONPATH=str(ROOT))
            cold, cold_cpu, out = timed(env, args.go)
            warm, warm_cpu, out2 = timed(env, args.go)
            assert out == out2, (out, out2)
            colds.append(cold)
            warms.append(warm)
            cold_cpus.append(cold_cpu)
            warm_cpus.append(warm_cpu)
    transitions, edges = out.split()
    print(f"Go {args.go}: {transitions} transitions (g+p), {edges} call edges")
    print(f"cold (helper run + analysis), median of {args.repeat}: {statistics.median(colds):6.2f} s"
          f"  (min {min(colds):.2f}, max {max(colds):.2f})")  # fmt: skip
    print(f"warm (facts cached), median of {args.repeat}:          {statistics.median(warms):6.2f} s"
          f"  (min {min(warms):.2f}, max {max(warms):.2f})")  # fmt: skip
    print(
        f"CPU time (user+sys), median: cold {statistics.median(cold_cpus):.2f} s, "
        f"warm {statistics.median(warm_cpus):.2f} s   [load average {os.getloadavg()[0]:.1f}]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
