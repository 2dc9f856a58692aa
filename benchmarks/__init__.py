"""Speed and memory checks. Each ``bench_*.py`` module has ``run() -> list[dict]``; every dict is one check with
``name``, ``value``, ``target`` (a string such as ``"<= 1.5"``), ``ok`` (bool or None) and ``detail``. Ratios are
always against a baseline measured in the same run, never absolute times."""
