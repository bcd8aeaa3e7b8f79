"""Chart data for the report: plain numbers the template draws as inline SVG bars (no JS, no network)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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


def length_histogram(lengths: Sequence[int] | np.ndarray, bins: int = 12) -> list[dict]:
    """Text lengths (characters) in equal-width bins, as bars labelled by their range."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if not len(lengths):
        return []
    lo, hi = int(lengths.min()), int(lengths.max())
    step = max(1, -(-(hi - lo + 1) // bins))
    starts = range(lo, hi + 1, step)
    counts = np.bincount((lengths - lo) // step, minlength=len(starts)).tolist()
    return bars({f"{start:,}–{start + step - 1:,}": n for start, n in zip(starts, counts, strict=True)})


HIST_WIDTH, HIST_HEIGHT = 560, 90  # px of a signal histogram's plot area


def signal_histogram(values: Sequence[float] | np.ndarray, limits: dict[str, float], bins: int = 24) -> dict:
    """A histogram of one quality signal over the kept records, with the policy's limits placed on the
    same axis (the axis spans both, so a limit outside the data is still drawn at its edge).

    >>> h = signal_histogram([1, 2, 2, 3], {"min": 0})
    >>> [b["count"] for b in h["bins"] if b["count"]], h["limits"]
    ([1, 2, 1], [{'label': 'min 0', 'x': 0}])
    """
    values = np.asarray(values)
    if not len(values):
        return {"bins": [], "limits": [], "lo": None, "hi": None}
    lo = min([values.min().item(), *limits.values()])
    hi = max([values.max().item(), *limits.values()])
    span = (hi - lo) or 1.0
    at = np.minimum(bins - 1, ((values - lo) / span * bins).astype(np.int64))
    counts = np.bincount(at, minlength=bins).tolist()
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
