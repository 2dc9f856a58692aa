"""What each report states, as library functions (issue 25: thin notebooks).

One module per report topic. Each public function takes a tidy table (and the report's parameters) and returns a
:class:`evallab.Section` — its findings in words with the estimates behind them, its tables (:class:`evallab.Results`
whose measures carry labels, units, intervals, level and method), figures, metrics, conclusions and caveats — which a
notebook shows with :meth:`evallab.Report.render`. A section the table cannot support says so in one sentence and
shows no empty table. Every finding here is testable without a kernel.
"""
