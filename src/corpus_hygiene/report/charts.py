"""Chart data for the report: plain numbers the template draws as inline SVG bars (no JS, no network)."""

from __future__ import annotations

BAR_WIDTH = 420  # px of the longest bar


def bars(items: dict[str, int], width: int = BAR_WIDTH) -> list[dict]:
    """[{label, value, width}] with widths scaled to the largest value.

    >>> bars({"en": 10, "zh": 5})[1]
    {'label': 'zh', 'value': 5, 'width': 210}
    """
    top = max(items.values(), default=0) or 1
    return [
        {"label": k, "value": v, "width": max(1, round(width * v / top)) if v else 0}
        for k, v in items.items()
    ]


def length_histogram(lengths: list[int], bins: int = 12) -> list[dict]:
    """Text lengths (characters) in equal-width bins, as bars labelled by their range."""
    if not lengths:
        return []
    lo, hi = min(lengths), max(lengths)
    step = max(1, -(-(hi - lo + 1) // bins))
    counts: dict[str, int] = {}
    for start in range(lo, hi + 1, step):
        counts[f"{start:,}–{start + step - 1:,}"] = 0
    keys = list(counts)
    for n in lengths:
        counts[keys[(n - lo) // step]] += 1
    return bars(counts)
