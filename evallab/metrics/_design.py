"""The design of a verdict table: which columns define a cell, what shape the table has, and replies paired across
presentation orders. Every estimator of :mod:`evallab.metrics` goes through here, so none pools or drops replies
silently and row order never changes a figure.

- :func:`check_design` — after grouping by ``by``, one reply per (dataset, item, order, sample) or a
  :class:`DesignError` naming the design columns that vary inside a group (e.g. ``strategy``).
- :func:`describe` — the table's shape in words: orders present, gold coverage, samples, design columns.
- :func:`item_key` — THE item of each row (dataset, item_id) as an integer; every per-item sum and item interval
  goes through it.
- :func:`paired_design` — a :class:`PairedDesign`: the table under a grouping, checked once and encoded (groups,
  items, orders, samples, the replies of each (group, item, sample) side by side across the orders ab/ba, aligned
  by that key). The pairwise estimators (agreement, position) take it in place of the table, so a caller prepares
  it once for several of them.
- :func:`order_pairs` — the same pairs in words: one row per (group, item, sample) with the verdicts of both
  presentation orders.
- :func:`not_computable` — the reason a figure cannot be computed on this table (a ``note`` cell), never 0.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evallab import verdicts as V
from evallab.errors import DesignError, EvallabError

#: columns that define a design cell (a judge configuration and a slice of the data)
DESIGN_COLUMNS = ("dataset", "subset", "judge", "model", "strategy", "anchor_set")
#: one reply per unit within a design cell
UNIT = ("dataset", "item_id", "order", "sample")
#: the presentation orders of a pairwise reply
ORDERS = ("ab", "ba")
#: the design cell of the pairwise estimators unless told otherwise (LLMBar's table: one row per subset, judge,
#: strategy)
DEFAULT_BY = ("subset", "judge", "strategy")


def check_design(df: pd.DataFrame, by: Sequence[str], *, unit: Sequence[str] = UNIT) -> None:
    """Raise unless grouping ``df`` by ``by`` leaves at most one reply per ``unit``.

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`).
    by : sequence of str
        The grouping columns of the estimator (the design cell).
    unit : sequence of str, default ("dataset", "item_id", "order", "sample")
        What identifies one reply inside a cell.

    Returns
    -------
    None

    Raises
    ------
    DesignError
        Naming the columns that vary inside a group (e.g. ``['strategy']``) and the first offending unit, with the
        fix: add them to ``by`` or select one value. A missing ``by`` column is named too.

    Examples
    --------
    Two strategies' replies to one item in one order: grouping by judge alone would pool them.

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1"], "judge": "A", "order": ["ab", "ab"],
    ...                                    "strategy": ["Vanilla", "CoT"], "verdict": ["1", "2"]}))
    >>> check_design(df, ["judge", "strategy"])
    >>> try:
    ...     check_design(df, ["judge"])
    ... except DesignError as e:
    ...     print(e.column)
    strategy
    """
    missing = [c for c in [*by, *unit] if c not in df.columns]
    if missing:
        raise DesignError(f"missing column(s) {missing} needed to group replies", column=missing[0])
    key = list(dict.fromkeys([*by, *unit]))
    parts = [V.codes(df[c]) for c in key]
    if V.combine_codes([c for c, _ in parts], [len(u) for _, u in parts])[1] == len(df):
        return  # one reply per key
    dup = df.duplicated(key, keep=False)
    d = df.loc[dup]
    vary = [c for c in DESIGN_COLUMNS
            if c in d.columns and c not in key
            and (d.groupby(key, dropna=False, observed=True)[c].nunique(dropna=False) > 1).any()]
    first = d.iloc[0]
    where = ", ".join(f"{c}={(first[c].item() if hasattr(first[c], 'item') else first[c])!r}" for c in key)
    if vary:
        raise DesignError(f"grouping by {list(by)} leaves several replies per (item, order, sample), e.g. {where}: "
                          f"{vary} vary inside a group; add {vary} to by= or select one value of each",
                          column=vary[0])
    raise DesignError(f"grouping by {list(by)} leaves several replies per (item, order, sample), e.g. {where}, and "
                      "no design column tells them apart; expected one reply per key (add a sample index)",
                      column="sample")



# ---------------------------------------------------------------------- the kind of table: verdicts, not scores
def require_verdicts(df: pd.DataFrame, *, what: str = "this estimator", instead: str | None = None,
                     path: str | None = None) -> pd.DataFrame:
    """``df`` unchanged unless it is a score table (:func:`evallab.verdicts.is_score_table`: numeric scores,
    every verdict empty), which is refused in one line.

    Parameters
    ----------
    df : DataFrame
        The table an estimator was given.
    what : str
        The estimator in the field's terms (``"Cohen's kappa"``), named in the refusal.
    instead : str, optional
        Its counterpart on a rating scale (``"evallab.metrics.score_agreement (weighted kappa)"``); ``None``:
        there is none, the refusal names the scale estimators and the thresholds of ``evallab import``.
    path : str, optional
        Where the table came from (a file, or the argument's name), named in the refusal.

    Raises
    ------
    DesignError
        ``<where>, column 'verdict': this is a score table (scores only: column 'score', 1–5, every verdict
        empty); <what> needs verdicts ... — use <instead> ...``: one line.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"item_id": ["s1", "s2"], "judge": "J", "verdict": None, "score": [2, 4]})
    >>> try:
    ...     require_verdicts(t, what="accuracy")
    ... except DesignError as e:
    ...     print(str(e)[:66])
    column 'verdict': this is a score table (scores only: column 'scor
    >>> len(require_verdicts(t.assign(verdict=["pass", "fail"])))
    2
    """
    if isinstance(df, pd.DataFrame) and V.is_score_table(df):
        raise DesignError(V.score_table_refusal(df, what, instead), path=path, column="verdict")
    return df


def needs_verdicts(what: str, instead: str | None = None, *, tables: Sequence[str] = ("df",)) -> Callable:
    """Decorator of a public estimator that takes a verdict table: before it runs, each of its ``tables``
    arguments (default ``df``) goes through :func:`require_verdicts` — a score table is refused in one line
    naming what it holds, what the estimator needs and ``instead``, its counterpart on a scale. With several
    tables (``baseline``, ``candidate``) the refusal names the argument at fault.

    The wrapped function keeps its name, docstring and signature (:func:`functools.wraps`).

    Examples
    --------
    >>> import pandas as pd
    >>> @needs_verdicts("the share of passes")
    ... def share(df):
    ...     return float((df["verdict"] == "pass").mean())
    >>> share(pd.DataFrame({"verdict": ["pass", "fail"], "score": [9, 2]}))
    0.5
    >>> try:
    ...     share(pd.DataFrame({"verdict": [None, None], "score": [9, 2]}))
    ... except DesignError as e:
    ...     print("share of passes needs verdicts" in str(e))
    True
    """
    def wrap(f: Callable) -> Callable:
        sig = inspect.signature(f)

        @functools.wraps(f)
        def checked(*args, **kwargs):
            bound = sig.bind_partial(*args, **kwargs).arguments
            for name in tables:
                require_verdicts(bound.get(name), what=what, instead=instead,
                                 path=name if len(tables) > 1 else None)
            return f(*args, **kwargs)

        checked.needs_verdicts = (what, instead)
        return checked

    return wrap


def pairwise(df: pd.DataFrame) -> pd.Series:
    """Boolean mask of pairwise replies: an order ``ab``/``ba``, or a pairwise verdict or gold (``1``/``2``/``tie``).

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (``order``, ``verdict``, ``gold``).

    Returns
    -------
    Series of bool
        One per row.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q2", "q3"], "judge": "A",
    ...                                    "verdict": ["1", "pass", None], "order": ["", "", "ba"]}))
    >>> pairwise(df).tolist()
    [True, False, True]
    """
    pw = df["order"].isin(ORDERS)
    for c in ("verdict", "gold"):
        pw |= df[c].isin(["1", "2", "tie"]).fillna(False)
    return pw.astype(bool)


def describe(df: pd.DataFrame) -> dict:
    """The shape of a verdict table, for the line a report prints before its figures.

    Returns
    -------
    dict with ``replies``, ``items``, ``kind`` ("pairwise", "pointwise" or "mixed"), ``orders`` (the presentation
    orders present among pairwise replies: a subset of ab/ba, "" for unknown), ``both_orders`` (items judged in
    both), ``gold`` (replies with gold), ``gold_items``, ``samples`` (max replies per item and order),
    ``unparsed``, ``design`` (design columns with more than one value, → their values), ``snapshots``
    (:func:`evallab.verdicts.snapshots`: judge labels whose replies carry several model snapshots, which every
    estimator pools unless ``model`` — a design column — is in its ``by``) and ``text`` (one sentence saying all of
    it, including what is missing, a warning naming each judge label with several snapshots, and one counting the
    replies the judge client sent otherwise than asked — its ``adapted`` column, e.g. "temperature 0.0 not sent
    (model default)").

    Parameters
    ----------
    df : DataFrame
        Tidy verdict table (:mod:`evallab.verdicts`); ``df.attrs["left_out"]`` (set by
        :func:`evallab.verdicts.select`) is added to the text.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"], "judge": "A",
    ...                                    "order": ["ab", "ba", "ab", "ba"], "verdict": ["1", "1", "1", "2"],
    ...                                    "gold": "1"}))
    >>> print(describe(df)["text"])
    4 pairwise replies to 2 items; 2 items in both orders; gold on every item; one sample per item and order;
    0 unparsed replies (counted, never scored).

    A score table (:func:`evallab.verdicts.is_score_table`: ratings on a scale, no verdict) is described in its
    own terms by :func:`_describe_scores` — scores, raters (the human ones counted), items, the scale, samples per
    item and rater — with ``kind`` ``"scores"``:

    >>> s = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"], "judge": ["ann", "A", "ann", "A"],
    ...                                   "role": ["human", "judge", "human", "judge"], "verdict": None,
    ...                                   "score": [4.0, 5.0, 2.0, 3.0]}))
    >>> print(describe(s)["text"])
    4 scores from 2 raters (1 human) on 2 items; scores from 2 to 5 (no declared scale); one score per item and
    rater.
    """
    if V.is_score_table(df):
        return _describe_scores(df)
    pw = pairwise(df)
    # a reply with no verdict, no gold and no order says nothing about its kind: it does not make a table "mixed"
    silent = df["verdict"].isna() & df["gold"].isna() & ~df["order"].isin(ORDERS)
    kind = "pairwise" if pw[~silent].all() else ("pointwise" if not pw.any() else "mixed")
    orders = sorted(set(df.loc[pw, "order"].astype(str).unique()))
    both = 0
    if pw.any():
        o = df.loc[pw & df["order"].isin(ORDERS)].groupby(["dataset", "item_id"], observed=True)["order"].nunique()
        both = int((o == 2).sum())
    samples = int(df.groupby(["dataset", "item_id", "order", *[c for c in DESIGN_COLUMNS if c in df.columns]],
                             observed=True, dropna=False).size().max()) if len(df) else 0
    design = {c: sorted(map(str, df[c].dropna().unique()))[:20] for c in DESIGN_COLUMNS
              if c in df.columns and df[c].nunique(dropna=True) > 1}
    gold = int(df["gold"].notna().sum())
    items = int(df[["dataset", "item_id"]].drop_duplicates().shape[0])
    gold_items = int(df.loc[df["gold"].notna(), ["dataset", "item_id"]].drop_duplicates().shape[0])
    unparsed = int(df["verdict"].isna().sum())
    parts = [f"{len(df):,} {kind} replies to {items:,} items"]
    if kind != "pointwise":
        if orders == [""]:
            parts.append("one presentation order (not recorded): consistency and first-slot preference need both")
        elif set(orders) >= set(ORDERS):
            parts.append(f"{both:,} items in both orders")
            per_judge = df.loc[pw & df["order"].isin(ORDERS)].groupby("judge", observed=True)["order"].unique()
            one = {str(j): str(o[0]) for j, o in per_judge.items() if len(o) == 1}
            if one:
                parts.append(f"asked in one order only: {', '.join(f'{j} ({o})' for j, o in sorted(one.items()))} "
                             "(consistency and Acc. need both)")
        else:
            parts.append(f"one presentation order ({', '.join(o or 'unknown' for o in orders)}): consistency "
                         "needs both")
    parts.append("no gold labels: gold-based figures are not computable" if gold == 0 else
                 f"gold on {gold_items:,} of {items:,} items" if gold_items < items else "gold on every item")
    per = "per item" if kind == "pointwise" else "per item and order"
    parts.append(f"up to {samples} sample(s) {per}" if samples > 1 else f"one sample {per}")
    parts.append(f"{unparsed:,} unparsed repl{'y' if unparsed == 1 else 'ies'} (counted, never scored)")
    if design:
        plural = {"dataset": "datasets", "subset": "subsets", "judge": "judges", "model": "models",
                  "strategy": "strategies", "anchor_set": "anchor sets"}
        parts.append("several " + ", ".join(f"{plural[c]} ({len(v)})" for c, v in design.items()))
    parts += list(df.attrs.get("left_out", []))  # what the report's filters removed (verdicts.select)
    snap = V.snapshot_note(df)
    if snap:
        parts.append(f"WARNING: {snap}")
    adapted = _adapted_note(df)
    if adapted:
        parts.append(f"WARNING: {adapted}")
    return {"replies": len(df), "items": items, "kind": kind, "orders": orders, "both_orders": both, "gold": gold,
            "gold_items": gold_items, "samples": samples, "unparsed": unparsed, "design": design,
            "snapshots": V.snapshots(df), "text": "; ".join(parts) + "."}


def _describe_scores(df: pd.DataFrame) -> dict:
    """:func:`describe` for a score table: ``text`` reads "N scores from J raters (H human) on I items", the scale
    (declared in :data:`evallab.verdicts.SCALE_COLUMNS`, else the scores' range), the samples per item and rater, the
    rows without a score, the design columns with several values and the same warnings as a verdict table's. The
    dict keeps :func:`describe`'s keys (``kind`` ``"scores"``; ``replies`` the rows) and adds ``scores`` (rows with
    a numeric score), ``raters`` and ``humans`` (rater labels ``judge`` or ``judge · strategy``, the human ones by
    ``role``)."""
    score = pd.to_numeric(df["score"], errors="coerce")
    d = df[score.notna()]
    d = d.assign(_rater=V.rater_label(d).fillna("").astype(str))  # as the scale estimators name a rater
    raters = sorted(d["_rater"].unique())
    human = (d["role"].astype("string") == "human").fillna(False) if "role" in d.columns else None
    humans = sorted(d.loc[human.to_numpy(dtype=bool), "_rater"].unique()) if human is not None else []
    items = int(df[["dataset", "item_id"]].drop_duplicates().shape[0])
    parts = [f"{len(d):,} score{'' if len(d) == 1 else 's'} from {len(raters)} rater{'' if len(raters) == 1 else 's'} "
             + (f"({len(humans)} human)" if human is not None else "(no role column: no rater marked human)")
             + f" on {items:,} item{'' if items == 1 else 's'}"]
    declared = [c for c in ("scale_min", "scale_max") if c in df.columns and df[c].notna().any()]
    if len(declared) == 2:
        lo, hi = float(df["scale_min"].min()), float(df["scale_max"].max())
        step = f", step {float(df['scale_step'].min()):g}" if "scale_step" in df.columns and \
            df["scale_step"].notna().any() else ""
        level = f", {'/'.join(sorted(map(str, df['scale_level'].dropna().unique())))}" if "scale_level" in \
            df.columns and df["scale_level"].notna().any() else ""
        parts.append(f"a {lo:g}–{hi:g} scale{step}{level}")
    elif len(d):
        parts.append(f"scores from {score.min():g} to {score.max():g} (no declared scale)")
    keys = [c for c in ("dataset", "item_id", *[c for c in DESIGN_COLUMNS if c not in ("judge", "strategy")],
                        "criterion", "_rater") if c in d.columns]
    samples = int(d.groupby(keys, observed=True, dropna=False).size().max()) if len(d) else 0
    parts.append(f"up to {samples} samples per item and rater" if samples > 1 else "one score per item and rater")
    unscored = int(len(df) - len(d))
    if unscored:
        parts.append(f"{unscored:,} row{'' if unscored == 1 else 's'} without a score (left out)")
    design = {c: sorted(map(str, df[c].dropna().unique()))[:20] for c in DESIGN_COLUMNS
              if c in df.columns and df[c].nunique(dropna=True) > 1}
    shown = {c: v for c, v in design.items() if c not in ("judge", "strategy")}  # the raters say those
    if shown:
        plural = {"dataset": "datasets", "subset": "subsets", "model": "models", "anchor_set": "anchor sets"}
        parts.append("several " + ", ".join(f"{plural[c]} ({len(v)})" for c, v in shown.items()))
    parts += list(df.attrs.get("left_out", []))
    for note in (V.snapshot_note(df), _adapted_note(df)):
        if note:
            parts.append(f"WARNING: {note}")
    return {"replies": len(df), "items": items, "kind": "scores", "orders": [], "both_orders": 0,
            "gold": int(df["gold"].notna().sum()),
            "gold_items": int(df.loc[df["gold"].notna(), ["dataset", "item_id"]].drop_duplicates().shape[0]),
            "samples": samples, "unparsed": 0, "design": design, "snapshots": V.snapshots(df),
            "scores": len(d), "raters": raters, "humans": humans, "text": "; ".join(parts) + "."}


def _adapted_note(df: pd.DataFrame) -> str:
    """What the judge client sent otherwise than asked (its ``adapted`` column: a parameter the model refused,
    renamed or left out, :mod:`evallab.judges`), counted per change; "" when every reply was sent as asked."""
    if "adapted" not in df.columns:
        return ""
    a = df["adapted"].dropna().astype(str).str.strip()
    a = a[a != ""]
    if a.empty:
        return ""
    counts = a.value_counts()
    return (f"{len(a):,} of {len(df):,} replies were sent otherwise than the study asked (the endpoint refused a "
            "parameter): " + "; ".join(f"{what} ({n:,})" for what, n in counts.items()))


# ------------------------------------------------------------------------------------------------- codes
def _text(values: pd.Series | pd.Index) -> pd.Series | pd.Index:
    """``values`` as text (string columns unchanged): the item key orders ids as text, ``"10" < "9"``."""
    return values if isinstance(values.dtype, pd.StringDtype) else values.astype(str)


def _sorted(values: pd.Series | pd.Index) -> tuple[np.ndarray, pd.Index]:
    """Codes numbered in the sorted order of ``values`` (NA last) and the values they stand for."""
    return V.codes(values, sort=True)


def item_key(d: pd.DataFrame | pd.Index) -> np.ndarray:
    """The item of each row as an integer: THE item key of every estimator (the resampling unit of its intervals).

    Parameters
    ----------
    d : DataFrame or Index
        A verdict table (or any frame with ``item_id`` and, optionally, ``dataset`` columns), or an index with
        those levels.

    Returns
    -------
    ndarray of int
        One per row: equal for rows of the same (dataset, item_id), numbered in the order of (dataset, item_id)
        read as text — so per-item arrays come out in the same order wherever they are built, and an item
        bootstrap draws the same items for the same seed.

    Examples
    --------
    Ids are ordered as text, so "10" comes before "9":

    >>> import pandas as pd
    >>> item_key(pd.DataFrame({"item_id": ["9", "10", "9"]})).tolist()
    [1, 0, 1]
    """
    get = d.get_level_values if isinstance(d, pd.Index) else d.__getitem__
    names = d.names if isinstance(d, pd.Index) else d.columns
    parts = [_sorted(_text(get(c))) for c in ("dataset", "item_id") if c in names]
    return V.combine_codes([c for c, _ in parts], [len(u) for _, u in parts])[0]


# ------------------------------------------------------------------------------------------ the paired design
def _per_group(group: np.ndarray, n_groups: int, item: np.ndarray, n_items: int,
               values: Sequence[np.ndarray]) -> Callable[[int], np.ndarray]:
    """Per-(group, item) sums of ``values`` over the rows given: a function ``group code -> ndarray (items of that
    group in item order, len(values))``."""
    code, m = V.compress_codes(group.astype(np.int64) * n_items + item, max(n_groups * n_items, 1))
    sums = np.column_stack([np.bincount(code, weights=np.asarray(v, dtype=float), minlength=m) for v in values]) \
        if len(code) else np.zeros((0, len(values)))
    first = np.zeros(m, dtype=np.int64)
    first[code] = group  # every row of a (group, item) cell has the same group
    bounds = np.searchsorted(first, np.arange(n_groups + 1))
    return lambda g: sums[bounds[g]:bounds[g + 1]]


@dataclass(frozen=True, eq=False)
class PairedDesign:
    """A verdict table under a grouping, checked once and encoded for every estimator that pairs the replies of an
    item across presentation orders (:func:`paired_design` builds it; pass it to several estimators in place of the
    table).

    Attributes
    ----------
    table : the verdict table it was built from (not copied).
    by : the grouping columns (the design cell).
    groups : DataFrame, one row per group in sorted order (row position = group code): the ``by`` columns. One row
        (no column) when ``by`` is empty.
    items : DataFrame, one row per item (position = item code, :func:`item_key` order): ``dataset``, ``item_id``.
    labels : the verdict and gold values in text order; code ``i`` is ``labels[i]``, ``-1`` is NA (unparsed, no
        gold, not asked).
    replies : dict of arrays, one entry per reply (row of ``table``, same order): ``group``, ``item``, ``order``
        (0 = ab, 1 = ba, -1 = another or no order), ``verdict``, ``gold`` (label codes), ``first_slot`` (1 = a
        decisive reply picked the output shown first, 0 = the second, -1 = not decisive: a tie, unparsed or no
        recorded order).
    pairs : dict of arrays, one entry per (group, item, sample) asked in at least one of the orders ab/ba, sorted
        by (group, item, sample): ``group``, ``item``, ``sample`` (the table's value), ``verdict_ab``,
        ``verdict_ba`` (codes; -1 when unparsed or not asked), ``has_ab``, ``has_ba`` (the order was asked),
        ``gold`` (the item's gold code). One asked in BOTH orders is what every estimator calls a pair (its
        ``pairs`` column counts those).
    orders : per group, the sorted distinct values of ``order`` among its replies (as text; "" = not recorded).
    draws : the item-bootstrap draws the estimators given this design share (see
        :func:`evallab.metrics._intervals.shared_resamples`): the same figures, drawn once.

    Examples
    --------
    Item q1 picks output 1 in both orders (first slot, then second); q2 picks the first slot twice:

    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"], "judge": "A",
    ...                                    "order": ["ab", "ba", "ab", "ba"], "verdict": ["1", "1", "1", "2"],
    ...                                    "gold": "1"}))
    >>> design = paired_design(df, ["judge"])
    >>> design.n_groups, design.n_items, design.orders, design.labels
    (1, 2, (('ab', 'ba'),), ('1', '2'))
    >>> design.replies["first_slot"].tolist()
    [1, 0, 1, 1]
    """

    table: pd.DataFrame
    by: tuple[str, ...]
    groups: pd.DataFrame
    items: pd.DataFrame
    labels: tuple
    replies: dict[str, np.ndarray]
    pairs: dict[str, np.ndarray]
    orders: tuple[tuple[str, ...], ...]
    draws: dict = field(default_factory=dict, repr=False)

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def n_items(self) -> int:
        return len(self.items)

    def key(self, g: int) -> dict:
        """The ``by`` values of group ``g`` (``{}`` when ``by`` is empty)."""
        return dict(self._keys[g])

    @functools.cached_property
    def _keys(self) -> list[dict]:
        """Every group's ``by`` values, read once (estimators ask each group's key, often several times)."""
        columns = [(c, self.groups[c]) for c in self.by]
        return [{c: s.iloc[g] for c, s in columns} for g in range(self.n_groups)]

    def pair_rows(self, g: int) -> slice:
        """The entries of :attr:`pairs` in group ``g`` (pairs are sorted by group first)."""
        lo, hi = np.searchsorted(self.pairs["group"], [g, g + 1])
        return slice(int(lo), int(hi))

    def code(self, label) -> int:
        """The code of a verdict label (``-2``, equal to no reply, when the table never holds it)."""
        return self.labels.index(label) if label in self.labels else -2

    def count(self, level: str, values: np.ndarray | None = None) -> np.ndarray:
        """Per group (by code) the number of ``level`` entries ("replies" or "pairs"), or the sum of ``values`` over
        them."""
        return np.bincount(getattr(self, level)["group"], weights=values, minlength=self.n_groups)

    def item_sums(self, level: str, rows: np.ndarray, values: Sequence[np.ndarray]) -> Callable[[int], np.ndarray]:
        """Per-item sums of ``values`` over the ``level`` entries ("replies" or "pairs") where ``rows`` is True,
        within each group — the input of every item interval: a function ``group code -> ndarray of shape (items of
        the group with such an entry, len(values))``, items in :func:`item_key` order."""
        t = getattr(self, level)
        rows = np.asarray(rows, dtype=bool)
        return _per_group(t["group"][rows], self.n_groups, t["item"][rows], self.n_items,
                          [np.asarray(v)[rows] for v in values])

    def no_pairs_reason(self, g: int) -> str:
        """Why group ``g`` has no pair asked in both orders, as a note's reason: its verdicts are pointwise (no
        pairwise reply: nothing about orders applies), or the presentation orders it records."""
        if not self.count("replies", pairwise(self.table).to_numpy(float))[g]:
            return POINTWISE_REASON
        return ("needs both presentation orders (the table has "
                + " and ".join(o or "an unrecorded order" for o in self.orders[g]) + ")")

    def order_pairs(self) -> pd.DataFrame:
        """The pairs in words: :func:`order_pairs`."""
        p, t = self.pairs, self.table
        labels = np.array([*self.labels, pd.NA], dtype=object)  # code -1 → NA
        out = {c: self.groups[c].to_numpy()[p["group"]] for c in self.by}
        for c in ("dataset", "item_id"):
            if c not in out:
                out[c] = self.items[c].to_numpy()[p["item"]]
        out["sample"] = p["sample"]
        for c in ("verdict_ab", "verdict_ba", "has_ab", "has_ba", "gold"):
            out[c] = labels[p[c]] if c.startswith(("verdict", "gold")) else p[c]
        frame = pd.DataFrame(out)
        types = {c: t[c].dtype for c in [*self.by, "dataset", "item_id", "sample"] if c in t.columns}
        types.update({c: t["verdict"].dtype for c in ("verdict_ab", "verdict_ba", "gold")})
        return frame.astype(types)


@needs_verdicts("the paired design (replies across orders ab/ba)")
def paired_design(df: pd.DataFrame | PairedDesign, by: Sequence[str] | None = None) -> PairedDesign:
    """The paired design of a verdict table: built and checked once, then passed to several estimators.

    Parameters
    ----------
    df : tidy verdict table (:mod:`evallab.verdicts`); a :class:`PairedDesign` is returned as it is.
    by : the grouping columns (the design cell); ``None`` or ``()`` on a table: one group, the whole table. With a
        prepared design, ``None`` or the design's own ``by``.

    Returns
    -------
    PairedDesign
        Groups, items (:func:`item_key`), orders, samples and the replies of each (group, item, sample) side by side
        across the presentation orders ab/ba, aligned by that key.
        :func:`evallab.metrics._agreement.pairwise_statistics`,
        :func:`evallab.metrics._position.position_consistency`, :func:`~evallab.metrics._position.position_bias` and
        :func:`~evallab.metrics._position.balanced_position_accuracy` take it in place of the table, e.g.
        ``design = paired_design(df, ["judge"])``, then ``pairwise_statistics(design)`` and
        ``position_bias(design)``: the table is checked and encoded once, and the item bootstraps of both calls
        share their draws.

    Raises
    ------
    DesignError
        See :func:`check_design` (several replies per (item, order, sample) in a group; a missing column); gold that
        differs between the two orders of one item.
    EvallabError
        A prepared design passed with another ``by``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2"], "judge": "A",
    ...                                    "order": ["ab", "ba", "ab"], "verdict": ["1", "2", "1"]}))
    >>> design = paired_design(df, ["judge"])
    >>> design.pairs["has_ab"].tolist(), design.pairs["has_ba"].tolist()
    ([True, True], [True, False])
    >>> paired_design(design) is design
    True
    """
    if isinstance(df, PairedDesign):
        if by is not None and tuple(by) != df.by:
            raise EvallabError(f"the design was prepared with by={list(df.by)}; by={list(by)} needs its own design "
                               "(paired_design(table, by))")
        return df
    by = tuple(dict.fromkeys(by or ()))
    missing = [c for c in [*by, *UNIT, "verdict", "gold"] if c not in df.columns]
    if missing:
        raise DesignError(f"missing column(s) {missing} needed to group replies", column=missing[0])
    n = len(df)
    group, groups = _groups(df, by)
    item = item_key(df)
    n_groups, n_items = len(groups), (int(item.max()) + 1 if n else 0)
    order_raw, order_values = _sorted(df["order"])
    sample, sample_values = _sorted(df["sample"])
    if V.combine_codes([group, item, order_raw, sample],
                       [n_groups, n_items, len(order_values), len(sample_values)])[1] < n:
        check_design(df, by)  # names the columns that vary
        raise DesignError(f"grouping by {list(by)} leaves several replies per (item, order, sample): their item ids "
                          "differ only in type (read as text they are equal)", column="item_id")
    rep_i = np.zeros(n_items, dtype=np.int64)
    rep_i[item] = np.arange(n)  # a row of each item
    items = pd.DataFrame({c: (df[c].iloc[rep_i].reset_index(drop=True) if c in df.columns else "")
                          for c in ("dataset", "item_id")})
    verdict, gold, labels = _labels(df)
    order = np.array([ORDERS.index(v) if v in ORDERS else -1 for v in order_values], dtype=np.int8)[order_raw]
    one, two = (labels.index(x) if x in labels else -2 for x in ("1", "2"))
    decisive = (order >= 0) & ((verdict == one) | (verdict == two))
    first = np.where(decisive, ((order == 0) & (verdict == one)) | ((order == 1) & (verdict == two)), -1)
    replies = {"group": group, "item": item, "order": order, "verdict": verdict, "gold": gold,
               "first_slot": first.astype(np.int8)}
    present = np.zeros((n_groups, len(order_values)), dtype=bool)
    present[group, order_raw] = True
    orders = tuple(tuple(sorted(str(v) for v, p in zip(order_values, present[g], strict=True) if p))
                   for g in range(n_groups))
    del order_raw, decisive, first
    pairs = _pairs(df, replies, sample, (n_groups, n_items, len(sample_values)), labels)
    return PairedDesign(table=df, by=by, groups=groups, items=items, labels=labels, replies=replies, pairs=pairs,
                        orders=orders)


def _groups(df: pd.DataFrame, by: tuple[str, ...]) -> tuple[np.ndarray, pd.DataFrame]:
    """The group code of each row, groups numbered in ``groupby(by, sort=True, dropna=False)`` order, and the
    groups' ``by`` values (one row, no column, when ``by`` is empty)."""
    if not by:
        return np.zeros(len(df), dtype=np.int8), pd.DataFrame(index=range(1))
    parts = [_sorted(df[c]) for c in by]
    group, n_groups = V.combine_codes([c for c, _ in parts], [len(u) for _, u in parts])
    rep = np.zeros(n_groups, dtype=np.int64)
    rep[group] = np.arange(len(df))  # a row of each group
    return group, df[list(by)].iloc[rep].reset_index(drop=True)


def _labels(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Verdict and gold codes of each row in one vocabulary (-1 = NA) and the vocabulary."""
    vc, vu = pd.factorize(df["verdict"])
    gc, gu = pd.factorize(df["gold"])
    labels = tuple(sorted({*vu, *gu}, key=str))  # in text order: the codes never depend on row order
    lut = {v: i for i, v in enumerate(labels)}
    return (np.array([*(lut[v] for v in vu), -1], dtype=np.int16)[vc],  # code -1 (NA) picks the last entry
            np.array([*(lut[v] for v in gu), -1], dtype=np.int16)[gc], labels)


def _pairs(df: pd.DataFrame, replies: dict, sample: np.ndarray, cards: tuple[int, int, int],
           labels: tuple) -> dict[str, np.ndarray]:
    """The replies of each (group, item, sample) in the orders ab and ba side by side, aligned by that key."""
    group, item, order = replies["group"], replies["item"], replies["order"]
    rows = np.flatnonzero(order >= 0)
    pair, n_pairs = V.combine_codes([group[rows], item[rows], sample[rows]], cards)
    pos = np.full((2, n_pairs), -1, dtype=np.int64)
    pos[order[rows], pair] = rows  # one reply per (item, order, sample) in a group: checked by the caller
    del rows, pair
    has = pos >= 0
    at = np.where(has, pos, 0)
    none = np.int16(-1)
    v2, g2 = np.where(has, replies["verdict"][at], none), np.where(has, replies["gold"][at], none)
    clash = (g2[0] >= 0) & (g2[1] >= 0) & (g2[0] != g2[1])
    if clash.any():
        j = int(np.flatnonzero(clash)[0])
        raise DesignError(f"item {df['item_id'].iloc[pos[0, j]]!r} has gold {labels[g2[0, j]]!r} in order ab and "
                          f"{labels[g2[1, j]]!r} in ba; expected one gold label per item", column="gold")
    rep = np.where(has[0], pos[0], pos[1])  # a reply of each pair
    return {"group": group[rep], "item": item[rep], "sample": df["sample"].to_numpy()[rep], "verdict_ab": v2[0],
            "verdict_ba": v2[1], "has_ab": has[0], "has_ba": has[1], "gold": np.where(g2[0] >= 0, g2[0], g2[1])}


def design_of(df: pd.DataFrame | PairedDesign, by: Sequence[str] | None) -> PairedDesign:
    """What a pairwise estimator works on.

    Parameters
    ----------
    df : DataFrame or PairedDesign
        A verdict table, or a prepared design (returned as it is).
    by : sequence of str or None
        The grouping of a table; :data:`DEFAULT_BY` when None.

    Returns
    -------
    PairedDesign

    Raises
    ------
    DesignError, EvallabError
        See :func:`paired_design`.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1"], "judge": "A", "order": ["ab", "ba"],
    ...                                    "verdict": ["1", "1"]}))
    >>> design_of(df, None).by
    ('subset', 'judge', 'strategy')
    """
    return paired_design(df, DEFAULT_BY if by is None and not isinstance(df, PairedDesign) else by)


def order_pairs(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The replies of each (group, item, sample) side by side across presentation orders.

    Parameters
    ----------
    df : tidy verdict table with pairwise replies (order ``ab``/``ba``; other orders are ignored).
    by : grouping columns; checked with :func:`check_design` (several replies per unit raise).

    Returns
    -------
    DataFrame, one row per (by, dataset, item_id, sample) judged in at least one order: ``by`` columns,
    ``dataset``, ``item_id``, ``sample``, ``verdict_ab``, ``verdict_ba`` (NA when unparsed or not asked),
    ``has_ab``, ``has_ba`` (the order was asked), ``gold`` (the item's gold; the two orders' gold must agree).
    Row order of ``df`` never changes the result (sorted by key). The same pairs, encoded, are
    :attr:`PairedDesign.pairs` of :func:`paired_design`.

    Raises
    ------
    DesignError
        See :func:`check_design`; or gold that differs between the two orders of one item.

    Examples
    --------
    >>> import pandas as pd
    >>> from evallab import verdicts
    >>> df = verdicts.coerce(pd.DataFrame({"item_id": ["q1", "q1", "q2", "q2"], "judge": "A",
    ...                                    "order": ["ab", "ba", "ab", "ba"], "verdict": ["1", "1", "1", "2"],
    ...                                    "gold": "1"}))
    >>> print(order_pairs(df, ["judge"])[["item_id", "verdict_ab", "verdict_ba", "gold"]].to_string(index=False))
    item_id verdict_ab verdict_ba gold
         q1          1          1    1
         q2          1          2    1
    """
    return paired_design(df, by).order_pairs()


def groups(df: pd.DataFrame, by: Sequence[str]):
    """Iterate ``(key dict, sub-frame)`` over the groups of ``by`` in sorted order.

    Parameters
    ----------
    df : DataFrame
    by : sequence of str
        Grouping columns; empty: one group ``{}``, the whole table. NA is a group of its own.

    Yields
    ------
    (dict, DataFrame)
        The group's ``by`` values and its rows.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"judge": ["B", "A", "B"], "x": [1, 2, 3]})
    >>> [(key, len(g)) for key, g in groups(df, ["judge"])]
    [({'judge': 'A'}, 1), ({'judge': 'B'}, 2)]
    """
    by = list(by)
    if not by:
        yield {}, df
        return
    for key, g in df.groupby(by, dropna=False, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(by, key, strict=True)), g


def group_rows(df: pd.DataFrame, by: Sequence[str]):
    """Iterate ``(key dict, row positions)`` over the groups of ``by``: :func:`groups`, the same keys in the same
    order, with each group's positions in ``df`` (in table order) instead of its sub-frame — for estimators that
    read numpy arrays of the whole table at a group's rows.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"judge": ["B", "A", "B"], "x": [1, 2, 3]})
    >>> [(key, rows.tolist()) for key, rows in group_rows(df, ["judge"])]
    [({'judge': 'A'}, [1]), ({'judge': 'B'}, [0, 2])]
    """
    by = list(by)
    for key, g in groups(df[by].assign(_row=np.arange(len(df))), by):
        yield key, g["_row"].to_numpy()


def not_computable(reason: str) -> str:
    """The ``note`` of a figure the table cannot support.

    Parameters
    ----------
    reason : str

    Returns
    -------
    str

    Examples
    --------
    >>> not_computable("no gold labels")
    'not computable: no gold labels'
    """
    return f"not computable: {reason}"


#: why a figure of pairwise verdicts is missing on a pointwise group (a note's reason: nothing about orders applies)
POINTWISE_REASON = "needs pairwise verdicts (two outputs compared), and this group's verdicts are pointwise"
#: the prefix of a ``note`` saying why a figure is missing (:func:`not_computable`)
NOT_COMPUTABLE = "not computable: "


def _note_parts(notes) -> tuple[list[str], list[str]]:
    """The other remarks and the distinct reasons ("not computable: ...") of ``notes``, each once, in order.

    A note is read as its "; "-separated parts; a part opening with "not computable: " starts the reasons, and
    every part after it is a reason (the form :func:`join_notes` writes)."""
    other, why = [], []
    for n in notes:
        if not isinstance(n, str) or not n.strip():
            continue
        in_why = False
        for part in (p.strip() for p in n.split("; ")):
            if part.startswith(NOT_COMPUTABLE):
                in_why, part = True, part.removeprefix(NOT_COMPUTABLE).strip()
            if part:
                (why if in_why else other).append(part)
    return list(dict.fromkeys(other)), list(dict.fromkeys(why))


def join_notes(*notes: str) -> str:
    """Several notes as one cell: each remark and each reason once, the reasons after one "not computable: "
    (empty strings dropped).

    Parameters
    ----------
    *notes : str
        Notes, each possibly already joined (remarks, then "not computable: reason; reason").

    Returns
    -------
    str

    Examples
    --------
    >>> join_notes("no gold labels", "", "one order only")
    'no gold labels; one order only'
    >>> join_notes("not computable: no gold labels", "baseline", "not computable: no gold labels; no pair")
    'baseline; not computable: no gold labels; no pair'
    """
    other, why = _note_parts(notes)
    return "; ".join(other + ([NOT_COMPUTABLE + "; ".join(why)] if why else []))


def note_reasons(*notes: str) -> list[str]:
    """The distinct reasons of ``notes`` ("not computable: a; b" → ``["a", "b"]``), each once, in order.

    Parameters
    ----------
    *notes : str

    Returns
    -------
    list of str

    Examples
    --------
    >>> note_reasons("not computable: no gold labels; no pair", "baseline; not computable: no pair", None)
    ['no gold labels', 'no pair']
    """
    return _note_parts(notes)[1]


# ------------------------------------------------------------------------------------------- minimum size
#: the fewest items a row (a subset, judge, strategy cell) needs before a report headlines it or bootstraps a
#: multi-rater coefficient on it (report 01's ``min_items``; report 07 refuses thin subsets the same way with
#: ``min_gold``)
MIN_ITEMS = 20


def too_thin(items, min_items: int = MIN_ITEMS):
    """Whether a row resting on ``items`` items is below the minimum size (never headlined; Fleiss' kappa and
    Krippendorff's alpha get no interval).

    Parameters
    ----------
    items : int or array of int
        The items a row rests on.
    min_items : int, default :data:`MIN_ITEMS`

    Returns
    -------
    bool or array of bool

    Examples
    --------
    >>> too_thin(5), too_thin(20), too_thin(5, min_items=0)
    (True, False, False)
    """
    return np.asarray(items) < min_items if np.ndim(items) else bool(items < min_items)


def thin_note(items: int, min_items: int = MIN_ITEMS, what: str = "items") -> str:
    """The note of a row below the minimum size (the wording of report 07's ``min_gold``).

    Parameters
    ----------
    items : int
    min_items : int, default :data:`MIN_ITEMS`
    what : str, default "items"
        What ``items`` counts.

    Returns
    -------
    str

    Examples
    --------
    >>> thin_note(5)
    'no interval: 5 items, fewer than min_items=20'
    """
    return f"no interval: {items:,} {what}, fewer than min_items={min_items}"


def min_size_rule(min_items: int = MIN_ITEMS) -> str:
    """The minimum-size rule as a report states it once.

    Parameters
    ----------
    min_items : int, default :data:`MIN_ITEMS`

    Returns
    -------
    str

    Examples
    --------
    >>> print(min_size_rule(20).split("; ")[1])
    a row resting on fewer than 20 items (min_items) is shown but never headlined, ...
    """
    return (f"Each judge's figure over the whole table comes first, per strategy, then the breakdown by subset; a row "
            f"resting on fewer than {min_items:,} items (min_items) is shown but never headlined, and Fleiss' kappa "
            "and Krippendorff's alpha get no interval on it.")


__all__ = ["DEFAULT_BY", "DESIGN_COLUMNS", "DesignError", "MIN_ITEMS", "NOT_COMPUTABLE", "ORDERS", "POINTWISE_REASON",
           "PairedDesign", "UNIT",
           "check_design", "describe", "design_of", "groups", "item_key", "join_notes", "min_size_rule",
           "needs_verdicts", "not_computable", "note_reasons", "order_pairs", "paired_design", "pairwise",
           "require_verdicts", "thin_note", "too_thin"]
