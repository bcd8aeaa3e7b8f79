"""Large files, streamed: read in byte batches cut at line ends, decoded and split batch by batch.

A file above the policy's ``stream_above_mb`` is never held whole in memory. The encoding is chosen
once, by ``decode_bytes`` on the file's first MiB (cut at a line end), and applied to every batch.
Batches are cut after a newline byte sequence aligned to the code unit, which is a character boundary
in every encoding we read (0x0A is never a trail byte in UTF-8, GB18030, Big5, Shift_JIS, EUC-JP,
CP949 or the single-byte code pages), so each batch decodes on its own. ``iter_lines`` then joins the
batches' lines so that a CRLF or a line split across two batches comes out exactly as
``split_lines`` on the whole text would give it (property-tested).

What a whole-file read repairs with knowledge of the whole file (a truncated final character, stray
cp1252 bytes in UTF-8), a stream repairs batch by batch: an undecodable byte in a later batch is read
as cp1252 in UTF-8 files and replaced (U+FFFD) in others, and the batches so repaired are counted.
"""

from __future__ import annotations

import codecs
import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from corpus_hygiene.ingest.decode import _BOMS, decode_bytes
from corpus_hygiene.ingest.split import OVERSIZED_KEPT, LongLine, split_lines

SAMPLE_BYTES = 1 << 20
READ_BYTES = 8 << 20  # a large file is read this much at a time


def _cp1252_bytes(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return exc.object[exc.start : exc.end].decode("cp1252", errors="replace"), exc.end


codecs.register_error("corpus_hygiene_stream_cp1252", _cp1252_bytes)


def _newline(codec: str) -> bytes:
    """The newline character in ``codec``; its length is also the code unit batches align to."""
    name = codecs.lookup(codec).name
    if name.startswith(("utf-16", "utf-32")):
        return "\n".encode(name.replace("-", "_"))
    return b"\n"


def _character_end(buf: bytes, unit: int) -> int:
    """A cut near the end of ``buf`` at a code unit and, in byte encodings, before any UTF-8 character
    that may be incomplete (its lead byte and continuation bytes go to the next batch)."""
    cut = len(buf) - len(buf) % unit
    if unit == 1:
        while cut > len(buf) - 4 and 0x80 <= buf[cut - 1] < 0xC0:  # continuation bytes
            cut -= 1
        if buf[cut - 1] >= 0xC0:  # their lead byte
            cut -= 1
    return cut


def iter_batches(fd: int, newline: bytes, batch_bytes: int = READ_BYTES) -> Iterator[bytes]:
    """Byte batches of about ``batch_bytes``, each ending just after a (code-unit aligned) newline.

    A batch holding no newline grows until one comes, the file ends, or it reaches 4 × ``batch_bytes``:
    a line that long is cut (at a code unit, and before a UTF-8 continuation byte), so that memory stays
    bounded; such a line is an oversized paragraph, which ``iter_lines`` only counts.
    """
    unit = len(newline)
    carry = b""
    while chunk := os.read(fd, batch_bytes):
        buf = carry + chunk
        end = buf.rfind(newline)
        while end > 0 and end % unit:  # a newline pattern straddling two UTF-16/32 code units
            end = buf.rfind(newline, 0, end + unit - 1)
        if end >= 0:
            yield buf[: end + unit]
            carry = buf[end + unit :]
        elif len(buf) >= 4 * batch_bytes:
            cut = _character_end(buf, unit)
            yield buf[:cut]
            carry = buf[cut:]
        else:
            carry = buf
    if carry:
        yield carry


def iter_lines(chunks: Iterable[str], max_line: int | None = None) -> Iterator[str]:
    """Lines (LF, CRLF, CR) of the joined ``chunks``, exactly as ``split_lines("".join(chunks))``; with
    ``max_line``, a line longer than that comes as a ``LongLine``: its first ``OVERSIZED_KEPT``
    characters and its length, the rest counted, never held.

    >>> list(iter_lines(["a\\r", "\\nb\\r", "c", "\\n"]))
    ['a', 'b', 'c', '']
    >>> long, short = iter_lines(["ab", "cd", "ef\\ng"], max_line=3)
    >>> long, long.length, short
    ('abcdef', 6, 'g')
    """
    carry, long, counted = "", None, 0  # long: the head of a line too long to hold; counted: its length

    def finish(tail: str) -> LongLine:
        line = LongLine((long + tail)[:OVERSIZED_KEPT])
        line.length = counted + len(tail)
        return line

    for chunk in chunks:
        text = carry + chunk
        hold_cr = text.endswith("\r")  # may be the first half of a CRLF
        parts = split_lines(text[:-1] if hold_cr else text)
        carry = parts.pop() + ("\r" if hold_cr else "")
        if parts and long is not None:  # the long line ends in this chunk
            yield finish(parts.pop(0))
            long = None
        yield from parts
        if max_line is not None and (long is not None or len(carry) > max_line):  # too long to hold
            held = carry[:-1] if hold_cr else carry
            if long is None:
                long, counted = "", 0
            long = long if len(long) >= OVERSIZED_KEPT else (long + held)[:OVERSIZED_KEPT]
            counted += len(held)
            carry = "\r" if hold_cr else ""
    lines = split_lines(carry)
    if long is not None:
        yield finish(lines.pop(0))
    yield from lines


@dataclass
class Stream:
    """The chosen encoding and the decoded batches of one file (consumed once)."""

    encoding: str
    confidence: float
    repairs: list[str] = field(default_factory=list)
    chunks: Iterator[str] = field(default_factory=lambda: iter(()))
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)  # of the bytes read, as they are read


def open_stream(fd: int, batch_bytes: int | None = None) -> Stream:
    """Choose the encoding from the file's first MiB and return its decoded batches.

    Raises ``BinaryContent`` (from ``decode_bytes``) when the sample is not text.
    """
    head = os.pread(fd, SAMPLE_BYTES, 0)
    bom = next(((b, codec) for b, codec, _ in _BOMS if head.startswith(b)), None)
    if bom is not None:
        codec, skip = bom[1], len(bom[0])
    else:
        skip = 0
    # The sample cut at its last newline, so a character cut off by the 1 MiB limit is not a "repair".
    cut = head.rfind(b"\n") if len(head) == SAMPLE_BYTES else -1
    sample = decode_bytes(head[: cut + 1] if cut > 0 else head)
    if bom is None:
        codec = sample.encoding
    stream = Stream(encoding=sample.encoding, confidence=sample.confidence, repairs=list(sample.repairs))
    stream.digest.update(head[:skip])
    fallback = "corpus_hygiene_stream_cp1252" if codecs.lookup(codec).name == "utf-8" else "replace"
    os.lseek(fd, skip, os.SEEK_SET)

    def chunks() -> Iterator[str]:
        repaired = 0
        for batch in iter_batches(fd, _newline(codec), batch_bytes or READ_BYTES):
            stream.digest.update(batch)  # the bytes decoded are the bytes hashed
            try:
                yield batch.decode(codec)
            except UnicodeDecodeError:
                repaired += 1
                yield batch.decode(codec, errors=fallback)
        if repaired:
            stream.repairs.append(f"batches_with_undecodable_bytes:{repaired}")

    stream.chunks = chunks()
    return stream
