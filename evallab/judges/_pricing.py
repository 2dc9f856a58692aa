"""Token prices and the cost of a reply.

Prices are US dollars per million tokens, ``{model: (input, output)}`` or ``{model: (input, output,
cached_input)}``: prompt tokens the server reports as cached (``usage.prompt_tokens_details.cached_tokens``) are
priced at ``cached_input`` where the table has it, at ``input`` otherwise; reasoning tokens are output tokens
(they are part of ``completion_tokens``). :data:`DEFAULT_PRICES` holds list prices published by the providers
(OpenAI pricing page, DeepSeek "Models & Pricing" page: cache-miss input, cache-hit input) as read when this
table was written — prices change, so pass your own table (``prices=`` on the judge, or
``--prices prices.yaml`` on the CLI), which is merged over the defaults. A model with no price has cost NA.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from evallab.errors import DataError

#: USD per 1M tokens (input, output, cached input)
DEFAULT_PRICES: dict[str, tuple[float, ...]] = {
    "gpt-4o": (2.50, 10.00, 1.25),
    "gpt-4o-mini": (0.15, 0.60, 0.075),
    "gpt-4.1": (2.00, 8.00, 0.50),
    "gpt-4.1-mini": (0.40, 1.60, 0.10),
    "gpt-4.1-nano": (0.10, 0.40, 0.025),
    "o4-mini": (1.10, 4.40, 0.275),
    "o3-mini": (1.10, 4.40, 0.55),
    "gpt-5": (1.25, 10.00, 0.125),
    "gpt-5-mini": (0.25, 2.00, 0.025),
    "gpt-5-nano": (0.05, 0.40, 0.005),
    "deepseek-chat": (0.27, 1.10, 0.07),
    "deepseek-reasoner": (0.55, 2.19, 0.14),
}


def price_table(overrides: Mapping[str, object] | str | Path | None = None) -> dict[str, tuple[float, float]]:
    """The default table with ``overrides`` merged over it.

    Parameters
    ----------
    overrides : mapping or path, optional
        ``{model: [input_usd_per_1M, output_usd_per_1M]}`` or ``[input, output, cached_input]`` (or ``{model:
        {input: .., output: .., cached_input: ..}}``), or a YAML/JSON file holding that mapping.

    Raises
    ------
    DataError
        A file that does not exist or does not parse, or a price that is not two or three non-negative numbers.
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
            v = (v.get("input"), v.get("output")) + ((v["cached_input"],) if v.get("cached_input") is not None
                                                     else ())
        try:
            nums = tuple(float(x) for x in v)
        except (TypeError, ValueError):
            nums = ()
        if len(nums) not in (2, 3):
            raise DataError(f"price of {model!r} is {v!r}; expected [input, output] or [input, output, "
                            "cached_input] USD per 1M tokens", path=path, column=str(model))
        if min(nums) < 0:
            raise DataError(f"negative price for {model!r}", path=path, column=str(model))
        table[str(model)] = nums
    return table


_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$|-\d{4}$")


@functools.lru_cache(maxsize=256)
def _undated(model: str) -> str:
    """``model`` without a dated suffix (``gpt-4o-2024-08-06`` → ``gpt-4o``, ``gpt-4-0613`` → ``gpt-4``)."""
    return _DATED.sub("", model)


def cost_usd(model: str | None, input_tokens: int | None, output_tokens: int | None,
             prices: Mapping[str, tuple[float, ...]], cached_tokens: int | None = None) -> float | None:
    """Cost in USD of one reply, or ``None`` when the model has no price or no token counts are known.

    The model is looked up as given, then with a dated suffix removed (``gpt-4o-2024-08-06`` → ``gpt-4o``).
    ``cached_tokens`` (of the ``input_tokens``) are priced at the model's cached-input rate when it has one:
    ``((input - cached) * input_price + cached * cached_price + output * output_price) / 1e6``.
    """
    if model is None or (input_tokens is None and output_tokens is None):
        return None
    p = prices.get(model)
    if p is None:
        p = prices.get(_undated(model))
    if p is None:
        return None
    if cached_tokens and len(p) > 2:
        cached = min(int(cached_tokens), input_tokens or 0)
        return (((input_tokens or 0) - cached) * p[0] + cached * p[2] + (output_tokens or 0) * p[1]) / 1e6
    return ((input_tokens or 0) * p[0] + (output_tokens or 0) * p[1]) / 1e6
