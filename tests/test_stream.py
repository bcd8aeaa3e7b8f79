"""Large files are streamed in batches; the result must be what a whole read gives."""

import dataclasses
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_hygiene.ingest import stream
from corpus_hygiene.ingest.discover import discover
from corpus_hygiene.ingest.split import split_lines
from corpus_hygiene.ingest.stream import iter_batches, iter_lines
from corpus_hygiene.pipeline.process import process_file

ABSTRACTS = [
    "We introduce a verifier that scores each retrieved passage for answer support before generation.",
    "Nous proposons une méthode d’apprentissage qui réduit de moitié le coût d’annotation des corpus.",
    "我们提出一种新的检索增强生成方法，在三个基准上显著优于现有方法，并公开了代码与数据。",
    "Proponemos un modelo de difusión que genera moléculas válidas con un coste de cómputo mínimo.",
]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \r\n\u2028", max_size=60), st.lists(st.integers(0, 60), max_size=6))
def test_iter_lines_joins_batches_exactly_like_split_lines(text, cuts):
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)] or [text]
    assert list(iter_lines(chunks)) == split_lines(text)


@pytest.mark.parametrize("codec", ["utf_8", "utf_16_le", "utf_32_be"])
def test_batches_end_at_a_newline_and_rejoin_to_the_file(tmp_path, codec):
    data = "\n".join(random.Random(1).choice(ABSTRACTS) * 3 for _ in range(40)).encode(codec)
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    newline = "\n".encode(codec)
    fd = os.open(path, os.O_RDONLY)
    try:
        batches = list(iter_batches(fd, newline, batch_bytes=500))
    finally:
        os.close(fd)
    assert b"".join(batches) == data
    assert len(batches) > 10
    assert all(b.endswith(newline) and len(b) % len(newline) == 0 for b in batches[:-1])
    assert "".join(b.decode(codec) for b in batches) == data.decode(codec)  # every batch decodes alone


def _corpus(codec: str, eol: str, stray: bytes = b"") -> bytes:
    rng = random.Random(7)
    paras = [f"{rng.choice(ABSTRACTS)} Run {i}: {rng.random():.6f}." for i in range(300)]
    head = "ICLR 2026 Papers" if codec != "gb18030" else "ICLR 2026 论文列表"
    text = (eol * 2).join([head, *paras]) + eol
    if codec == "gb18030":
        text = text.replace("é", "e").replace("’", "'").replace("ó", "o")
    data = text.encode(codec)
    return data[:4000] + stray + data[4000:] if stray else data


@pytest.mark.parametrize(
    "data",
    [
        _corpus("utf_8", "\n"),
        _corpus("utf_8_sig", "\r\n"),
        _corpus("utf_16", "\r\n"),
        _corpus("gb18030", "\n"),
        _corpus("utf_8", "\r"),
        _corpus("utf_8", "\n", stray=b"caf\xe9 "),
    ],
    ids=["utf8", "utf8-bom-crlf", "utf16-bom-crlf", "gb18030", "utf8-cr-only", "utf8-stray-cp1252"],
)
def test_streamed_file_gives_the_records_of_a_whole_read(tmp_path, policy, monkeypatch, data):
    (tmp_path / "big.txt").write_bytes(data)
    (src,) = discover(tmp_path, policy.max_file_bytes).files
    whole = process_file(src, policy)
    monkeypatch.setattr(stream, "READ_BYTES", 1000)  # many batches, cuts inside paragraphs
    streamed = process_file(src, dataclasses.replace(policy, stream_above_bytes=0))
    assert len(whole.records) == 300
    assert streamed.records == whole.records
    assert streamed.rejected == whole.rejected
    for name in ("size", "sha256", "encoding", "n_lines", "n_paragraphs", "header", "problem"):
        assert getattr(streamed.source, name) == getattr(whole.source, name), name


def test_streamed_binary_and_blank_files_are_refused_like_whole_ones(tmp_path, policy):
    (tmp_path / "a.bin").write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 64)
    (tmp_path / "b.txt").write_bytes(b"\n \n\r\n" * 100)
    streaming = dataclasses.replace(policy, stream_above_bytes=0)
    for src in discover(tmp_path, policy.max_file_bytes).files:
        whole, streamed = process_file(src, policy), process_file(src, streaming)
        assert streamed.rejected == whole.rejected
        assert streamed.source.problem in {"binary_file", "empty_file"}


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab \r\n\u2028", max_size=80),
    st.lists(st.integers(0, 80), max_size=6),
    st.integers(1, 12),
)
def test_iter_lines_with_a_limit_counts_long_lines_and_keeps_their_start(text, cuts, limit):
    from corpus_hygiene.ingest.split import OVERSIZED_KEPT

    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)] or [text]
    got, want = list(iter_lines(chunks, max_line=limit)), split_lines(text)
    assert [getattr(line, "length", len(line)) for line in got] == [len(line) for line in want]
    for line, full in zip(got, want, strict=True):
        assert line == full or (hasattr(line, "length") and line == full[:OVERSIZED_KEPT])


def test_a_line_longer_than_four_batches_is_cut_at_a_character_and_rejoins_to_the_file(tmp_path):
    data = ("ICLR 2026 Papers\n\n" + "é论文" * 3000 + "\n").encode("utf-8")  # one 15 KB line
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        batches = list(iter_batches(fd, b"\n", batch_bytes=1000))
    finally:
        os.close(fd)
    assert b"".join(batches) == data and max(map(len, batches)) < 5000
    assert "".join(b.decode("utf-8") for b in batches) == data.decode("utf-8")  # no character cut
