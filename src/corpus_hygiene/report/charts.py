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


HIST_WIDTH, HIST_HEIGHT = 560, 90  # px of a signal histogram's plot area


def signal_histogram(values: list[float], limits: dict[str, float], bins: int = 24) -> dict:
    """A histogram of one quality signal over the kept records, with the policy's limits placed on the
    same axis (the axis spans both, so a limit outside the data is still drawn at its edge).

    >>> h = signal_histogram([1, 2, 2, 3], {"min": 0})
    >>> [b["count"] for b in h["bins"] if b["count"]], h["limits"]
    ([1, 2, 1], [{'label': 'min 0', 'x': 0}])
    """
    if not values:
        return {"bins": [], "limits": [], "lo": None, "hi": None}
    lo = min(min(values), *limits.values()) if limits else min(values)
    hi = max(max(values), *limits.values()) if limits else max(values)
    span = (hi - lo) or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / span * bins))] += 1
    top = max(counts)
    step = HIST_WIDTH / bins

    def x(v: float) -> int:
        return round((v - lo) / span * HIST_WIDTH)

    return {
        "bins": [
            {
                "x": round(i * step),
                "w": max(1, round(step) - 1),
                "h": round(HIST_HEIGHT * n / top) if n else 0,
                "count": n,
                "lo": lo + i * span / bins,
                "hi": lo + (i + 1) * span / bins,
            }
            for i, n in enumerate(counts)
        ],
        "limits": [{"label": f"{name} {value:g}", "x": x(value)} for name, value in limits.items()],
        "lo": lo,
        "hi": hi,
    }
