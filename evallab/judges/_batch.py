"""The OpenAI Batch API for a run (``run_jobs(..., batch=True)``, ``evallab judge --batch``).

Steps (https://platform.openai.com/docs/guides/batch): write the request file (one JSON line per request:
``custom_id``, ``method``, ``url`` and the exact body the live client would send), upload it
(``POST /v1/files``, purpose ``batch``), create the batch (``POST /v1/batches``, endpoint
``/v1/chat/completions``, window ``24h``), poll ``GET /v1/batches/{id}`` with a progress bar until it ends,
download the output file (``GET /v1/files/{id}/content``) and parse each line into the same verdict rows a live run
writes (cached like live replies).

Resumable: the batch id is kept beside the output in ``<out>.batch.json`` from the moment the batch exists; a
restarted run (after a crash or a kill) polls that batch instead of creating and paying for a new one, and the
file is removed once its results are written. A ``custom_id`` is the request's cache key (first 40 hex
characters) and its sample index (``-s<k>``), so results map back to requests across restarts.

Cost: Batch API replies are billed at ``batch_discount`` (default 0.5: half the synchronous price) × the price
table's price; the ``cost_usd`` column holds that.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evallab.errors import EvallabError
from evallab.judges._types import JudgeReply, JudgeRequest

log = logging.getLogger("evallab.judges")

#: batch statuses after which nothing changes
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


def custom_id(judge, request: JudgeRequest) -> str:
    """``<cache key[:40]>-s<sample>``: stable across restarts, unique per (body, sample)."""
    return f"{judge.cache_key(request)[:40]}-s{int(request.metadata.get('sample', 0) or 0)}"


def request_lines(judge, requests: Sequence[JudgeRequest]) -> bytes:
    """The batch input file: one ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` line
    per request (duplicate custom ids — the same body and sample twice — are sent once)."""
    seen, out = set(), []
    for r in requests:
        cid = custom_id(judge, r)
        if cid in seen:
            continue
        seen.add(cid)
        enc = judge.encoded(r) if callable(getattr(judge, "encoded", None)) else None
        if enc is not None:  # the body exactly as a live call sends it
            out.append(f'{{"custom_id":{json.dumps(cid)},"method":"POST","url":"/v1/chat/completions",'
                       f'"body":{enc.payload.decode()}}}')
        else:
            out.append(json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                                   "body": judge.body(r)}, ensure_ascii=False))
    return ("\n".join(out) + "\n").encode()


async def _json(resp, what: str, judge) -> dict:
    from evallab.judges._client import JudgeFatalError, _server_message

    if resp.status_code != 200:
        raise JudgeFatalError(f"Batch API: {what} failed with HTTP {resp.status_code}: "
                              f"{_server_message(resp, judge.api_key_env)}", status=resp.status_code,
                              url=str(resp.request.url))
    return resp.json()


async def run_openai_batch(judge, todo: Sequence[tuple[JudgeRequest, tuple]], state_path: Path,
                           on_reply: Callable[[JudgeRequest, tuple, JudgeReply], None], *,
                           poll_interval: float = 5.0, progress: bool = True, batch_discount: float = 0.5) -> dict:
    """Answer ``todo`` (``(request, key)`` pairs) through the Batch API, calling ``on_reply`` for each.

    Returns ``{"batch_id", "resumed", "lines"}``.

    Raises
    ------
    JudgeFatalError
        A Batch API call answered with an error status, or a batch that ended ``failed``/``expired``/
        ``cancelled`` (its id stays in ``state_path``, so a rerun polls it again).
    EvallabError
        ``state_path`` unreadable.
    """
    from evallab.judges._client import JudgeFatalError, TransientError

    client = judge._ensure_client()
    base = judge.base_url
    by_id: dict[str, list[tuple[JudgeRequest, tuple]]] = {}
    for req, key in todo:
        by_id.setdefault(custom_id(judge, req), []).append((req, key))
    state = None
    if state_path.exists():
        try:
            state = json.loads(state_path.read_text(encoding="utf-8"))
            state["batch_id"]
        except (OSError, ValueError, KeyError, TypeError):
            raise EvallabError(f"{state_path}: not a batch state file; delete it to start a new batch") from None
    resumed = state is not None
    if state is None:
        data = request_lines(judge, [r for r, _ in todo])
        import httpx

        # multipart encoded apart: the client's default Content-Type (application/json) must not replace it
        form = httpx.Request("POST", base + "/files", files={"file": ("batch.jsonl", data, "application/jsonl")},
                             data={"purpose": "batch"})
        resp = await client.post(base + "/files", content=form.read(),
                                 headers={"Content-Type": form.headers["Content-Type"]})
        fid = (await _json(resp, "file upload", judge))["id"]
        resp = await client.post(base + "/batches", json={"input_file_id": fid, "endpoint": "/v1/chat/completions",
                                                           "completion_window": "24h"})
        batch = await _json(resp, "batch creation", judge)
        state = {"batch_id": batch["id"], "input_file_id": fid, "base_url": base, "requests": len(by_id),
                 "created": time.time()}
        tmp = state_path.with_name(state_path.name + ".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        os.replace(tmp, state_path)
        log.info("judge %s: batch %s created (%d requests)", judge.label, batch["id"], len(by_id))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=state.get("requests") or len(by_id), desc=f"batch {state['batch_id']}", unit="req",
                   dynamic_ncols=True)
    try:
        while True:
            resp = await client.get(f"{base}/batches/{state['batch_id']}")
            batch = await _json(resp, "batch status", judge)
            counts = batch.get("request_counts") or {}
            if bar is not None:
                bar.n = int(counts.get("completed", 0) or 0) + int(counts.get("failed", 0) or 0)
                bar.set_postfix_str(f"status={batch.get('status')}", refresh=True)
            if batch.get("status") in TERMINAL:
                break
            await asyncio.sleep(poll_interval)
    finally:
        if bar is not None:
            bar.close()
    if batch["status"] != "completed" or not batch.get("output_file_id"):
        raise JudgeFatalError(f"Batch API: batch {batch['id']} ended {batch.get('status')!r} without results; "
                              f"delete {state_path} to submit a new batch", url=base)
    resp = await client.get(f"{base}/files/{batch['output_file_id']}/content")
    if resp.status_code != 200:
        await _json(resp, "result download", judge)
    answered = set()
    discount = float(batch_discount)
    for line in resp.text.splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        cid = doc.get("custom_id")
        if cid not in by_id or cid in answered:
            continue
        answered.add(cid)
        r = doc.get("response") or {}
        for req, key in by_id[cid]:
            if r.get("status_code") != 200 or doc.get("error"):
                err = doc.get("error") or {}
                msg = err.get("message") if isinstance(err, dict) else str(err)
                reply = JudgeReply(error=f"Batch API: HTTP {r.get('status_code')}: {msg or 'no result'}",
                                   failed=True, model=judge.model)
            else:
                try:
                    value = judge.value_from_completion(r.get("body") or {}, None, req)
                except TransientError as exc:
                    reply = JudgeReply(error=f"Batch API: {exc}", failed=True, model=judge.model)
                else:
                    reply = judge._reply(req, value, cached=False)
                    if reply.usage.cost_usd is not None:
                        reply.usage = dataclasses.replace(reply.usage, cost_usd=reply.usage.cost_usd * discount)
                    if judge.cache is not None:
                        judge.cache.put(judge.cache_key(req), value)
            on_reply(req, key, reply)
    for cid, pairs in by_id.items():
        if cid not in answered:
            for req, key in pairs:
                on_reply(req, key, JudgeReply(error=f"Batch API: batch {batch['id']} returned no result for it",
                                              failed=True, model=judge.model))
    state_path.unlink(missing_ok=True)
    return {"batch_id": batch["id"], "resumed": resumed, "lines": len(answered)}


__all__ = ["TERMINAL", "custom_id", "request_lines", "run_openai_batch"]
