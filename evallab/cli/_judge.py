"""``evallab judge ITEMS --judge MODEL@BASE_URL --out verdicts.parquet``: run a live (or replayed) judge.

The judge spec (``--judge``):

- ``MODEL@BASE_URL`` — a live OpenAI-compatible endpoint, e.g. ``gpt-4o-mini@https://api.openai.com/v1``,
  ``deepseek-chat@https://api.deepseek.com/v1``, ``qwen2.5:7b@http://localhost:11434/v1`` (Ollama); the key is
  read from the environment variable NAMED by ``--api-key-env`` (never pass a key on the command line);
- ``replay:PATH`` — answer offline from keryx-format recordings (a file or a folder of them).

``--base-url`` and ``--model`` may be given instead of ``--judge MODEL@BASE_URL``.

``--prompt FILE`` judges with your own Jinja2 template (:mod:`evallab.judges._templates`; a template reaching for
Python internals is refused in one line, exit 2) and ``--anchors FILE`` shows one anchor set to every item
(:mod:`evallab.judges._anchor_sets`); the rows record them in ``strategy``/``prompt``/``prompt_sha256`` and
``anchor_set``.

The judge is built by :func:`evallab.judges.make_judge` and the items judged by
:func:`evallab.judges.judge_items`; the run is told by :func:`evallab.judges.describe_run`.
"""

# ruff: noqa: B008  (typer declares options as argument defaults)
from __future__ import annotations

from pathlib import Path

import typer


def judge(
    items: Path = typer.Argument(..., help="Items table (.csv/.tsv/.jsonl/.parquet): pairwise item_id, instruction, "
                                "output_1, output_2 — or pointwise item_id, rubric, pass_criteria, answer"),
    out: Path = typer.Option(..., "--out", "-o", help="Verdict table to append to: .parquet, .jsonl or .csv "
                             "(rerun to resume)"),
    judge_spec: str = typer.Option("", "--judge", help="MODEL@BASE_URL or replay:PATH"),
    base_url: str = typer.Option("", help="OpenAI-compatible API root, e.g. https://api.openai.com/v1"),
    model: str = typer.Option("", help="Model id (pin a dated version)"),
    api_key_env: str = typer.Option("", help="NAME of the environment variable holding the API key"),
    label: str = typer.Option("", help="The judge column (default: the model id)"),
    kind: str = typer.Option("auto", help="auto, pairwise or pointwise"),
    prompt: str = typer.Option("", "--prompt", help="Your prompt: a Jinja2 template file (rendered sandboxed; its "
                               "name@sha256 goes in the strategy and prompt columns) or a built-in name: vanilla, "
                               "rules, pointwise (default: the built-in of the kind)"),
    anchors: Path = typer.Option(None, "--anchors", help="An anchor-set file (YAML or JSONL of {text, verdict} "
                                 "examples) shown to every item; its name goes in the anchor_set column"),
    orders: str = typer.Option("ab,ba", help="Pairwise orders to ask, comma-separated"),
    samples: int = typer.Option(1, min=1, help="Repeats per request (self-agreement)"),
    temperature: float = typer.Option(0.0, help="Sampling temperature"),
    seed: int = typer.Option(None, help="Seed sent to the server (where supported)"),
    max_tokens: int = typer.Option(None, help="Max tokens per reply"),
    concurrency: int = typer.Option(16, min=1, help="Ceiling of requests in flight at once (the limit adapts "
                                    "below it: starts at 2, grows while latency holds, cuts on timeouts/429)"),
    retries: int = typer.Option(5, min=0, help="Retries on 429/5xx/timeouts/connection errors"),
    timeout: float = typer.Option(60.0, help="Seconds per connect/read"),
    cache: Path = typer.Option(None, help="Reply cache file (default $EVALLAB_CACHE/judges.sqlite, else "
                               ".evallab-cache/judges.sqlite of the study folder or checkout you run in, else "
                               "judges.sqlite in the user cache folder)"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Bypass the cache (no reads, no writes)"),
    refresh_cache: bool = typer.Option(False, "--refresh-cache", help="Ignore cached replies and overwrite them"),
    prices: Path = typer.Option(None, help="Price table YAML/JSON {model: [input, output] USD per 1M tokens}"),
    record: Path = typer.Option(None, help="Also write a keryx-format recording of the replies here"),
    limit: int = typer.Option(0, min=0, help="Only the first N items (0 = all)"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="tqdm progress bar"),
    wait: bool = typer.Option(False, "--wait", help="If another run is writing OUT, wait for it and then resume "
                              "(default: stop at once, naming it)"),
    structured: str = typer.Option("off", help="Ask for a JSON-schema verdict: off, auto (detect the endpoint's "
                                   "dialect), openai, llamacpp or ollama"),
    logprobs: bool = typer.Option(False, "--logprobs", help="Record the verdict token's log-probability"),
    batch: bool = typer.Option(False, "--batch", help="Send through the OpenAI Batch API (half price, results "
                               "within 24 h; rerun the same command to resume polling after an interruption)"),
    poll: float = typer.Option(10.0, "--poll", help="Seconds between Batch API status polls"),
    rpm: float = typer.Option(None, "--rpm", help="Client-side budget of requests per minute"),
    tpm: float = typer.Option(None, "--tpm", help="Client-side budget of tokens per minute (estimated)"),
    reasoning_effort: str = typer.Option("", "--reasoning-effort", help="reasoning_effort sent (low, medium, high "
                                         "...); several, comma-separated, ask every item at each (a design column)"),
    thinking_budget: int = typer.Option(None, "--thinking-budget", help="Thinking tokens allowed (sent as "
                                        "thinking.budget_tokens)"),
    verdict_from_reasoning: bool = typer.Option(False, "--verdict-from-reasoning", help="Read the verdict from the "
                                                "reasoning when the final answer holds none (off: such rows are "
                                                "NA, failure_kind reasoning_only)"),
    keep_reasoning: bool = typer.Option(True, "--keep-reasoning/--reasoning-digest", help="Keep the reasoning "
                                        "text in the table, or only its sha256 and length"),
    share_samples: bool = typer.Option(False, "--share-samples", help="Ask the samples of one item in one request "
                                       "(n choices) where the endpoint takes n (detected): the prompt is paid once"),
    param: list[str] = typer.Option([], "--param", help="How to send a parameter the model refuses, overriding "
                                    "detection: NAME=NEW_NAME (max_tokens=max_completion_tokens) or NAME=drop "
                                    "(temperature=drop); repeatable"),
) -> None:
    """Judge every item of ITEMS and append one row per reply to OUT (resumable, cached, recorded)."""
    from evallab.judges import judge_items, make_judge, usage_summary
    from evallab.judges._runner import describe_run

    adapt = {}
    for p in param:
        name, sep, use = p.partition("=")
        if not sep or not name.strip() or not use.strip():
            typer.echo(f"--param {p!r}: expected NAME=NEW_NAME or NAME=drop, e.g. max_tokens=max_completion_tokens",
                       err=True)
            raise typer.Exit(2)
        adapt[name.strip()] = None if use.strip() == "drop" else use.strip()
    live = {"param_adapt": adapt, "verdict_from_reasoning": verdict_from_reasoning,
            "keep_reasoning": keep_reasoning, "share_samples": share_samples} if not judge_spec.startswith("replay:") else {}
    j = make_judge(base_url, model, api_key_env, spec=judge_spec, label=label or None,
                   cache=False if no_cache else cache or True, refresh_cache=refresh_cache, timeout=timeout,
                   max_concurrency=concurrency, max_retries=retries, prices=str(prices) if prices else None,
                   requests_per_minute=rpm, tokens_per_minute=tpm, structured=structured, logprobs=logprobs, **live)
    df = judge_items(items, j, out=out, kind=kind, orders=[o.strip() for o in orders.split(",") if o.strip()],
                     prompt=prompt or None, anchors=anchors,
                     samples=samples, temperature=temperature, seed=seed, max_tokens=max_tokens, limit=limit,
                     progress=progress, record=record, wait=wait, batch=batch, poll_interval=poll,
                     reasoning_effort=reasoning_effort or None, thinking_budget=thinking_budget)
    run = df.attrs.get("run", {})
    typer.echo(f"wrote {out}: {len(df)} rows. This run: {describe_run(run)}")
    if record:
        typer.echo(f"wrote {record}")
    s = usage_summary(df)
    typer.echo(f"Totals over the whole output file {out}:")
    typer.echo(_totals_text(s))
    from evallab.verdicts import snapshot_note

    snap = snapshot_note(df)
    if snap:  # the server reported several versions under one model name
        typer.echo(f"warning: {out}: {snap}", err=True)
    if run.get("failed"):
        failed = df[df["failed"].fillna(False).astype(bool)] if "failed" in df else df.iloc[:0]
        for err, n in failed["error"].value_counts().head(3).items():
            typer.echo(f"  {n} failed call(s): {err}", err=True)
        typer.echo("some calls failed after their retries; rerun the same command to retry them", err=True)
        raise typer.Exit(1)


def _totals_text(s) -> str:
    """The totals table as text with no NaN: a cost not recorded (an unpriced model) says so, a cost per verdict
    with no parsed verdict says that, and any other missing figure is "-"."""
    t = s.astype(object).copy()
    cost_na = s["cost_usd"].isna()
    t.loc[cost_na, "cost_usd"] = "no cost recorded"
    t.loc[s["cost_per_verdict"].isna(), "cost_per_verdict"] = "no parsed verdict"
    t.loc[cost_na, "cost_per_verdict"] = "no cost recorded"
    return t.where(t.notna(), "-").to_string(index=False)


def register(app: typer.Typer) -> None:
    """Attach ``evallab judge`` to the evallab command."""
    app.command(name="judge")(judge)
