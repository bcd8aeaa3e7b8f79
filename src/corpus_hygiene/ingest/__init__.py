"""Ingestion: discover files, decode bytes, read the header, split paragraphs."""

from corpus_hygiene.ingest.decode import BinaryContent, decode_bytes
from corpus_hygiene.ingest.discover import Discovery, InputRootError, discover, read_bytes
from corpus_hygiene.ingest.header import parse_header
from corpus_hygiene.ingest.split import first_nonblank, iter_paragraphs, split_lines

__all__ = [
    "BinaryContent",
    "Discovery",
    "InputRootError",
    "decode_bytes",
    "discover",
    "first_nonblank",
    "iter_paragraphs",
    "parse_header",
    "read_bytes",
    "split_lines",
]
