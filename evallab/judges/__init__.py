"""Judges: the ``Judge`` protocol, an OpenAI-compatible client, replay from recordings, cache, prompts, usage.

- :class:`OpenAICompatibleJudge` — any ``/v1/chat/completions`` endpoint over ``httpx.AsyncClient``: adaptive
  concurrency (:mod:`evallab.judges.limits`), tenacity retries honouring every Retry-After form, rate-limit
  headers and budgets, no retry on 400/401/403/404, cache, usage and cost.
- :class:`ReplayJudge` — answers offline from keryx-format recordings by request digest.
- The keryx recording format, which the runner writes and replay reads: :class:`Recording` (:class:`Entry` per
  scenario and kind, :class:`Sample` per reply), :func:`load_recording` / :func:`load_recordings` /
  :func:`parse_recording` (:class:`RecordingError`), :func:`write_recording`, :func:`to_verdicts` (one row per
  sample of the tidy verdict table), and the canned anti-gaming answer :data:`KINDS` with the verdict
  :data:`EXPECTED` of each.
- :class:`Cache` — sqlite (WAL) reply cache keyed by the exact JSON body sent (+ base URL, sample index).
- :mod:`evallab.judges.prompts` — ``PROMPT_VERSION``, ``Anchor``, ``build_pairwise``, ``build_pointwise``.
- :func:`evallab.judges.parsing.parse_verdict` — JSON / fenced JSON / free forms → verdict, or NA with a reason.
- :func:`run_jobs` / :func:`arun_jobs` — the job runner (append as you go, resume, one run per output at a time,
  record, progress bar).
- :func:`make_judge` — a judge from notebook/CLI literals.
"""

from evallab.judges._recordings import (
           EXPECTED,
           KINDS,
           Entry,
           Recording,
           RecordingError,
           Sample,
           load_recording,
           load_recordings,
           parse_recording,
           to_verdicts,
           write_recording,
)
from evallab.judges.cache import Cache, cache_key
from evallab.judges.client import JudgeFatalError, JudgeStats, OpenAICompatibleJudge
from evallab.judges.parsing import parse_reply, parse_verdict
from evallab.judges.pricing import DEFAULT_PRICES, cost_usd, price_table
from evallab.judges.prompts import PROMPT_VERSION, Anchor, build_pairwise, build_pointwise, request_digest
from evallab.judges.replay import ReplayJudge, ReplayMissError
from evallab.judges.runner import (
           OutputBusyError,
           RunStats,
           arun_jobs,
           make_judge,
           run_jobs,
           usage_summary,
           write_run_recording,
)
from evallab.judges.types import Judge, JudgeReply, JudgeRequest, Message, Usage

__all__ = ["DEFAULT_PRICES", "EXPECTED", "KINDS", "PROMPT_VERSION", "Anchor", "Cache", "Entry", "Judge",
           "JudgeFatalError", "JudgeReply", "JudgeRequest", "JudgeStats", "Message", "OpenAICompatibleJudge",
           "OutputBusyError", "Recording", "RecordingError", "ReplayJudge", "ReplayMissError", "RunStats", "Sample",
           "Usage", "arun_jobs", "build_pairwise", "build_pointwise", "cache_key", "cost_usd", "load_recording",
           "load_recordings", "make_judge", "parse_recording", "parse_reply", "parse_verdict", "price_table",
           "request_digest", "run_jobs", "to_verdicts", "usage_summary", "write_recording", "write_run_recording"]
