"""The Alt-Test on HANNA: can an LLM judge replace one of the three human raters, per criterion and prompt variant?

``python -m benchmarks.hanna_alt_test [--scoring neg_rmse] [--epsilon 0.2] [--source CSV]``: reads the snapshot in
``../shared/data/hanna/`` (or ``--source``) (a measurement script: the product never reads it; ``data/hanna/`` is added by its own
issue) and prints, for each judge (5 LLMs), prompt variant (1–4) and criterion (RE CH EM SU EG CX), the winning rate
ω, whether the judge passes at ε (0.2, the authors' example), the average advantage probability ρ and the smallest
ε at which it would pass (:func:`evallab.metrics.alt_test`, scale ratings scored by minus the RMSE from the other
two raters). Items: the 1,056 stories; the LLM rating is the mean of the paper's samples (a float), the humans'
integers 1–5.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pandas as pd

from evallab.metrics import alt_test

SOURCE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "hanna" / "hanna_metric_scores_llm.csv"
CRITERIA = ("RE", "CH", "EM", "SU", "EG", "CX")
JUDGES = ("Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT")


def long_table(path: Path = SOURCE) -> pd.DataFrame:
    """One row per (story, criterion, rater): raters ``Human 1..3`` and ``<judge> <k>``."""
    raw = pd.read_csv(path)
    rows = []
    for _, r in raw.iterrows():
        for c in CRITERIA:
            cols = [f"Human {h} {c}" for h in (1, 2, 3)] + [f"{j} {c} {k}" for j in JUDGES for k in (1, 2, 3, 4)]
            for col in cols:
                name = col.replace(f" {c}", "")
                for i, v in enumerate(ast.literal_eval(r[col])):
                    rows.append((f"{r['Model']}/{i}", c, name, float(v)))
    return pd.DataFrame(rows, columns=["item_id", "criterion", "judge", "score"])


def main(argv: list[str]) -> int:
    scoring = argv[argv.index("--scoring") + 1] if "--scoring" in argv else "neg_rmse"
    eps = float(argv[argv.index("--epsilon") + 1]) if "--epsilon" in argv else 0.2
    df = long_table(Path(argv[argv.index("--source") + 1]) if "--source" in argv else SOURCE)
    judges = sorted(set(df["judge"]) - {"Human 1", "Human 2", "Human 3"})
    r = alt_test(df, ["criterion"], judges=judges, value="score", scoring=scoring, epsilon=eps)
    r = r.to_frame()
    r[["llm", "prompt"]] = r["judge"].str.rsplit(" ", n=1, expand=True)
    cols = ["criterion", "llm", "prompt", "winning_rate", "passes", "advantage_probability", "min_epsilon", "items"]
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(r[cols].sort_values(["criterion", "llm", "prompt"]).round(3).to_string(index=False))
    print(f"\npassing at epsilon={eps}: {int(r['passes'].sum())} of {len(r)} (judge, prompt, criterion) cells")
    print(r.groupby("llm")[["passes", "advantage_probability", "min_epsilon"]].mean().round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
