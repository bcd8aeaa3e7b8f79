"""No single paragraph or file can fail a run.

A per-record or per-file step that raises something nobody planned for (a bug of ours or of a
dependency, on text nobody here wrote) sends that record or file to quarantine as ``processing_error``,
with a detail naming the step and the exception (``latex: KeyError: '2'``); the run goes on. The
``processing_error_share`` gate (checks/gates.py) fails the run when this happens to more than a few
records, so a broken dependency fails loudly instead of quarantining half a corpus.
"""

from __future__ import annotations

# Longest detail kept: an exception's message can quote the whole input.
MAX_DETAIL_CHARS = 300


class StepFailed(Exception):
    """An unexpected exception inside the named step; ``detail`` is the quarantine row's sentence."""

    def __init__(self, step: str, error: BaseException) -> None:
        self.step = step
        self.detail = describe_failure(step, error)
        super().__init__(self.detail)


def describe_failure(step: str, error: BaseException) -> str:
    """``step: ExceptionType: message``, the message cut to a readable length.

    >>> describe_failure("latex", KeyError("2"))
    "latex: KeyError: '2'"
    """
    text = f"{step}: {type(error).__name__}: {error}"
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


class step:  # noqa: N801 - used as a statement: ``with step("latex"): ...``
    """Names the step its block runs: an unexpected exception leaves the block as ``StepFailed``
    carrying that name (an inner step's name wins). A class, not a generator: it runs per paragraph."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, traceback) -> None:
        if isinstance(error, Exception) and not isinstance(error, StepFailed):
            raise StepFailed(self.name, error) from error
