"""The demo folder's landing page, made from real views of a real trace: figures, pictures, how to open."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from goblueprint.capture import demo

DATA = Path(__file__).resolve().parent.parent / "capture" / "data"
VIEWS = {
    "trace-stats.json",
    "metrics.json",
    "parquet",
    "schedtrace.json",
    "pprof-sync.pb.gz",
    "trace.perfetto-trace",
    "layout-g.txt",  # needs the binary, which this folder has not: a skipped step with its reason
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory, go_trace) -> tuple[Path, list[demo.StepResult]]:
    out = tmp_path_factory.mktemp("landing")
    values = {
        "trace": str(go_trace("sched")),
        "schedtrace": str(DATA / "schedtrace-go1.27.3.log"),
        "go": "1.27",
    }
    results = demo.run_steps(out, values, jobs=1, extra=True, only=VIEWS)
    assert {r.step.name: r.status for r in results if r.status != "ok"} == {"layout-g.txt": "skipped"}
    page = demo.index_html("landing <test>", "summary <b>", results, [], out)
    (out / "index.html").write_text(page, encoding="utf-8")
    return out, results


def test_figures_are_the_views_numbers(folder):
    out, _results = folder
    page = (out / "index.html").read_text()
    metrics = json.loads((out / "metrics.json").read_text())
    stats = json.loads((out / "trace-stats.json").read_text())
    figures = dict(re.findall(r"<div class='v'>([^<]*)</div><div class='k'>([^<]*)</div>", page))
    by_label = {k: v for v, k in figures.items()}
    assert by_label["goroutines"] == f"{metrics['goroutines']:,}"
    lat = metrics["sched_latency"]
    assert by_label["sched latency p50 / p99"] == f"{demo._dur(lat['p50'])} / {demo._dur(lat['p99'])}"
    stw = [p for p in metrics["pauses"] if p["kind"] == "stw"]
    assert by_label["GC pauses (stop-the-world)"].startswith(f"{sum(p['count'] for p in stw)} · ")
    mean = sum(p["utilization"] for p in metrics["procs"]) / len(metrics["procs"])
    assert by_label["P utilisation (running goroutines)"] == f"{mean:.0%}"
    assert by_label["trace size"] == demo._bytes(stats["bytes"])
    assert by_label["trace duration"] == demo._dur(stats["time_span_ns"])


def test_landing_page_is_self_contained_and_deterministic(folder):
    out, results = folder
    page = (out / "index.html").read_text()
    assert page == demo.index_html("landing <test>", "summary <b>", results, [], out)
    # Every picture is inline; nothing on the page could load from anywhere.
    sources = re.findall(r"\bsrc='([^']*)'", page)
    assert len(sources) >= 5 and all(s.startswith("data:image/") for s in sources)
    assert "<script" not in page and "<b>" not in page and "<test>" not in page
    assert "default-src 'none'" in page


def test_how_to_open_commands_work(folder):
    out, _results = folder
    page = (out / "index.html").read_text()
    how = re.sub(r"<[^>]+>", "\n", page).replace("&quot;", '"').replace("&#x27;", "'").replace("&gt;", ">")
    assert "go tool pprof -http=: pprof-sync.pb.gz" in how
    assert "ui.perfetto.dev → Open trace file → trace.perfetto-trace" in how
    assert "SELECT * FROM 'parquet/intervals.parquet'" in how
    # The DuckDB line runs as printed, from the folder, and finds the goroutines.
    line = next(ln for ln in how.splitlines() if ln.startswith("python -c") and "duckdb" in ln)
    argv = shlex.split(line)
    run = subprocess.run([sys.executable, *argv[1:]], cwd=out, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "main.main" in run.stdout


@pytest.mark.browser
def test_landing_page_opens_offline_with_every_picture(folder, browser):
    out, results = folder
    index = out / "index.html"
    ctx = browser.new_context(viewport={"width": 1300, "height": 900})
    try:
        page = ctx.new_page()
        console, requests = [], []
        page.on("console", lambda m: console.append((m.type, m.text)))
        page.on("pageerror", lambda e: console.append(("pageerror", str(e))))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(index.resolve().as_uri())
        page.wait_for_load_state("load")
        assert console == [] and requests == [index.resolve().as_uri()], (console, requests)
        images = page.eval_on_selector_all("img", "xs => xs.map(x => [x.complete, x.naturalWidth])")
        assert len(images) >= 5 and all(ok and w > 0 for ok, w in images), images
        # One card per view; each written file is a link to a file that exists.
        hrefs = page.eval_on_selector_all("#views a", "xs => xs.map(x => x.getAttribute('href'))")
        assert sorted(hrefs) == sorted(r.step.name for r in results if r.status == "ok")
        assert all((out / h).exists() for h in hrefs)
        skipped = page.text_content("section[data-files='layout-g.txt']")
        assert "skipped" in skipped and "no binary" in skipped
        assert page.title() == "landing <test>"
    finally:
        ctx.close()


def test_a_damaged_artefact_costs_only_its_picture(folder, tmp_path):
    import shutil

    out, results = folder
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "parquet" / "intervals.parquet").write_bytes(b"PAR1 not really")
    page = demo.index_html("t", "", results, [], copy)
    card = re.search(r"<section class='card ok' data-files='trace.perfetto-trace'>.*?</section>", page, re.S)
    assert card and "no picture: " in card.group(0) and "<img" not in card.group(0)
    assert page.count("<img") >= 4  # the other views keep theirs
