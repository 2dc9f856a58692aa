"""A local, blind labelling page (``evallab label ITEMS --out labels.csv --annotator NAME``).

The server (:mod:`aiohttp.web`, bound to 127.0.0.1) shows one item at a time — a pairwise item's instruction and
its two outputs in a random order drawn per item and recorded with the label, a pointwise item's rubric and answer
(pass / warn / fail), or a scale item's answer (1–k) — and nothing else from the items table: no judge verdict, no
gold, no other annotator's label. Every request must carry the one-time token drawn at start (``?token=`` in the
page's URL, which the page passes on to its API calls); any other request is answered 403 and writes nothing.

The labels file is append-only CSV, one row per action (:data:`LABEL_COLUMNS`): ``label``, ``skip`` or ``undo``
(an ``undo`` row cancels that annotator's latest label or skip still standing). Each row is written, flushed and
fsynced as it is given, so a kill loses at most the label being typed; a restart replays the annotator's rows and
resumes at the first item they have neither labelled nor skipped. Several annotators may write one file in turn
(rows carry ``annotator``), but one server at a time: the file's lock is the judge runner's (a second server is
refused with :class:`~evallab.errors.OutputBusyError`, as ``evallab judge`` refuses a second run).

The file format and :func:`~evallab.importers._labels.read_labels` (the tidy verdict table, the annotator as the rater;
``evallab import labels.csv``) live in :mod:`evallab.importers._labels`.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evallab.errors import DataError, OutputBusyError
from evallab.importers._labels import LABEL_COLUMNS, NOT_SURE, _read_rows, standing

KINDS = ("pairwise", "pointwise", "scale")
_SHOWN = {"pairwise": ("instruction", "output_1", "output_2"),
          "pointwise": ("rubric", "pass_criteria", "fail_criteria", "answer"),
          "scale": ("instruction", "rubric", "answer")}


def _text(v) -> str:
    return "" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v)


def load_items(path: str | Path, *, scale: int | None = None) -> tuple[str, list[dict]]:
    """The items to label: ``(kind, [{"item_id", shown fields...}])`` in the file's order.

    Pairwise items need ``item_id, instruction`` (or ``input``) ``, output_1, output_2``; pointwise items
    ``item_id, answer`` (``rubric``, ``pass_criteria``, ``fail_criteria`` shown when present); with ``scale=k``
    (2 <= k <= 9) pointwise-shaped items are rated 1–k. Only these columns reach the page (blind labelling).

    Raises
    ------
    DataError
        Missing columns, no ``item_id``, a duplicate ``item_id`` (naming it), or ``scale`` outside 2–9.
    """
    from evallab.datasets._generic import read_table
    from evallab.judges._items import detect_kind

    df = read_table(path)
    if "input" in df.columns and "instruction" not in df.columns:
        df = df.rename(columns={"input": "instruction"})
    if "item_id" not in df.columns:
        raise DataError("no item_id column; expected one id per item", path=str(path), column="item_id")
    kind = detect_kind(df)
    if scale is not None:
        if not 2 <= scale <= 9:
            raise DataError(f"scale={scale}; expected 2 to 9 (one key per point)")
        if kind != "pointwise":
            raise DataError("a scale item needs an answer column (and no output_1/output_2)", path=str(path),
                            column="answer")
        kind = "scale"
    if kind == "pairwise" and "instruction" not in df.columns:
        raise DataError("pairwise items need an instruction (or input) column", path=str(path), column="instruction")
    ids = df["item_id"].astype(str)
    dup = ids[ids.duplicated()]
    if len(dup):
        raise DataError(f"item_id {dup.iloc[0]!r} appears twice; expected one row per item", path=str(path),
                        column="item_id", row=int(dup.index[0]) + 1)
    cols = [c for c in _SHOWN[kind] if c in df.columns]
    items = [{"item_id": i, **{c: _text(r[c]) for c in cols}} for i, (_, r) in zip(ids, df.iterrows(), strict=True)]
    return kind, items


@dataclass
class Session:
    """One annotator's labelling of one items file into one labels file (the server's state)."""

    kind: str
    items: list[dict]
    out: Path
    annotator: str
    scale: int | None = None
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    _orders: dict = field(default_factory=dict)
    _rng: secrets.SystemRandom = field(default_factory=secrets.SystemRandom)

    def __post_init__(self) -> None:
        self._stack = standing(_read_rows(self.out), self.annotator)

    def choices(self) -> list[str]:
        if self.kind == "pairwise":
            return ["left", "right", "tie", NOT_SURE]
        if self.kind == "pointwise":
            return ["pass", "warn", "fail", NOT_SURE]
        return [str(k) for k in range(1, self.scale + 1)] + [NOT_SURE]

    def current(self) -> dict | None:
        done = {r["item_id"] for r in self._stack}
        return next((it for it in self.items if it["item_id"] not in done), None)

    def order_of(self, item_id: str) -> str:
        if self.kind != "pairwise":
            return ""
        if item_id not in self._orders:
            self._orders[item_id] = self._rng.choice(("ab", "ba"))
        return self._orders[item_id]

    def state(self) -> dict:
        it = self.current()
        labelled = sum(r["action"] == "label" for r in self._stack)
        doc = {"kind": self.kind, "annotator": self.annotator, "total": len(self.items), "labelled": labelled,
               "handled": len(self._stack), "choices": self.choices(), "can_undo": bool(self._stack), "item": None}
        if it is not None:
            shown = dict(it)
            if self.kind == "pairwise":
                a, b = it.get("output_1", ""), it.get("output_2", "")
                left, right = (a, b) if self.order_of(it["item_id"]) == "ab" else (b, a)
                shown = {"item_id": it["item_id"], "instruction": it.get("instruction", ""), "left": left,
                         "right": right}
            doc["item"] = shown
        return doc

    def _append(self, row: dict) -> None:
        new = not self.out.exists() or self.out.stat().st_size == 0
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=LABEL_COLUMNS, lineterminator="\n")
        if new:
            w.writeheader()
        w.writerow(row)
        with self.out.open("a", newline="", encoding="utf-8") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())

    def _row(self, item_id: str, action: str, label: str = "", order: str = "", note: str = "") -> dict:
        return {"item_id": item_id, "annotator": self.annotator, "kind": self.kind, "action": action,
                "label": label, "order": order, "note": note,
                "labelled_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")}

    def act(self, doc: dict) -> tuple[int, str]:
        """Apply one posted action ``{"action": "label"|"skip"|"undo", "item_id", "choice", "note"}``; returns an
        HTTP status and a reason (``200, ""`` when written)."""
        action = doc.get("action")
        if action == "undo":
            if not self._stack:
                return 409, "nothing to undo"
            last = self._stack.pop()
            self._append(self._row(last["item_id"], "undo", order=last["order"]))
            return 200, ""
        it = self.current()
        if it is None or doc.get("item_id") != it["item_id"]:
            return 409, "not the current item (reload the page)"
        note = str(doc.get("note") or "")[:5000]
        if action == "skip":
            row = self._row(it["item_id"], "skip", note=note)
        elif action == "label":
            choice = doc.get("choice")
            if choice not in self.choices():
                return 400, f"unknown choice {choice!r}; expected one of {self.choices()}"
            order = self.order_of(it["item_id"])
            label = choice
            if self.kind == "pairwise" and choice in ("left", "right"):
                label = "1" if (choice == "left") == (order == "ab") else "2"
            row = self._row(it["item_id"], "label", label=label, order=order, note=note)
        else:
            return 400, f"unknown action {action!r}"
        self._append(row)
        self._stack.append(row)
        return 200, ""


def make_app(session: Session):
    """The :class:`aiohttp.web.Application` of ``session``: ``GET /`` (the page), ``GET /api/state``,
    ``POST /api/act``; every route answers 403 without the session's token."""
    from aiohttp import web

    @web.middleware
    async def token_only(request, handler):
        given = request.query.get("token") or request.headers.get("X-Token") or ""
        if not secrets.compare_digest(given, session.token):
            return web.Response(status=403, text="forbidden: this page needs the token printed at start\n")
        return await handler(request)

    async def page(request):
        return web.Response(text=PAGE, content_type="text/html", headers={"Cache-Control": "no-store"})

    async def state(request):
        return web.json_response(session.state(), headers={"Cache-Control": "no-store"})

    async def act(request):
        try:
            doc = await request.json()
        except (ValueError, UnicodeError):
            return web.json_response({"error": "expected a JSON body"}, status=400)
        if not isinstance(doc, dict):
            return web.json_response({"error": "expected a JSON object"}, status=400)
        status, reason = session.act(doc)
        if status != 200:
            return web.json_response({"error": reason}, status=status)
        return web.json_response(session.state())

    app = web.Application(middlewares=[token_only], client_max_size=64 * 1024)
    app.add_routes([web.get("/", page), web.get("/api/state", state), web.post("/api/act", act)])
    return app


async def serve(items: str | Path, out: str | Path, annotator: str, *, scale: int | None = None,
                host: str = "127.0.0.1", port: int = 0, on_ready=None) -> None:
    """Serve the labelling page until cancelled; ``on_ready(url)`` is called once it listens (the URL carries the
    token). The labels file's lock is held for the whole session.

    Raises
    ------
    OutputBusyError
        Another server (or judge run) holds ``out``.
    DataError
        Bad items file or labels file, or an empty annotator name.
    """
    import asyncio

    from aiohttp import web

    from evallab.judges._runner import _lock_output, _owner_text, _unlock_output

    if not annotator.strip():
        raise DataError("--annotator is empty; expected the annotator's name")
    kind, rows = load_items(items, scale=scale)
    out = Path(out)
    try:
        held = await _lock_output(out, False)
    except OutputBusyError:
        owner = _owner_text(Path(str(out) + ".lock.owner"))
        raise OutputBusyError(f"{out} is being written by another labelling server or judge run ({owner}); stop it "
                              "first (one server per labels file)") from None
    runner = None
    try:
        session = Session(kind, rows, out, annotator.strip(), scale)
        runner = web.AppRunner(make_app(session), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]
        if on_ready is not None:
            on_ready(f"http://{host}:{bound}/?token={session.token}")
        await asyncio.Event().wait()
    finally:
        if runner is not None:
            await runner.cleanup()
        _unlock_output(held)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evallab label</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:12px 20px;color:#222}
header{display:flex;gap:16px;align-items:baseline;border-bottom:1px solid #ddd;padding-bottom:6px}
#progress{font-weight:600}#bar{height:4px;background:#eee}#bar>div{height:4px;background:#3a7}
pre{white-space:pre-wrap;word-wrap:break-word;background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;
margin:4px 0 12px;font:14px/1.4 ui-monospace,monospace;max-height:50vh;overflow:auto}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:12px}.cols>div{min-width:0}
button{font:inherit;margin:2px;padding:4px 10px}kbd{border:1px solid #bbb;border-radius:3px;padding:0 4px;
font-size:12px;background:#fafafa}textarea{width:100%;box-sizing:border-box;height:3.5em;font:inherit}
#msg{color:#a33;min-height:1.2em}h3{margin:10px 0 2px;font-size:14px;color:#555}
</style></head><body>
<header><span id="progress">…</span><span id="who"></span><span id="itemid"></span></header>
<div id="bar"><div style="width:0"></div></div>
<main id="item"></main>
<h3>Note (optional; <kbd>/</kbd> to type, <kbd>Esc</kbd> to leave)</h3>
<textarea id="note" aria-label="note"></textarea>
<div id="buttons"></div>
<div id="msg"></div>
<script>
const TOKEN = new URLSearchParams(location.search).get("token") || "";
const KEYS = {left: ["1", "ArrowLeft"], right: ["2", "ArrowRight"], tie: ["t"], pass: ["p"], warn: ["w"],
              fail: ["f"], not_sure: ["n"], skip: ["s"], undo: ["u", "Backspace"]};
const NAMES = {left: "Left is better", right: "Right is better", tie: "Tie", pass: "Pass", warn: "Warn",
               fail: "Fail", not_sure: "Not sure", skip: "Skip", undo: "Undo"};
let state = null, busy = false;
function esc(s){const d=document.createElement("div");d.textContent=s==null?"":String(s);return d.innerHTML;}
function keysOf(c){return KEYS[c] || [c];}
function block(title, text){return text ? "<h3>"+esc(title)+"</h3><pre>"+esc(text)+"</pre>" : "";}
function render(){
  const s = state, it = s.item;
  document.getElementById("progress").textContent = s.labelled + " labelled · " + s.handled + " / " + s.total;
  document.getElementById("who").textContent = "annotator: " + s.annotator;
  document.querySelector("#bar>div").style.width = (100 * s.handled / Math.max(1, s.total)) + "%";
  const main = document.getElementById("item");
  document.getElementById("itemid").textContent = it ? "item " + it.item_id : "";
  main.dataset.itemId = it ? it.item_id : "";
  if (!it) { main.innerHTML = "<p id='done'>All items handled. Thank you — you can close this tab.</p>"; }
  else if (s.kind === "pairwise") {
    main.innerHTML = block("Instruction", it.instruction) + "<div class='cols'><div>" +
      block("Left output", it.left) + "</div><div>" + block("Right output", it.right) + "</div></div>";
  } else {
    main.innerHTML = block("Instruction", it.instruction) + block("Rubric", it.rubric) +
      block("Pass criteria", it.pass_criteria) + block("Fail criteria", it.fail_criteria) +
      block("Answer", it.answer) + (s.kind === "scale" ? "<p>Rate 1 (worst) to " +
      (s.choices.length - 1) + " (best).</p>" : "");
  }
  const acts = (it ? s.choices.concat(["skip"]) : []).concat(["undo"]);
  document.getElementById("buttons").innerHTML = acts.map(c =>
    "<button data-act='" + c + "'" + (c === "undo" && !s.can_undo ? " disabled" : "") + ">" +
    esc(NAMES[c] || c) + " <kbd>" + esc(keysOf(c)[0]) + "</kbd></button>").join("");
  document.querySelectorAll("#buttons button").forEach(b => b.onclick = () => send(b.dataset.act));
}
async function load(){
  const r = await fetch("api/state?token=" + encodeURIComponent(TOKEN), {cache: "no-store"});
  if (!r.ok) { document.getElementById("msg").textContent = "refused (" + r.status + ")"; return; }
  state = await r.json(); render();
}
async function send(act){
  if (busy || !state) return;
  const body = act === "undo" ? {action: "undo"} : act === "skip" ?
    {action: "skip", item_id: state.item && state.item.item_id, note: document.getElementById("note").value} :
    {action: "label", item_id: state.item && state.item.item_id, choice: act,
     note: document.getElementById("note").value};
  if (act !== "undo" && !state.item) return;
  busy = true;
  try {
    const r = await fetch("api/act?token=" + encodeURIComponent(TOKEN), {method: "POST",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    const doc = await r.json();
    if (!r.ok) { document.getElementById("msg").textContent = doc.error || r.status; await load(); return; }
    document.getElementById("msg").textContent = "";
    document.getElementById("note").value = "";
    state = doc; render();
  } finally { busy = false; }
}
document.addEventListener("keydown", e => {
  const note = document.getElementById("note");
  if (document.activeElement === note) { if (e.key === "Escape") note.blur(); return; }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "/") { e.preventDefault(); note.focus(); return; }
  if (!state) return;
  const acts = (state.item ? state.choices.concat(["skip"]) : []).concat(["undo"]);
  for (const c of acts) if (keysOf(c).includes(e.key)) { e.preventDefault(); send(c); return; }
});
load();
</script></body></html>
"""

__all__ = ["Session", "load_items", "make_app", "serve"]
