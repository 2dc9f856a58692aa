"""Importers: judge-verdict files as other tools write them → the tidy verdict table (:mod:`evallab.verdicts`).

:func:`import_file` imports one file in a named ``format`` (or detects it from the content when none is named);
:func:`import_files` is ``evallab import``: several files of one format into one table, gold attached, written.
A format's options (``baseline=``, ``thresholds=``, ``columns=`` …) pass through ``**options``; its field mapping
and the upstream code that writes it are in the docstring of the private function behind it.

The formats (the name for ``format=``, the private function, who writes the file):

- ``mt_bench_pair``, ``mt_bench_single``, ``mt_bench_human`` — ``_mt_bench``; FastChat
  ``fastchat/llm_judge/common.py`` and the ``lmsys/mt_bench_human_judgments`` layout.
- ``alpaca_eval`` — ``_alpaca_eval``; tatsu-lab/alpaca_eval ``src/alpaca_eval/main.py``.
- ``arena_hard``, ``judgebench`` — ``_pairwise_labels``; lmarena/arena-hard-auto ``gen_judgment.py``,
  ScalerLab/JudgeBench ``run_judge.py``.
- ``inspect`` — ``_inspect_ai``; inspect_ai ``log/_log.py`` (``.json``, ``.eval``).
- ``promptfoo`` — ``_promptfoo``; promptfoo ``src/types/index.ts`` export.
- ``labels`` — ``_labels``; ``evallab label`` (the annotators as raters: ``judge`` = annotator, the order shown in
  ``shown_order``).
- ``position_bias_analyzer`` — ``_position_bias_analyzer``; Slimshilin/Position-Bias-Analyzer
  ``subeval/subjective/sub_eval.py`` record TSVs (Shi et al. 2024).
- ``table`` — ``_table``; any CSV/JSONL/JSON array/Parquet with a column/value map.

Gold from several annotators: :func:`gold_from_annotators` (majority or unanimity, items without gold counted,
percent of items unanimous) and :func:`attach_gold`; :func:`load_gold` reads gold from a file. Bad input raises
:class:`ImportDataError`, naming the file, the place and the field.

The face is what a user calls (``from evallab.importers import import_file``); the modules behind it are private.
These modules only read files and build tables; they never import an estimator. The names load on first use
(PEP 562), so ``import evallab.importers`` does not import pandas.
"""

from __future__ import annotations

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    "import_file": "_files", "import_files": "_files", "load_gold": "_files",
    "ImportDataError": "_common",
    "attach_gold": "_gold", "gold_from_annotators": "_gold",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
