"""The closed set of reason codes for everything that does not reach the clean dataset.

A quarantine row always carries one of these codes (``reason``) and a sentence for people
(``detail``). Record-level checks registered in ``checks/`` add their own names at run time; the
codes here are the ones the ingestion stages themselves can emit.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    # whole files (source_line is null)
    SYMLINK_OUTSIDE_ROOT = "symlink_outside_root"
    SYMLINK_LOOP = "symlink_loop"
    BROKEN_SYMLINK = "broken_symlink"
    NOT_REGULAR_FILE = "not_regular_file"
    UNREADABLE_FILE = "unreadable_file"
    OVERSIZED_FILE = "oversized_file"
    EMPTY_FILE = "empty_file"
    BINARY_FILE = "binary_file"
    # records
    NO_HEADER = "no_header"
    EMPTY_TEXT = "empty_text"
    OVERSIZED_RECORD = "oversized_record"  # a paragraph over the policy's max_paragraph_chars, not cleaned
    CHANGED_DURING_RUN = "changed_during_run"  # every row of a file that changed while the run read it
    # an unexpected exception in a per-record step (that record) or a per-file step (that file's rows)
    PROCESSING_ERROR = "processing_error"
    # The named record checks of checks/domain.py (text_length, not_placeholder, …) add their own.
