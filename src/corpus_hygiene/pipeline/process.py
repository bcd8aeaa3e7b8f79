"""One source file → records and rejections. The per-file unit of work (batches of files go to a Prefect
task each in the flow's process, or to a Dask task each on a cluster).

Every paragraph of a readable file leaves this function either as a Record or as a Rejected row;
a file that cannot be read at all leaves as one file-level Rejected row.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import chain

from checks import Policy
from corpus_hygiene.clean import clean_text
from corpus_hygiene.clean.encoding import repair_encoding
from corpus_hygiene.dedup.keys import dedup_key, record_id
from corpus_hygiene.dedup.signatures import signature_of
from corpus_hygiene.incremental.file_cache import FileCache
from corpus_hygiene.incremental.pair_memo import text_key
from corpus_hygiene.ingest import (
    BinaryContent,
    decode_bytes,
    parse_header,
    read_bytes,
    split_lines,
)
from corpus_hygiene.ingest.discover import LeftTheRoot, open_source
from corpus_hygiene.ingest.split import is_blank, paragraphs_from
from corpus_hygiene.ingest.stream import READ_BYTES, iter_lines, open_stream
from corpus_hygiene.isolation import StepFailed, describe_failure, step
from corpus_hygiene.language.detect import detect_language
from corpus_hygiene.models import FileResult, Header, Paragraph, Record, Rejected, SourceFile, SourceReport
from corpus_hygiene.pipeline.record_checks import check_results
from corpus_hygiene.reasons import Reason
from corpus_hygiene.signals import SIGNAL_COLUMNS, mask_contacts, signals_of


def _reject(src: SourceFile, para: Paragraph, reason: Reason, detail: str) -> Rejected:
    return Rejected(src.rel_path, para.line, reason.value, detail, para.text)


def process_paragraph(src: SourceFile, header: Header, para: Paragraph, policy: Policy) -> Record | Rejected:
    """Clean one paragraph into a candidate record with its quality signals, its MinHash signature and
    its text's memo key (computed here, in the parallel per-file stage, and cached with the file); the
    record checks of checks/ run on the file's records together (``check_results``). An unexpected
    exception in any step quarantines this paragraph alone (``processing_error``, isolation.py).
    """
    if para.n_chars is not None:
        detail = (
            f"a paragraph of {para.n_chars:,} characters, over the policy's max_paragraph_chars of "
            f"{policy.max_paragraph_chars:,}: not cleaned; its first {len(para.text):,} characters are kept"
        )
        return _reject(src, para, Reason.OVERSIZED_RECORD, detail)
    try:
        return _record_of(src, header, para, policy)
    except StepFailed as failed:
        return _reject(src, para, Reason.PROCESSING_ERROR, failed.detail)
    except Exception as exc:  # outside every named step: still this paragraph's alone
        return _reject(src, para, Reason.PROCESSING_ERROR, describe_failure("paragraph", exc))


def _record_of(src: SourceFile, header: Header, para: Paragraph, policy: Policy) -> Record | Rejected:
    # Language after the encoding repair (Chinese read as cp1252 looks Portuguese to a detector) and
    # before the other fixes: the PDF-artefact fixes need it to pick a word list. Markup barely moves
    # a detector on abstract-length text; the script decides CJK.
    with step("encoding"):
        repaired, repairs = repair_encoding(para.text)
    with step("language"):
        lang = detect_language(repaired)
    cleaned = clean_text(repaired, lang.code, repairs=repairs)
    text, fixes = cleaned.text, cleaned.fixes
    if policy.contacts == "mask":
        with step("contacts"):
            masked = mask_contacts(text)
        text, fixes = masked, fixes + (("contacts_masked",) if masked != text else ())
    with step("dedup_key"):
        key = dedup_key(text)
    if not key:
        return _reject(src, para, Reason.EMPTY_TEXT, "no letters or digits left after cleaning")
    with step("signals"):
        signals = signals_of(text, lang.code)
    with step("signature"):
        signature = signature_of(text, policy.dedup_config())
        memo_key = text_key(text)
    return Record(
        source_file=src.rel_path,
        source_line=para.line,
        venue=header.venue,
        year=header.year,
        header_label=header.label,
        header_lang=header.label_lang,
        text=text,
        text_raw=text if text == para.text else para.text,  # one object when unchanged
        lang=lang.code,
        lang_confidence=lang.confidence,
        fixes=fixes,
        record_id=record_id(key),
        **{c: getattr(signals, c) for c in SIGNAL_COLUMNS},
        n_emails=signals.pii["email"],
        n_phones=signals.pii["phone"],
        lost_words=cleaned.lost,
        signature=signature,
        text_key=memo_key,
    )


def _refused(
    src: SourceFile, reason: Reason, detail: str, size: int, sha256: str | None = None
) -> FileResult:
    report = SourceReport(
        source_file=src.rel_path, size=size, sha256=sha256, problem=reason.value, problem_detail=detail
    )
    return FileResult(source=report, rejected=[Rejected(src.rel_path, None, reason.value, detail)])


def process_files(
    sources: list[SourceFile], policy: Policy, cache: FileCache | None = None
) -> list[FileResult]:
    """Several files, in order: each taken from the cache or read and processed, then the record checks
    of checks/ run once over the records of all the files that were processed (pandera's fixed cost of
    a validation is paid per call, not per file), and those results are cached, checked.
    """
    done = [_read_isolated(src, policy, cache) for src in sources]
    check_results([result for result, _ in done], policy)  # cache hits were checked when stored
    for result, key in done:
        if key and cache is not None and result.source.problem != Reason.CHANGED_DURING_RUN:
            cache.put(key, result)
    return [result for result, _ in done]


def process_file(src: SourceFile, policy: Policy, cache: FileCache | None = None) -> FileResult:
    """Read one file and turn it into checked records; with a cache, an unchanged file is not processed
    again. A file above ``policy.stream_above_bytes`` is streamed in batches (``ingest/stream.py``) and
    never held whole; the result is the same as a whole read (tested).
    """
    return process_files([src], policy, cache)[0]


def _read_isolated(src: SourceFile, policy: Policy, cache: FileCache | None) -> tuple[FileResult, str | None]:
    """``_read``; an unexpected exception outside the paragraph and decoding steps (which isolate their
    own) leaves this file as one ``processing_error`` row, never cached."""
    try:
        return _read(src, policy, cache)
    except Exception as exc:
        return _refused(src, Reason.PROCESSING_ERROR, describe_failure("file", exc), src.size), None


def _read(src: SourceFile, policy: Policy, cache: FileCache | None) -> tuple[FileResult, str | None]:
    """The file's result and the cache key to store it under: ``None`` when it came from the cache or
    must not be cached, ``""`` when there is no cache."""
    if src.size > policy.stream_above_bytes:
        return _process_large(src, policy, cache)
    try:
        data = read_bytes(src, policy.max_file_bytes)
    except OSError as exc:
        return _unreadable(src, exc), None
    sha256 = hashlib.sha256(data).hexdigest()
    result, key = _cached(cache, src, sha256, policy, lambda: process_bytes(src, data, sha256, policy))
    return _unless_changed(src, len(data), result), key


def _unless_changed(src: SourceFile, size_read: int, result: FileResult) -> FileResult:
    """``result``, or its rows as ``changed_during_run`` when the file changed since it was discovered."""
    why = _changed(src, size_read)
    return _changed_during_run(result, why) if why else result


def _changed(src: SourceFile, size_read: int) -> str:
    """Why ``src`` changed since it was discovered (its size or mtime now, or the size read), or ""."""
    try:
        now = os.stat(src.abs_path, follow_symlinks=False)
    except OSError as exc:
        return f"it could no longer be read ({exc.strerror or exc})"
    if now.st_size != src.size or size_read != src.size:
        return f"its size went from {src.size:,} to {now.st_size:,} bytes ({size_read:,} read)"
    if src.mtime_ns is not None and now.st_mtime_ns != src.mtime_ns:
        return "it was modified (its mtime changed)"
    return ""


def _changed_during_run(result: FileResult, why: str) -> FileResult:
    """Every row of a file that changed while it was read, in quarantine: what was read is kept there,
    and nothing of it is published or cached (``process_files``; the next run reads the file again)."""
    detail = f"the file changed while the run read it: {why}; the next run reads it again"
    return _quarantine_all(result, Reason.CHANGED_DURING_RUN, detail)


def _quarantine_all(result: FileResult, reason: Reason, detail: str) -> FileResult:
    """The file's row with ``reason``, and every paragraph read so far as a row of it too."""
    rows = [Rejected(r.source_file, r.source_line, reason.value, detail, r.text_raw) for r in result.records]
    rows += [replace(r, reason=reason.value, detail=detail) for r in result.rejected if r.source_line]
    return _refuse(FileResult(source=result.source, rejected=rows, checked=result.checked), reason, detail)


def _unreadable(src: SourceFile, exc: OSError) -> FileResult:
    if isinstance(exc, LeftTheRoot):
        return _refused(src, Reason.SYMLINK_OUTSIDE_ROOT, str(exc), src.size)
    return _refused(src, Reason.UNREADABLE_FILE, f"cannot read the file: {exc.strerror or exc}", src.size)


def _cached(
    cache: FileCache | None, src: SourceFile, sha256: str, policy: Policy, compute: Callable[[], FileResult]
) -> tuple[FileResult, str | None]:
    if cache is None:
        return compute(), ""
    key = cache.key(src.rel_path, sha256, policy.sha256)
    result = cache.get(key)
    if result is not None and result.checked:
        result.source.cached = True
        return result, None
    return compute(), key


def _process_large(src: SourceFile, policy: Policy, cache: FileCache | None) -> tuple[FileResult, str | None]:
    try:
        with open_source(src) as fd:
            size = os.fstat(fd).st_size
            if size > policy.max_file_bytes:
                raise OSError(f"{src.rel_path} grew past the size limit after discovery")
            digest, read = hashlib.sha256(), 0
            for batch in iter(lambda: os.read(fd, READ_BYTES), b""):
                digest.update(batch)
                read += len(batch)
            sha256 = digest.hexdigest()
            result, key = _cached(
                cache, src, sha256, policy, lambda: process_stream(src, fd, size, sha256, policy)
            )
    except OSError as exc:
        return _unreadable(src, exc), None
    return _unless_changed(src, read, result), key


def process_stream(src: SourceFile, fd: int, size: int, sha256: str, policy: Policy) -> FileResult:
    """``process_bytes`` for a file read from ``fd`` in batches (``ingest/stream.py``); ``sha256`` is the
    file's hash from a first read: the bytes decoded must have it too, or the file changed in between."""
    report = SourceReport(source_file=src.rel_path, size=size, sha256=sha256)
    result = FileResult(source=report)
    try:
        stream = open_stream(fd)
    except BinaryContent as exc:
        return _refuse(result, Reason.BINARY_FILE, str(exc))
    except OSError:
        raise
    except Exception as exc:
        return _refuse(result, Reason.PROCESSING_ERROR, describe_failure("decode", exc))
    report.encoding, report.confidence = stream.encoding, stream.confidence
    _process_lines(src, result, iter_lines(stream.chunks, policy.max_paragraph_chars), policy)
    report.decode_repairs = tuple(stream.repairs)  # complete only once every batch is decoded
    if stream.digest.hexdigest() != sha256:
        return _changed_during_run(result, "its content changed between the two reads")
    return result


def _refuse(result: FileResult, reason: Reason, detail: str) -> FileResult:
    result.source.problem, result.source.problem_detail = reason.value, detail
    result.rejected.append(Rejected(result.source.source_file, None, reason.value, detail))
    return result


def process_bytes(src: SourceFile, data: bytes, sha256: str | None, policy: Policy) -> FileResult:
    """``sha256`` of ``data`` when the caller has it already (the cache key needs it first)."""
    report = SourceReport(
        source_file=src.rel_path, size=len(data), sha256=sha256 or hashlib.sha256(data).hexdigest()
    )
    result = FileResult(source=report)
    if not data:
        return _refuse(result, Reason.EMPTY_FILE, "the file is empty")
    try:
        decoded = decode_bytes(data)
    except BinaryContent as exc:
        return _refuse(result, Reason.BINARY_FILE, str(exc))
    except Exception as exc:
        return _refuse(result, Reason.PROCESSING_ERROR, describe_failure("decode", exc))
    report.encoding, report.confidence, report.decode_repairs = (
        decoded.encoding,
        decoded.confidence,
        decoded.repairs,
    )
    return _process_lines(src, result, split_lines(decoded.text), policy)


def _process_lines(src: SourceFile, result: FileResult, lines: Iterable[str], policy: Policy) -> FileResult:
    """``_rows_of_lines``; an unexpected exception there (paragraphs isolate their own) quarantines the
    file as ``processing_error`` with every paragraph read so far. I/O errors keep their own reasons."""
    try:
        return _rows_of_lines(src, result, lines, policy)
    except OSError:
        raise
    except Exception as exc:
        return _quarantine_all(result, Reason.PROCESSING_ERROR, describe_failure("parse", exc))


def _rows_of_lines(src: SourceFile, result: FileResult, lines: Iterable[str], policy: Policy) -> FileResult:
    """The header line, then one Record or Rejected per paragraph; lines may be a one-pass iterator."""
    report = result.source

    def counted() -> Iterator[str]:
        for line in lines:
            report.n_lines += 1
            yield line

    rest = counted()
    first, first_line = None, ""
    for i, line in enumerate(rest):
        if not is_blank(line):
            first, first_line = i, line
            break
    if first is None:
        return _refuse(result, Reason.EMPTY_FILE, f"the file holds only blank lines ({report.n_lines} lines)")
    header = parse_header(first_line, first + 1)
    if header is None:
        # Not a header: keep every paragraph, the first line's included, as a quarantine row.
        detail = f"line {first + 1} is not a header naming a venue and a year: {first_line.strip()[:80]!r}"
        report.problem, report.problem_detail = Reason.NO_HEADER.value, detail
        for para in paragraphs_from(chain([first_line], rest), first, policy.max_paragraph_chars):
            report.n_paragraphs += 1
            result.rejected.append(_reject(src, para, Reason.NO_HEADER, detail))
        return result

    report.header = header
    for para in paragraphs_from(rest, first + 1, policy.max_paragraph_chars):
        report.n_paragraphs += 1
        out = process_paragraph(src, header, para, policy)
        (result.records if isinstance(out, Record) else result.rejected).append(out)
    return result
