"""Token prices and the cost of a reply.

Prices are US dollars per million tokens, ``{model: (input, output)}``. :data:`DEFAULT_PRICES` holds list prices
published by the providers (OpenAI pricing page, DeepSeek "Models & Pricing" page; cache-miss input price) as
read when this table was written — prices change, so pass your own table (``prices=`` on the judge, or
``--prices prices.yaml`` on the CLI), which is merged over the defaults. A model with no price has cost NA.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from evallab.errors import DataError

#: USD per 1M tokens (input, output)
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "deepseek-chat": (0.27, 1.10),
    "deepseek-reasoner": (0.55, 2.19),
}


def price_table(overrides: Mapping[str, object] | str | Path | None = None) -> dict[str, tuple[float, float]]:
    """The default table with ``overrides`` merged over it.

    Parameters
    ----------
    overrides : mapping or path, optional
        ``{model: [input_usd_per_1M, output_usd_per_1M]}`` (or ``{model: {input: .., output: ..}}``), or a YAML/JSON
        file holding that mapping.

    Raises
    ------
    DataError
        A file that does not exist or does not parse, or a price that is not two non-negative numbers.
    """
    table = dict(DEFAULT_PRICES)
    if overrides is None:
        return table
    path = None
    if isinstance(overrides, (str, Path)):
        path = str(overrides)
        p = Path(overrides)
        if not p.exists():
            raise DataError("no such price table file", path=path)
        try:
            overrides = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise DataError(f"not valid YAML/JSON ({exc})", path=path) from None
    if not isinstance(overrides, Mapping):
        raise DataError("a price table must map model -> [input, output] USD per 1M tokens", path=path)
    for model, v in overrides.items():
        if isinstance(v, Mapping):
            v = (v.get("input"), v.get("output"))
        try:
            inp, out = (float(x) for x in v)
        except (TypeError, ValueError):
            raise DataError(f"price of {model!r} is {v!r}; expected [input, output] USD per 1M tokens",
                            path=path, column=str(model)) from None
        if inp < 0 or out < 0:
            raise DataError(f"negative price for {model!r}", path=path, column=str(model))
        table[str(model)] = (inp, out)
    return table


_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$|-\d{4}$")


@functools.lru_cache(maxsize=256)
def _undated(model: str) -> str:
    """``model`` without a dated suffix (``gpt-4o-2024-08-06`` → ``gpt-4o``, ``gpt-4-0613`` → ``gpt-4``)."""
    return _DATED.sub("", model)


def cost_usd(model: str | None, input_tokens: int | None, output_tokens: int | None,
             prices: Mapping[str, tuple[float, float]]) -> float | None:
    """Cost in USD of one reply, or ``None`` when the model has no price or no token counts are known.

    The model is looked up as given, then with a dated suffix removed (``gpt-4o-2024-08-06`` → ``gpt-4o``).
    """
    if model is None or (input_tokens is None and output_tokens is None):
        return None
    p = prices.get(model)
    if p is None:
        p = prices.get(_undated(model))
    if p is None:
        return None
    return ((input_tokens or 0) * p[0] + (output_tokens or 0) * p[1]) / 1e6
