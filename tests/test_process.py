from corpus_hygiene.ingest.discover import discover
from corpus_hygiene.pipeline.process import process_file

ABSTRACT = (
    "We introduce a verifier that scores each retrieved passage for answer support before "
    "generation, trained only on synthetic negatives."
)


def _process(tmp_path, data: bytes, policy, name="f.txt"):
    (tmp_path / name).write_bytes(data)
    (src,) = discover(tmp_path, policy.max_file_bytes).files
    return process_file(src, policy)


def test_records_carry_header_fields_and_exact_provenance(tmp_path, policy):
    data = (
        f"\n  \nICLR 2026 Papers\r\n\r\n{ABSTRACT}\r\n\r\n\r\nline one of {ABSTRACT}\r\nline two\r\n".encode()
    )
    result = _process(tmp_path, data, policy)
    assert result.source.header.line == 3
    assert [(r.source_line, r.venue, r.year, r.header_lang) for r in result.records] == [
        (5, "ICLR", 2026, "en"),
        (8, "ICLR", 2026, "en"),
    ]
    assert result.records[1].text_raw == f"line one of {ABSTRACT}\nline two"
    assert result.records[1].text == f"line one of {ABSTRACT} line two"
    assert result.records[1].fixes == ("whitespace",)


def test_file_without_header_keeps_every_paragraph_in_quarantine(tmp_path, policy):
    data = f"{ABSTRACT}\nsecond line\n\n{ABSTRACT} again\n".encode()
    result = _process(tmp_path, data, policy)
    assert result.records == []
    assert [(r.source_line, r.reason, r.text_raw) for r in result.rejected] == [
        (1, "no_header", f"{ABSTRACT}\nsecond line"),
        (4, "no_header", f"{ABSTRACT} again"),
    ]
    assert "line 1 is not a header" in result.rejected[0].detail
    assert result.source.problem == "no_header"


def test_text_with_nothing_left_is_rejected_and_the_record_checks_run_per_file(tmp_path, policy):
    data = f"ICLR 2026 Papers\n\nTBA\n\n* * *\n\n{ABSTRACT}\n".encode()
    result = _process(tmp_path, data, policy)
    assert result.checked
    assert [r.source_line for r in result.records] == [7]
    assert [(r.source_line, r.reason, r.text_raw) for r in result.rejected] == [
        (5, "empty_text", "* * *"),  # nothing left after cleaning: rejected while processing
        (3, "not_placeholder", "TBA"),  # by the record checks of checks/, run on the file's records
    ]
    assert result.rejected[0].detail == "no letters or digits left after cleaning"


def test_a_batch_of_files_is_checked_together_and_cached_checked(tmp_path, policy):
    from corpus_hygiene.incremental.file_cache import FileCache
    from corpus_hygiene.pipeline.process import process_files

    (tmp_path / "in").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "in" / name).write_text(f"ICLR 2026 Papers\n\nTBA\n\n{name} {ABSTRACT}\n", "utf-8")
    files = discover(tmp_path / "in", policy.max_file_bytes).files
    cache = FileCache(tmp_path / "cache")
    first = process_files(files, policy, cache)
    again = process_files(files, policy, cache)
    for results in (first, again):
        assert [[(r.source_line, r.reason) for r in f.rejected] for f in results] == [
            [(3, "not_placeholder")],
            [(3, "not_placeholder")],
        ]
        assert [[r.source_line for r in f.records] for f in results] == [[5], [5]]
    assert [f.source.cached for f in again] == [True, True]


def test_empty_blank_and_binary_files_are_file_level_rows(tmp_path, policy):
    for name, data, reason in [
        ("empty.txt", b"", "empty_file"),
        ("blank.txt", b"\n \r\n\t\n", "empty_file"),
        ("bin.dat", b"\x00\x01\x02\xff" * 100, "binary_file"),
    ]:
        folder = tmp_path / name.split(".")[0]
        folder.mkdir()
        result = _process(folder, data, policy, name)
        assert [(r.source_file, r.source_line, r.reason) for r in result.rejected] == [(name, None, reason)]
        assert result.records == []


def test_header_only_file_contributes_nothing_and_is_not_an_error(tmp_path, policy):
    result = _process(tmp_path, b"ICLR 2026 Papers\n\n\n", policy)
    assert result.records == [] and result.rejected == []
    assert result.source.problem is None and result.source.n_paragraphs == 0


def test_records_carry_the_signature_and_memo_key_the_dedup_step_would_compute(tmp_path, policy):
    from corpus_hygiene.dedup.signatures import signature_of
    from corpus_hygiene.incremental.pair_memo import text_key

    result = _process(tmp_path, f"ICLR 2026 Papers\n\n{ABSTRACT}\n".encode(), policy)
    (rec,) = result.records
    assert len(rec.signature) == 4 * policy.dedup_config().num_perm
    assert rec.signature == signature_of(rec.text, policy.dedup_config())
    assert len(rec.text_key) == 16 and rec.text_key == text_key(rec.text)


def test_records_pickle_whole_as_the_flow_receives_them_from_dask_workers(tmp_path, policy):
    import pickle
    from dataclasses import fields

    data = f"ICLR 2026 Papers\n\nline one of {ABSTRACT}\nline two\n\n{ABSTRACT}\n".encode()
    records = _process(tmp_path, data, policy).records
    back = pickle.loads(pickle.dumps(records, protocol=5))
    assert back == records
    for rec, copy in zip(records, back, strict=True):
        assert [getattr(copy, f.name) for f in fields(copy)] == [getattr(rec, f.name) for f in fields(rec)]
        assert (copy.text_raw is copy.text) == (rec.text_raw is rec.text)  # one string, not two
    assert records[0].fixes and records[0].signature and records[0].text_key  # non-default values travel


CONTACT = ABSTRACT + " Write to data-desk@lab.example.org or call +44 20 7946 0958 for access."


def test_a_record_losing_words_to_cleaning_is_quarantined_or_kept_flagged_as_the_policy_says(
    tmp_path, policy, monkeypatch
):
    from dataclasses import replace

    from corpus_hygiene import clean

    # a converter that loses a macro's argument, as pylatexenc alone did with \texttt{…}
    monkeypatch.setattr(clean, "latex_to_unicode", lambda t: t.replace(r"\texttt{EXGRPO}", ""))
    data = f"ICLR 2026 Papers\n\nExplanatory GRPO (\\texttt{{EXGRPO}}) uses {ABSTRACT}\n".encode()
    (rejected,) = _process(tmp_path, data, policy).rejected
    assert (rejected.source_line, rejected.reason) == (3, "text_lost")
    assert rejected.detail == "cleaning removed 1 word that were not markup (EXGRPO); the policy allows 0"
    assert rejected.text_raw.startswith("Explanatory GRPO (\\texttt{EXGRPO})")
    (kept,) = _process(tmp_path, data, replace(policy, max_lost_words=1)).records
    assert kept.lost_words == ("EXGRPO",) and kept.fixes == ("latex", "dropped_text")


def test_contact_details_are_counted_and_kept_masked_or_quarantined(tmp_path, policy):
    from dataclasses import replace

    data = f"ICLR 2026 Papers\n\n{CONTACT}\n".encode()
    (kept,) = _process(tmp_path, data, policy).records
    assert (kept.n_emails, kept.n_phones) == (1, 1) and kept.text == CONTACT and kept.fixes == ()
    (masked,) = _process(tmp_path, data, replace(policy, contacts="mask")).records
    assert masked.text.endswith("Write to [email] or call [phone] for access.")
    assert masked.fixes == ("contacts_masked",) and (masked.n_emails, masked.n_phones) == (0, 0)
    assert masked.text_raw == CONTACT  # the file's text stays in text_raw: masking is of the dataset's text
    (rejected,) = _process(tmp_path, data, replace(policy, contacts="quarantine")).rejected
    assert rejected.reason == "contact_details"


def test_language_is_read_after_the_encoding_repair_and_in_ordinary_case(tmp_path, policy):
    zh = (
        "本文提出一种基于图结构的新方法，在三个公开数据集上的实验表明，"
        "该方法优于现有基线，且训练时间更短，内存占用更少。"
    )
    mojibake = zh.encode("utf-8").decode("latin-1")  # read as Swedish before the repair
    shout = ABSTRACT.upper()  # langdetect reads capitals as German
    data = f"ICLR 2026 Papers\n\n{mojibake}\n\n{shout}\n".encode()
    records = _process(tmp_path, data, policy).records
    assert [(r.lang, r.fixes) for r in records] == [("zh", ("mojibake",)), ("en", ())]


def test_the_per_file_stage_leaves_no_utf8_copy_on_the_texts_it_keeps(tmp_path, policy):
    """The record checks' frame holds the texts as Arrow-backed pandas strings: converted as they are,
    every non-ASCII text would keep a UTF-8 copy of itself for the rest of a one-process run."""
    import sys

    from corpus_hygiene.pipeline.process import process_files

    french = (
        "Nous présentons un vérificateur qui évalue chaque passage récupéré avant la génération, "
        "entraîné uniquement sur des exemples négatifs synthétiques."
    )
    (tmp_path / "f.txt").write_text(f"Articles TALN 2026\n\n{french}\n\n{ABSTRACT}\n", "utf-8")
    (result,) = process_files(discover(tmp_path, policy.max_file_bytes).files, policy, None)
    assert [r.text for r in result.records] == [french, ABSTRACT]
    for rec in result.records:
        assert sys.getsizeof(rec.text) == sys.getsizeof((rec.text + " ")[:-1]), rec.text[:40]


def test_a_file_of_many_paragraphs_is_checked_in_bounded_frames_with_the_same_result(
    tmp_path, policy, monkeypatch
):
    from corpus_hygiene.pipeline import record_checks

    body = "\n\n".join(
        f"Paper {i}: we study sparse attention for long documents and report results on four benchmarks."
        if i % 3
        else f"too short {i}"
        for i in range(25)
    )
    (tmp_path / "f.txt").write_text(f"ICLR 2026 Papers\n\n{body}\n", "utf-8")
    (src,) = discover(tmp_path, policy.max_file_bytes).files
    whole = process_file(src, policy)
    sizes = []
    checks = record_checks.apply_record_checks
    monkeypatch.setattr(record_checks, "CHECK_ROWS", 4)
    spy = lambda rows, p: sizes.append(len(rows)) or checks(rows, p)  # noqa: E731
    monkeypatch.setattr(record_checks, "apply_record_checks", spy)
    chunked = process_file(src, policy)
    assert max(sizes) == 4 and sum(sizes) == 25  # every paragraph checked, four at a time
    assert (chunked.records, chunked.rejected) == (whole.records, whole.rejected)
