"""One source file → records and rejections. The per-file unit of work (a Prefect task maps it).

Every paragraph of a readable file leaves this function either as a Record or as a Rejected row;
a file that cannot be read at all leaves as one file-level Rejected row.
"""

from __future__ import annotations

import hashlib

from corpus_hygiene.cache import FileCache
from corpus_hygiene.checks import Policy
from corpus_hygiene.clean import clean_text
from corpus_hygiene.dedup.keys import dedup_key
from corpus_hygiene.ingest import (
    BinaryContent,
    decode_bytes,
    first_nonblank,
    iter_paragraphs,
    parse_header,
    read_bytes,
    split_lines,
)
from corpus_hygiene.language import detect_language
from corpus_hygiene.models import FileResult, Header, Paragraph, Record, Rejected, SourceFile, SourceReport
from corpus_hygiene.reasons import Reason


def _reject(src: SourceFile, para: Paragraph, reason: Reason, detail: str) -> Rejected:
    return Rejected(src.rel_path, para.line, reason.value, detail, para.text)


def process_paragraph(src: SourceFile, header: Header, para: Paragraph) -> Record | Rejected:
    """Clean one paragraph into a candidate record; the record checks of checks/ run later, on all."""
    # Language first, from the text as read: the PDF-artefact fixes need it to pick a word list.
    # Mojibake and markup barely move a detector on abstract-length text; the script decides CJK.
    lang = detect_language(para.text)
    cleaned = clean_text(para.text, lang.code)
    key = dedup_key(cleaned.text)
    if not key:
        return _reject(src, para, Reason.EMPTY_TEXT, "no letters or digits left after cleaning")
    return Record(
        source_file=src.rel_path,
        source_line=para.line,
        venue=header.venue,
        year=header.year,
        header_label=header.label,
        header_lang=header.label_lang,
        text=cleaned.text,
        text_raw=para.text,
        lang=lang.code,
        lang_confidence=lang.confidence,
        fixes=cleaned.fixes,
        dedup_key=key,
    )


def _refused(
    src: SourceFile, reason: Reason, detail: str, size: int, sha256: str | None = None
) -> FileResult:
    report = SourceReport(
        source_file=src.rel_path, size=size, sha256=sha256, problem=reason.value, problem_detail=detail
    )
    return FileResult(source=report, rejected=[Rejected(src.rel_path, None, reason.value, detail)])


def process_file(src: SourceFile, policy: Policy, cache: FileCache | None = None) -> FileResult:
    """Read one file and turn it into records; with a cache, an unchanged file is not processed again."""
    try:
        data = read_bytes(src, policy.max_file_bytes)
    except OSError as exc:
        return _refused(src, Reason.UNREADABLE_FILE, f"cannot read the file: {exc.strerror or exc}", src.size)
    if cache is None:
        return process_bytes(src, data)
    sha256 = hashlib.sha256(data).hexdigest()
    key = cache.key(src.rel_path, sha256, policy.sha256)
    result = cache.get(key)
    if result is not None:
        result.source.cached = True
        return result
    result = process_bytes(src, data, sha256)
    cache.put(key, result)
    return result


def process_bytes(src: SourceFile, data: bytes, sha256: str | None = None) -> FileResult:
    """``sha256`` of ``data`` when the caller has it already (the cache key needs it first)."""
    report = SourceReport(
        source_file=src.rel_path, size=len(data), sha256=sha256 or hashlib.sha256(data).hexdigest()
    )
    result = FileResult(source=report)

    def refuse(reason: Reason, detail: str) -> FileResult:
        report.problem, report.problem_detail = reason.value, detail
        result.rejected.append(Rejected(src.rel_path, None, reason.value, detail))
        return result

    if not data:
        return refuse(Reason.EMPTY_FILE, "the file is empty")
    try:
        decoded = decode_bytes(data)
    except BinaryContent as exc:
        return refuse(Reason.BINARY_FILE, str(exc))
    report.encoding, report.confidence, report.decode_repairs = (
        decoded.encoding,
        decoded.confidence,
        decoded.repairs,
    )

    lines = split_lines(decoded.text)
    report.n_lines = len(lines)
    first = first_nonblank(lines)
    if first is None:
        return refuse(Reason.EMPTY_FILE, f"the file holds only blank lines ({len(lines)} lines)")
    header = parse_header(lines[first], first + 1)
    if header is None:
        # Not a header: keep every paragraph, the first line's included, as a quarantine row.
        detail = f"line {first + 1} is not a header naming a venue and a year: {lines[first].strip()[:80]!r}"
        paragraphs = list(iter_paragraphs(lines, first))
        report.n_paragraphs = len(paragraphs)
        report.problem, report.problem_detail = Reason.NO_HEADER.value, detail
        result.rejected.extend(_reject(src, p, Reason.NO_HEADER, detail) for p in paragraphs)
        return result

    report.header = header
    for para in iter_paragraphs(lines, first + 1):
        report.n_paragraphs += 1
        out = process_paragraph(src, header, para)
        (result.records if isinstance(out, Record) else result.rejected).append(out)
    return result
