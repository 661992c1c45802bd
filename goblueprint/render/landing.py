"""The demo folder's landing page: key figures, a picture of each view, how to open each file.

Formatting only: the caller gathers figures, pictures (data URIs) and file lists.  One
self-contained page: inline CSS, images as data URIs, no script at all, and a policy
that forbids every fetch, so it opens the same offline.  Every text from a trace or a
command (function names, error messages) is HTML-escaped.  Deterministic: the same
inputs give the same bytes.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
:root { --fg:#1d2330; --dim:#6b7280; --line:#d9dde5; --bar:#f1f3f7; --ok:#2e9e5b; --bad:#b0243b; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fcfcfd;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
header { padding: 18px 28px 12px; background: var(--bar); border-bottom: 1px solid var(--line); }
h1 { margin: 0 0 4px; font-size: 22px; }
h2 { font-size: 16px; margin: 26px 0 10px; }
main { padding: 0 28px 28px; max-width: 1280px; }
.dim { color: var(--dim); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 10px; margin-top: 14px; }
.fig { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.fig .v { font-size: 20px; font-weight: 650; white-space: nowrap; }
.fig .k { color: var(--dim); font-size: 12.5px; }
.fig .n { color: var(--dim); font-size: 11.5px; margin-top: 2px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(370px, 1fr)); gap: 14px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; display: flex; flex-direction: column; gap: 6px; }
.card.failed { border-color: var(--bad); }
.card.skipped { opacity: .7; }
.card h3 { margin: 0; font-size: 15px; }
.card img { width: 100%; height: 170px; object-fit: contain; background: #fcfcfd; border: 1px solid #eef0f4; border-radius: 4px; }
.card .nopic { height: 170px; display: flex; align-items: center; justify-content: center; color: var(--dim);
  background: #f7f8fa; border: 1px dashed var(--line); border-radius: 4px; font-size: 12.5px; padding: 8px; text-align: center; }
.card .open { background: var(--bar); border-radius: 5px; padding: 6px 8px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 3px 0 0; }
.card .file { margin-top: 4px; }
.card .excerpt { height: 170px; overflow: hidden; margin: 0; padding: 6px 8px; font-size: 10.5px; line-height: 1.35;
  background: #fcfcfd; border: 1px solid #eef0f4; border-radius: 4px; color: #334; white-space: pre; }
.card .cap { font-size: 12.5px; }
.status { font-size: 12px; }
.status.ok { color: var(--ok); }
.status.failed { color: var(--bad); }
.files li { margin: 2px 0; }
pre.summary { background: var(--bar); padding: 12px; border-radius: 6px; overflow: auto; }
"""


@dataclass(frozen=True)
class Figure:
    label: str
    value: str
    note: str = ""


@dataclass(frozen=True)
class ViewFile:
    name: str  # file or folder name, relative to the page
    status: str  # "ok", "skipped", "failed"
    message: str = ""
    how: str = ""  # how to open it, one command or instruction per line


@dataclass(frozen=True)
class ViewCard:
    """One view, in one or more files (an HTML page and its JSON, a trace in two formats)."""

    title: str
    files: tuple[ViewFile, ...]
    picture: str | None = None  # data: URI
    caption: str = ""  # what the picture shows, or why there is none
    excerpt: str = ""  # a text view's first lines, shown instead of a picture


@dataclass
class Landing:
    title: str
    subtitle: str
    figures: list[Figure] = field(default_factory=list)
    cards: list[ViewCard] = field(default_factory=list)
    capture_files: list[tuple[str, str]] = field(default_factory=list)  # (path, how to open)
    summary_text: str = ""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _file(f: ViewFile) -> str:
    name = _e(f.name)
    link = f"<a href='{name}'>{name}</a>" if f.status == "ok" else f"<span>{name}</span>"
    if f.status != "ok":
        return f"<div class='file'>{link} <span class='status {_e(f.status)}'>{_e(f.status)}: {_e(f.message)}</span></div>"
    how = f"<pre class='open'>{_e(f.how)}</pre>" if f.how else ""
    return f"<div class='file'>{link}{how}</div>"


def _card(c: ViewCard) -> str:
    states = {f.status for f in c.files}
    state = "ok" if "ok" in states else "failed" if "failed" in states else "skipped"
    if c.picture:
        pic = f"<img src='{_e(c.picture)}' alt='{_e(c.caption or c.title)}'>"
        pic += f"<div class='dim cap'>{_e(c.caption)}</div>" if c.caption else ""
    elif c.excerpt:
        pic = f"<pre class='excerpt'>{_e(c.excerpt)}</pre>"
    else:
        pic = f"<div class='nopic'>{_e(c.caption or 'no picture for this view')}</div>"
    names = " ".join(_e(f.name) for f in c.files)
    return (
        f"<section class='card {state}' data-files='{names}'><h3>{_e(c.title)}</h3>"
        f"{pic}{''.join(_file(f) for f in c.files)}</section>"
    )


def landing_html(page: Landing) -> str:
    figures = "".join(
        f"<div class='fig'><div class='v'>{_e(f.value)}</div><div class='k'>{_e(f.label)}</div>"
        + (f"<div class='n'>{_e(f.note)}</div>" if f.note else "")
        + "</div>"
        for f in page.figures
    )
    files = "".join(
        f"<li><a href='{_e(p)}'>{_e(p)}</a>" + (f" — <code>{_e(how)}</code>" if how else "") + "</li>"
        for p, how in page.capture_files
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{_CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(page.title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(page.title)}</h1><div class='dim'>{_e(page.subtitle)}</div>"
        f"<div class='figures' id='figures'>{figures}</div></header><main>"
        "<h2>Views</h2><p class='dim'>Every file is in this folder; the commands run from here. "
        "Nothing on this page or in the HTML views needs a network.</p>"
        f"<div class='cards' id='views'>{''.join(_card(c) for c in page.cards)}</div>"
        f"<h2>Capture</h2><ul class='files'>{files}</ul>"
        f"<pre class='summary'>{_e(page.summary_text)}</pre>"
        "</main></body></html>\n"
    )
