# ruff: noqa: B008  (typer declares options as argument defaults)
"""CLI: ``evallab validate PATH...``, ``evallab judge-check EVALS ...``, ``evallab manifests eval|bootstrap``.

Registered by :func:`evallab.cli._register` through :func:`register`.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from evallab.errors import EvallabError

manifests_app = typer.Typer(add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                            help="aeon-style assertion manifests: evaluate outputs, bootstrap a starter manifest.")


def _kind_of(path: Path) -> str:
    """What a file is: evals, recording, eval-report, state, manifest (by name, then by content)."""
    name = path.name
    if name == "evals.json":
        return "evals"
    if name.endswith("evals-state.json") or name == "state.json":
        return "state"
    if path.suffix.lower() in (".yaml", ".yml"):
        return "manifest"
    if path.parent.name == "judge-recordings":
        return "recording"
    if path.is_dir():
        return "folder"
    from evallab import fileio  # here: it loads pandas, which `evallab --help` should not pay for

    fileio.check_file(path, "a JSON file (evals.json, a recording or an eval report)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "recording" if "recording" in name else "evals" if "evals" in name else "unknown-json"
    if isinstance(doc, dict):
        if "scenarios" in doc and "triggers" in doc or "scenarios" in doc and "skillId" not in doc:
            return "evals"
        if "entries" in doc or "judgePromptVersion" in doc and "reports" not in doc and "skillId" not in doc:
            return "recording"
        if "reports" in doc or "skillId" in doc:
            return "eval-report"
        if "skills" in doc and "version" in doc:
            return "state"
        return "manifest"
    return "unknown-json"


def _expand(paths: list[Path]) -> list[Path]:
    out = []
    for p in paths:
        if p.is_dir():
            found = sorted(p.glob("**/evals.json")) + sorted(p.glob("**/judge-recordings/*.json")) + \
                sorted(p.glob("**/governance/eval.json"))
            out.extend(found or sorted(x for x in p.glob("*") if x.suffix in (".json", ".yaml", ".yml")))
        else:
            out.append(p)
    return list(dict.fromkeys(out))


def validate_paths(paths: list[Path], *, echo=typer.echo) -> int:
    """Validate every file (or folder of files); returns the number of failing findings and file errors.

    evals.json: schema + integrity rules I1–I10; recordings: format, and the AG check when the matching
    evals.json is among the inputs; eval reports: the pack gate; manifests: schema + regex lint; state files:
    structure. Notes and "not checkable" findings are printed but do not count.
    """
    from evallab import skills as M
    from evallab import skills as S
    from evallab.judges import load_recording

    failures = 0
    specs: dict[str, S.EvalSpec] = {}
    recs = {}
    for p in _expand(paths):
        kind = _kind_of(p) if p.exists() else "missing"
        try:
            if kind == "missing":
                raise EvallabError(f"{p}: no such file or folder")
            if kind == "evals":
                spec = S.load_evals(p)
                specs[spec.recording_name] = spec
                fs = S.integrity_findings(spec)
                bad = [f for f in fs if f.severity == "fail"]
                nc = sorted({f.rule for f in fs if f.severity == "not-checkable"})
                for f in bad:
                    echo(f"FAIL {f}")
                failures += len(bad)
                echo(f"ok   {p}: {len(spec.scenarios)} scenarios, {len(bad)} integrity finding(s)"
                     + (f"; not checkable (no SKILL.md body): {', '.join(nc)}" if nc else ""))
            elif kind == "recording":
                rec = load_recording(p)
                recs[p.stem] = rec
                echo(f"ok   {p}: {len(rec.entries)} entries, prompt version {rec.judge_prompt_version}")
            elif kind == "eval-report":
                reports = S.load_eval_report(p)
                v = S.gate_verdicts(S.pack_gate(reports))
                for r in v.itertuples():
                    if r.verdict != "pass":
                        echo(f"FAIL {p}: pack gate {r.skill}: {r.failures}")
                        failures += 1
                echo(f"ok   {p}: {len(reports)} report(s), {int((v['verdict'] == 'pass').sum())} pass the pack gate")
            elif kind == "manifest":
                m = M.load_manifest(p)
                lint = M.lint_manifest(m)
                for w in lint:
                    echo(f"FAIL {p}: {w}")
                failures += len(lint)
                echo(f"ok   {p}: manifest for {len(m)} skill(s)")
            elif kind == "state":
                st = M.load_state(p)
                echo(f"ok   {p}: state of {len(st['skills'])} skill(s)")
            else:
                raise EvallabError(f"{p}: cannot tell what this file is (not JSON/YAML of a known kind)")
        except EvallabError as exc:
            echo(f"ERROR {exc}")
            failures += 1
    if recs and specs:
        both = {k: specs[k] for k in recs if k in specs}
        if both:
            from evallab.experiments import judge_check as JC

            m = JC.check_recordings(both, {k: recs[k] for k in both})
            for f in S.ag_findings(m, both, {k: recs[k] for k in both}):
                echo(f"{'FAIL' if f.severity == 'fail' else 'note'} {f}")
                failures += f.severity == "fail"
    return failures


def register(app: typer.Typer) -> None:
    """Attach ``validate``, ``judge-check`` and the ``manifests`` group to the ``evallab`` app."""

    @app.command("validate")
    def validate(paths: list[Path] = typer.Argument(..., help="evals.json, recordings, eval reports, manifests, "
                                                               "evals-state.json, or folders of them")) -> None:
        """Validate scenario files, recordings, eval reports, manifests and state files; exit 1 on findings."""
        n = validate_paths(paths)
        typer.echo(f"{n} finding(s)")
        if n:
            raise typer.Exit(1)

    @app.command("judge-check")
    def judge_check(
        scenarios: Path = typer.Argument(..., help="a skill's evals.json, or a folder of stacks/*/skills/*/"),
        judge: str = typer.Option("", "--judge", help="judge base URL (OpenAI-compatible /v1)"),
        model: str = typer.Option("", "--model", help="judge model id"),
        api_key_env: str = typer.Option("", "--api-key-env", help="NAME of the env variable holding the key"),
        samples: int = typer.Option(3, "--samples", min=1, help="samples per canned answer"),
        record: Path | None = typer.Option(None, "--record", help="folder (or .json) to write the recording"),
        replay: Path | None = typer.Option(None, "--replay", help="answer from recordings instead of a live judge"),
    ) -> None:
        """Grade the eight canned anti-gaming answers of every judge scenario through a judge; exit 1 on any
        mismatch, non-unanimous or errored sample."""
        import pandas as pd

        from evallab import skills as S
        from evallab.judges import make_judge

        specs = list(S.load_tree(scenarios).values()) if scenarios.is_dir() else [S.load_evals(scenarios)]
        if not specs:
            raise EvallabError(f"{scenarios}: no evals.json found")
        j = make_judge(judge, model, api_key_env, replay_dir=str(replay) if replay else None)
        frames = []
        for spec in specs:
            from evallab.experiments import judge_check as JC

            m, _ = JC.judge_check(spec, j, samples=samples, record=record, progress=False)
            frames.append(m)
            for r in m.itertuples():
                typer.echo(f"{r.status:14s} {r.skill} {r.scenario}/{r.kind}: expected {r.expected}, observed "
                           f"{r.observed} ({r.samples} samples){'  ' + r.message if r.status != 'ok' else ''}")
        m = pd.concat(frames, ignore_index=True)
        bad = int((m["status"] != "ok").sum())
        typer.echo(f"{bad} failing check(s) of {len(m)}" + (f"; recording in {record}" if record else ""))
        if bad:
            raise typer.Exit(1)

    @manifests_app.command("eval")
    def manifests_eval(
        manifest: Path = typer.Argument(..., help="manifest (YAML or JSON)"),
        outputs: Path = typer.Option(..., "--outputs", help="folder: <skill>/<run files> or <skill>.md"),
        state: Path = typer.Option(Path("evals-state.json"), "--state", help="regression state file"),
        skill: str | None = typer.Option(None, "--skill", help="evaluate one skill"),
    ) -> None:
        """Evaluate each skill's latest output against its manifest, update regression states; exit 1 on any
        failing or unevaluable assertion."""
        from evallab import skills as M

        m = M.load_manifest(manifest)
        found = M.find_outputs(outputs)
        run = M.run_eval(m, {k: v[-1] for k, v in found.items()}, state_path=state, installed=list(found),
                         skill=skill)
        for w in run.lint:
            typer.echo(f"warning: {w}", err=True)
        typer.echo(run.summary())
        if run.results["passed"].ne(True).any():
            raise typer.Exit(1)

    @manifests_app.command("bootstrap")
    def manifests_bootstrap(
        outputs: Path = typer.Argument(..., help="folder of outputs: <skill>/<run files> or <skill>.md"),
        skill: str = typer.Option(..., "--skill", help="the skill to bootstrap"),
        runs: int = typer.Option(5, "--runs", min=1, help="last N successful outputs"),
    ) -> None:
        """Print a starter manifest from the skill's last successful outputs (never saved: review, then save)."""
        from evallab import skills as M

        found = M.find_outputs(outputs)
        if skill not in found:
            raise EvallabError(f"{outputs}: no outputs for skill {skill!r}; found {sorted(found)}")
        texts = [p.read_text(encoding="utf-8", errors="replace") for p in found[skill]]
        typer.echo(M.bootstrap_yaml(skill, texts, runs=runs), nl=False)

    app.add_typer(manifests_app, name="manifests")
