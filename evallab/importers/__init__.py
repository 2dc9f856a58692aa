"""Importers: judge-verdict files as other tools write them → the tidy verdict table (:mod:`evallab.verdicts`).

One function per format; :func:`import_file` detects the format from the content when none is named.

============== ======================================== ===============================================
format         function                                 written by
============== ======================================== ===============================================
mt_bench_pair  :func:`import_mt_bench_pair`             FastChat ``fastchat/llm_judge/common.py``
mt_bench_single:func:`import_mt_bench_single`           FastChat ``fastchat/llm_judge/common.py``
mt_bench_human :func:`import_mt_bench_human`            ``lmsys/mt_bench_human_judgments`` layout
alpaca_eval    :func:`import_alpaca_eval`               tatsu-lab/alpaca_eval ``src/alpaca_eval/main.py``
arena_hard     :func:`import_arena_hard`                lmarena/arena-hard-auto ``gen_judgment.py``
inspect        :func:`import_inspect_log`               inspect_ai ``log/_log.py`` (``.json``, ``.eval``)
promptfoo      :func:`import_promptfoo`                 promptfoo ``src/types/index.ts`` export
judgebench     :func:`import_judgebench`                ScalerLab/JudgeBench ``run_judge.py``
table          :func:`import_table`                     any CSV/JSONL/JSON array/Parquet + column/value map
============== ======================================== ===============================================

Gold from several annotators: :func:`gold_from_annotators` (majority or unanimity, items without gold counted,
percent of items unanimous; a :class:`Gold`) and :func:`attach_gold`; :func:`load_gold`
reads gold from a file.

:func:`import_files` is ``evallab import``: several files of one format into one table, gold attached, written
(:class:`ImportResult`); :data:`FORMATS` maps each format name to its function. Bad input raises
:class:`ImportDataError`, naming the file, the place and the field.

Import everything from here (``from evallab.importers import import_file``); the modules behind it are private.
These modules only read files and build tables; they never import an estimator. The names load on first use
(PEP 562), so ``import evallab.importers`` does not import pandas.
"""

from __future__ import annotations

from evallab._face import lazy_face

#: public name -> the private module that defines it
_EXPORTS = {
    "FORMATS": "_files", "ImportResult": "_files", "detect_format": "_files", "import_file": "_files",
    "import_files": "_files", "load_gold": "_files",
    "ImportDataError": "_common",
    "Gold": "_gold", "attach_gold": "_gold", "gold_from_annotators": "_gold",
    "import_alpaca_eval": "_alpaca_eval",
    "import_arena_hard": "_pairwise_labels", "import_judgebench": "_pairwise_labels",
    "import_inspect_log": "_inspect_ai",
    "import_mt_bench_human": "_mt_bench", "import_mt_bench_pair": "_mt_bench", "import_mt_bench_single": "_mt_bench",
    "import_promptfoo": "_promptfoo",
    "import_table": "_table",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
