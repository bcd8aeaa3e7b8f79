"""The quality contract: every named check passes and fails, routing, gates, the policy file."""

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks import PolicyError, load_policy
from checks.gates import evaluate_gates, schema_failures
from checks.routing import candidate_frame, route
from checks.schemas import TABLES, to_frame

from .conftest import SHARED, signal_columns

GOOD = (
    "We study how annotation noise propagates through a pipeline of detectors and taggers, and show that "
    "a small audit set removes most of the damage."
)


def rows_to_frame(rows: list[dict], name: str):
    return to_frame(pa.Table.from_pylist(rows, schema=TABLES[name]))


def row(**over):
    base = {"text": GOOD, "lang": "en", "year": 2026, "venue": "ICLR", "header_label": "Papers"}
    base.update(over)
    return {"n_chars": len(base["text"]), **signal_columns(base["text"], base["lang"]), **base}


CASES = [
    ("not_placeholder", row(text="TBA"), "the text 'TBA' is a placeholder, not an abstract"),
    ("not_placeholder", row(text="Abstract will be available soon — please check back."), None),
    ("not_placeholder", row(text="Résumé à venir."), None),
    ("not_placeholder", row(text="暂无摘要"), None),
    (
        "not_placeholder",
        row(text="Coming soon: the abstract of this talk will be posted after the meeting."),
        None,
    ),
    (
        "not_placeholder",
        row(text="摘要暂无，请稍后查看本文的完整信息以及作者提供的补充材料和实验数据。"),
        None,
    ),
    (
        "text_length",
        row(text="Too short to be an abstract."),
        "28 characters after cleaning; the policy allows 50 to 20,000",
    ),
    ("text_length", row(text="word " * 5000), None),
    (
        "not_repetitive",
        row(text="test " * 30),
        "under 25% of its words are distinct: repeated filler, not an abstract",
    ),
    (
        "no_latex_residue",
        row(text=GOOD + r" We use \textbf{bold} here."),
        "LaTeX left after cleaning: '\\\\textbf'",
    ),
    ("no_latex_residue", row(text=GOOD + " with $x^2$ inside"), None),
    ("no_mojibake_residue", row(text=GOOD + " CBTâ€™s"), None),
    ("no_mojibake_residue", row(text=GOOD + " lost \ufffd char"), None),
    ("no_mojibake_residue", row(text=GOOD + " on the Javaâ„¢ runtime"), None),
    ("no_mojibake_residue", row(text=GOOD + " a box â”€ drawn"), None),
    ("no_invisible_chars", row(text=GOOD + "\u200b"), "invisible character U+200B left in the text"),
    (
        "no_invisible_chars",
        row(text=GOOD + " zero\u200cwidth"),
        "invisible character U+200C left in the text",
    ),
    ("lang_iso639_1", row(lang="zh-cn"), "language code 'zh-cn' is not ISO 639-1 or 'und'"),
    ("year_plausible", row(year=1850), "year 1850 from the file header is outside 1950–2100"),
    ("year_plausible", row(year=None), "the file header names no year"),
    ("venue_present", row(venue=None), "the file header names no venue (label 'Papers')"),
    (
        "text_lost",
        row(text=GOOD.replace("detectors", ""), lost_words=("detectors",)),
        "cleaning removed 1 word that were not markup (detectors); the policy allows 0",
    ),
    (
        "word_count",
        row(text="The benchmark measures retrieval quality of multilingual encoders."),
        "8 words; the policy asks for at least 10",
    ),
    ("mean_word_length", row(text=" ".join("this text was written with its letters spaced out")), None),
    (
        "alpha_share",
        row(text="Scores of the runs: " + " ".join(f"{1900 + 7 * i}.{i * 37 % 1000:04d}" for i in range(12))),
        None,
    ),
    (
        "stopword_share",
        row(text="Keywords: graph neural networks; link prediction; heterogeneous graphs; graph learning"),
        None,
    ),
    (
        "repeated_ngrams",
        row(text="We propose a new method for parsing. " * 3),
        "100% of its words are repeats of one phrase; the policy allows 60%",
    ),
    (
        "url_count",
        row(text=GOOD + " " + " ".join(f"https://ex.org/{i}" for i in range(6))),
        "6 links; the policy allows 5",
    ),
]


@pytest.mark.parametrize(("check", "bad", "detail"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_check_fails_with_its_name_and_a_sentence(check, bad, detail, policy):
    failures = route(candidate_frame([row(), bad]), policy)
    assert [(f.index, f.reason) for f in failures] == [(1, check)]
    if detail:
        assert failures[0].detail.split(" (also failed")[0] == detail


@given(st.text(alphabet="a .é中कی\u200b\u200c\u200d\u00ad\x01", max_size=8))
def test_invisible_check_finds_a_joiner_exactly_where_the_cleaner_removes_one(text):
    import re

    from checks.domain import INVISIBLE
    from corpus_hygiene.clean.normalise import _STRAY_JOINERS

    plain = re.sub("[\u200b\u00ad\x01]", "", text)  # the one-class characters out: joiners alone
    assert bool(re.search(INVISIBLE, plain)) == bool(_STRAY_JOINERS.search(plain))
    assert bool(re.search(INVISIBLE, text)) == bool(
        _STRAY_JOINERS.search(text) or re.search("[\u00ad\x01\u200b]", text)
    )


@pytest.mark.parametrize(
    ("genuine", "lang"),
    [
        (GOOD, "en"),
        (
            "本文提出一种基于图结构的新方法，在三个公开数据集上的实验表明，该方法的准确率优于现有基线，且训练时间更短。",
            "zh",
        ),
        (
            "We show P ≠ NP fails for this toy model; the cost is 100% lower and costs $5 per hour "
            "to annotate.",
            "en",
        ),
        (
            "Der Code ist online verfügbar und die Ergebnisse sind reproduzierbar, sagen die Autoren "
            "der Studie.",
            "de",
        ),
        (
            "A 180-character abstract is real: we present a tiny benchmark of 40 items and find that every "
            "model we tried fails on half of them, for reasons we analyse.",
            "en",
        ),
        # a one-word placeholder of the policy ("todo", "none", "null", "摘要") starts a sentence
        ("Todo individuo tiene derecho a la vida, a la libertad y a la seguridad de su persona.", "es"),
        ("Todo o indivíduo tem direito à vida, à liberdade e à segurança pessoal, diz o artigo.", "pt"),
        ("None of the existing detectors handles occluded objects well, so we propose a new one.", "en"),
        ("Null hypothesis tests are misused in the field; we survey two hundred papers and explain.", "en"),
        (
            "摘要：本文提出一种基于图结构的新方法，在三个公开数据集上的实验表明，该方法的准确率优于现有基线，且训练时间更短。",
            "zh",
        ),
        # Welsh writes "â’r" and "â’i": a UTF-8 misreading's pair, with no third byte's character after it
        ("Genir pawb yn rhydd ac yn gydradd â’i gilydd mewn urddas a hawliau, a dylai pawb ymddwyn.", "cy"),
        ("Mae’r Cenhedloedd Unedig wedi ymrwymo, mewn cydweithrediad â’r gwledydd, i sicrhau parch.", "cy"),
        # the zero-width non-joiner is Persian spelling (می‌خواهم), the joiner part of Indic conjuncts
        (
            "از آنجا که شناسائی حیثیت ذاتی کلیه اعضای خانواده بشری می‌خواهد که حقوق یکسان"
            " و انتقال ناپذیر باشد",
            "fa",
        ),
        (
            "প্রত্যেকের‌ই সে সমাজের প্রতি পালনীয় কর্তব্য রয়েছে, যে সমাজে‌ই কেবল তাঁর আপন ব্যক্তিত্বের অবাধ ও পূর্ণ বিকাশ সম্ভব।",
            "bn",
        ),
        # short words: a syllable a word (Vietnamese), short vowels unwritten (Persian)
        ("Chúng tôi đề xuất một cách mới để xếp loại tóm tắt và thử nó trên ba bộ dữ liệu mở.", "vi"),
        ("ما یک روش نو برای رده بندی چکیده ها پیشنهاد می کنیم و آن را روی سه مجموعه داده می سنجیم.", "fa"),
        ("งานวิจัยนี้เสนอวิธีการใหม่ในการจำแนกบทคัดย่อทางวิทยาศาสตร์ ทดลองกับข้อมูลสามชุด และพบว่าแม่นยำกว่าเดิม", "th"),
    ],
)
def test_genuine_text_passes_every_check(genuine, lang, policy):
    assert route(candidate_frame([row(text=genuine, lang=lang)]), policy) == []


@pytest.mark.skipif(not (SHARED / "lid" / "udhr").is_dir(), reason="../shared/lid/udhr is not present")
@pytest.mark.parametrize("lang", ["fa", "th", "ur", "vi"])
def test_no_udhr_line_of_these_languages_fails_a_word_check(lang, policy):
    """Thai's short lines repeat letters, not phrases; Persian, Urdu and Vietnamese lines go below 3
    letters a word."""
    from corpus_hygiene.clean import clean_text

    path = SHARED / "lid" / "udhr" / f"{lang}.txt"
    texts = [clean_text(line).text for line in path.read_text("utf-8").splitlines() if len(line) > 50]
    failures = route(candidate_frame([row(text=t, lang=lang) for t in texts]), policy)
    assert [f.detail for f in failures if f.reason in ("mean_word_length", "repeated_ngrams")] == []


def test_letter_spacing_and_repeated_phrases_still_fail_in_those_languages(policy):
    spaced = row(
        text="C h ú n g t ô i đ ề x u ấ t m ộ t c á c h m ớ i đ ể x ế p l o ạ i t ó m t ắ t", lang="vi"
    )
    filler = row(text="ซื้อเลยวันนี้ ซื้อเลยวันนี้ ซื้อเลยวันนี้ ซื้อเลยวันนี้ ซื้อเลยวันนี้ ซื้อเลยวันนี้", lang="th")
    failures = route(candidate_frame([spaced, filler]), policy)
    assert [(f.index, f.reason) for f in failures] == [(0, "mean_word_length"), (1, "repeated_ngrams")]
    assert failures[0].detail.startswith("words of 1.0 characters on average; the policy allows 2 to 12")


def test_several_failures_give_one_row_naming_the_others(policy):
    (failure,) = route(candidate_frame([row(text="TBA", venue=None)]), policy)
    assert failure.reason == "not_placeholder"
    assert failure.detail.endswith("(also failed: text_length, word_count, stopword_share, venue_present)")


def _frames(n_records=2, quarantined=0):
    records = [
        {
            "record_id": f"{i:032x}",
            "source_file": "a.txt",
            "source_line": 3 + i,
            "venue": "ICLR",
            "year": 2026,
            "header_label": "Papers",
            "header_lang": "en",
            "text": GOOD,
            "text_raw": GOOD,
            "lang": "en",
            "lang_confidence": 1.0,
            "n_chars": len(GOOD),
            **signal_columns(GOOD),
            "fixes": [],
            "dup_count": 0,
            "also_in": [],
        }
        for i in range(n_records)
    ]
    quarantine = [
        {
            "source_file": "b.txt",
            "source_line": i + 1,
            "reason": "not_placeholder",
            "detail": "TBA",
            "text_raw": "TBA",
        }
        for i in range(quarantined)
    ]
    return {
        "records": rows_to_frame(records, "records"),
        "duplicates": rows_to_frame([], "duplicates"),
        "quarantine": rows_to_frame(quarantine, "quarantine"),
        "pairs": rows_to_frame([], "pairs"),
    }


def _counts(kept, dups, quar):
    return {"ingested": kept + dups + quar, "kept": kept, "duplicates": dups, "quarantined": quar, "files": 1}


def test_gates_pass_on_a_healthy_run(policy):
    assert all(g.passed for g in evaluate_gates(_counts(2, 0, 0), _frames(), policy))


def test_gates_fail_with_their_reason(policy):
    gates = {g.name: g for g in evaluate_gates(_counts(2, 0, 8), _frames(2, 8), policy)}
    assert not gates["quarantine_share"].passed
    assert gates["quarantine_share"].detail == "80.0% of ingested records quarantined; the policy allows 50%"
    empty = {g.name: g for g in evaluate_gates(_counts(0, 0, 0), _frames(0), policy)}
    assert not empty["not_empty"].passed and empty["not_empty"].detail.startswith("0 records kept")


def test_schema_gate_catches_a_contract_violation(policy):
    frames = _frames()
    frames["records"].loc[1, "record_id"] = frames["records"].loc[0, "record_id"]
    frames["records"].loc[0, "lang"] = "english"
    failures = schema_failures(frames)
    assert any("records.record_id" in f and "field_uniqueness" in f for f in failures), failures
    assert any("records.lang: isin" in f for f in failures), failures
    gates = {g.name: g for g in evaluate_gates(_counts(2, 0, 0), frames, policy)}
    assert not gates["schema"].passed and not gates["record_ids_unique"].passed


def test_gates_over_slices_see_repeats_across_slices_with_whole_table_row_numbers(policy):
    whole = _frames(5)["records"]
    rows = whole.astype(object).where(whole.notna(), None).to_dict("records")
    assert all(g.passed for g in evaluate_gates(_counts(5, 0, 0), _sliced(rows, 2), policy))
    rows[3] = {**rows[3], "record_id": rows[0]["record_id"]}  # in the second slice, repeats the first
    rows[4] = {**rows[4], "source_line": rows[1]["source_line"], "lang": "english"}  # third slice
    gates = {g.name: g for g in evaluate_gates(_counts(5, 0, 0), _sliced(rows, 2), policy)}
    assert not gates["record_ids_unique"].passed and gates["record_ids_unique"].detail.startswith("1 ")
    failures = schema_failures(_sliced(rows, 2))
    assert "records.*: record_id unique failed at row 3 (repeats an earlier slice)" in failures
    assert "records.*: provenance_unique failed at row 4 (repeats an earlier slice)" in failures
    assert any(f.startswith("records.lang: isin") and "at row 4" in f for f in failures), failures
    # whole, the same table gives the same verdicts
    whole_failures = schema_failures({**_sliced([], 2), "records": rows_to_frame(rows, "records")})
    assert any("field_uniqueness" in f for f in whole_failures), whole_failures


def _records(n: int, files: tuple[str, ...]) -> list[dict]:
    whole = _frames(n)["records"]
    rows = whole.astype(object).where(whole.notna(), None).to_dict("records")
    return [{**r, "source_file": files[i % len(files)]} for i, r in enumerate(rows)]


def _arrow(records: list[dict], size: int) -> dict:
    from corpus_hygiene.publish.dataset import arrow_slices

    return {
        "records": arrow_slices(records, "records", size),
        "duplicates": arrow_slices([], "duplicates", size),
        "quarantine": arrow_slices([], "quarantine", size),
        "pairs": arrow_slices([], "pairs", size),
    }


def _verdict(records, checked, size=3):
    from checks.gates import _validate

    return _validate(_arrow(records, size), frozenset(checked))


def test_rows_of_files_checked_before_skip_the_row_checks_but_not_the_ones_across_rows(policy):
    rows = _records(7, ("old.txt", "new.txt"))  # old.txt: rows 0, 2, 4, 6
    rows[2] = {**rows[2], "lang": "english"}  # in a file a published run checked: not validated again
    rows[5] = {**rows[5], "lang": "english"}  # in a new file: found, at its row in the whole table
    failures, repeated = _verdict(rows, {"old.txt"})
    assert repeated == 0
    assert len(failures) == 1 and failures[0].startswith("records.lang: isin") and "at row 5" in failures[0]
    # without the list of checked files both are found
    failures, _ = _verdict(rows, set())
    assert ["at row 2" in f for f in failures] == [True, False] and "at row 5" in failures[1]

    rows = _records(7, ("old.txt", "new.txt"))
    rows[4] = {**rows[4], "dup_count": 2}  # a checked row's duplicates change from run to run
    rows[3] = {**rows[3], "record_id": rows[2]["record_id"]}  # new repeats checked, same slice
    rows[6] = {**rows[6], "source_line": rows[1]["source_line"], "source_file": rows[1]["source_file"]}
    failures, repeated = _verdict(rows, {"old.txt"})
    assert repeated == 1
    assert "records.*: dup_count_matches_also_in failed at row 4 (not len(also_in))" in failures
    assert "records.*: record_id unique failed at row 3 (repeats an earlier row)" in failures
    assert "records.*: provenance_unique failed at row 6 (repeats an earlier row)" in failures
    gates = {
        g.name: g for g in evaluate_gates(_counts(7, 0, 0), _arrow(rows, 3), policy, frozenset({"old.txt"}))
    }
    assert not gates["schema"].passed and not gates["record_ids_unique"].passed


def test_gates_over_arrow_slices_find_what_they_find_over_pandas_frames(policy):
    rows = _records(7, ("a.txt", "b.txt"))
    rows[1] = {**rows[1], "year": 99}
    rows[4] = {**rows[4], "record_id": rows[0]["record_id"]}
    assert _verdict(rows, set()) == (schema_failures(_sliced(rows, 3)), 1)


def _sliced(records: list[dict], size: int) -> dict:
    from checks.schemas import to_frame
    from corpus_hygiene.publish.dataset import arrow_slices

    return {name: map(to_frame, arrow_slices(rows, name, size)) for name, rows in
            (("records", records), ("duplicates", []), ("quarantine", []), ("pairs", []))}  # fmt: skip


POLICY_MISTAKES = [
    (
        "max_file_mb = 1024",
        "max_fil_mb = 1024",
        "[ingest] max_fil_mb: unknown key; did you mean max_file_mb?",
    ),
    (
        "min_chars = 50",
        'min_chars = "fifty"',
        "[record] min_chars: Input should be a valid integer (got 'fifty')",
    ),
    ("min_chars = 50", "min_chars = 50000", "[record]: min_chars must be below max_chars"),
    (
        'action = "keep"',
        'action = "delete"',
        "[contacts] action: Input should be 'keep', 'mask' or 'quarantine'",
    ),
    (
        "max_duplicate_share = 0.6",
        "max_duplicate_share = 1.6",
        "[gates] max_duplicate_share: Input should be less",
    ),
    ("[gates]", "[gatez]", "[gatez]: unknown table; did you mean gates?"),
    ("threshold = 0.70", "treshold = 0.70", "[dedup] treshold: unknown key; did you mean threshold?"),
    ("max_urls = 5", "", "[quality] max_urls: missing"),
    # values that cannot work, refused before any work (they failed inside a task, or ran a whole corpus)
    ("max_file_mb = 1024", "max_file_mb = inf", "[ingest] max_file_mb: Input should be a finite number"),
    ("max_file_mb = 1024", "max_file_mb = 1e300", "[ingest] max_file_mb: Input should be less than or equal"),
    ("threshold = 0.70", "threshold = nan", "[dedup] threshold: Input should be a finite number"),
    ("min_candidate_jaccard = 0.4", "min_candidate_jaccard = nan", "[dedup] min_candidate_jaccard: Input"),
    ("num_perm = 128", "num_perm = 0", "[dedup] num_perm: Input should be greater than or equal to 16"),
    ("lsh_skip_common = 100", "lsh_skip_common = -1", "[dedup] lsh_skip_common: Input should be greater"),
    ("verify_word_ngram = 2", "verify_word_ngram = 0", "[dedup] verify_word_ngram: Input should be greater"),
    ("year_min = 1950", "year_min = 2200", "[checks]: year_min must not be above year_max"),
    ("bands = 32", "bands = 31", "[dedup]: bands × rows (31×4) must equal num_perm (128)"),
]


@pytest.mark.parametrize(
    ("good", "bad", "message"), POLICY_MISTAKES, ids=[m[1] or m[0] for m in POLICY_MISTAKES]
)
def test_policy_mistakes_name_the_file_line_and_key(tmp_path, good, bad, message):
    from checks import DEFAULT_POLICY_PATH

    text = DEFAULT_POLICY_PATH.read_text("utf-8")
    assert good in text
    path = tmp_path / "policy.toml"
    path.write_text(text.replace(good, bad, 1))
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    where, _, what = str(caught.value).partition(": ")
    assert what.startswith(message), str(caught.value)
    file, line = where.rsplit(":", 1)
    assert file == str(path)
    if bad:  # the line holds the mistake, or opens its table for a problem across the table's keys
        at = path.read_text().splitlines()[int(line) - 1]
        assert bad.split(" =")[0] in at or (at.startswith("[") and message.startswith(at))


def test_a_fifo_nobody_writes_or_an_endless_device_is_refused_without_hanging(tmp_path):
    import os

    fifo = tmp_path / "policy.fifo"
    os.mkfifo(fifo)  # a blocking open would wait for a writer for ever
    with pytest.raises(PolicyError, match="policy.fifo is empty"):
        load_policy(fifo)
    with pytest.raises(PolicyError, match="/dev/zero is larger than 1,048,576 bytes"):
        load_policy("/dev/zero")


def test_policy_errors_for_an_unreadable_or_broken_file(tmp_path):
    with pytest.raises(PolicyError, match="cannot read policy file .*missing.toml"):
        load_policy(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[record\nmin_chars = 10\n")
    with pytest.raises(PolicyError, match="broken.toml is not valid TOML"):
        load_policy(broken)


def test_policy_hash_changes_with_its_content(tmp_path):
    good = load_policy()
    copy = tmp_path / "policy.toml"
    copy.write_text(open(good.path, encoding="utf-8").read().replace("min_chars = 50", "min_chars = 60"))
    assert load_policy(copy).sha256 != good.sha256 and load_policy(copy).min_chars == 60


def test_checks_are_registered_with_pandera_by_name(policy):
    import pandera.pandas as pa

    from checks.schemas import record_checks_schema

    schema = record_checks_schema(policy.check_params())
    assert [c.name for c in schema.checks][:3] == ["text_lost", "not_placeholder", "text_length"]
    assert hasattr(pa.Check, "no_latex_residue")


def test_a_repeat_pandera_saw_is_reported_once_and_one_it_did_not_see_by_the_gates(policy):
    """With rows of checked files skipped, a record_id repeated between two rows pandera validated is
    its failure (field_uniqueness) only; repeats involving a skipped row are the gates' own."""
    rows = _records(6, ("old.txt", "new.txt"))  # one slice; old.txt: rows 0, 2, 4
    rows[3] = {**rows[3], "record_id": rows[1]["record_id"]}  # two new rows: pandera's
    rows[5] = {**rows[5], "record_id": rows[2]["record_id"]}  # a new row repeats a checked one
    rows[4] = {**rows[4], "record_id": rows[0]["record_id"]}  # a checked row repeats a checked one
    failures, repeated = _verdict(rows, {"old.txt"}, size=6)
    assert repeated == 3
    ours = [f for f in failures if f.startswith("records.*: record_id unique")]
    assert ours == [
        "records.*: record_id unique failed at row 4 (repeats an earlier row)",
        "records.*: record_id unique failed at row 5 (repeats an earlier row)",
    ]
    assert [f for f in failures if "field_uniqueness" in f and "at row 3" in f], failures
    assert not [f for f in failures if "at row 3" in f and f.startswith("records.*")]


def test_a_fresh_process_validates_without_importing_dask_frames_and_still_catches_violations():
    # pandera is told dask is absent (checks/schemas.py): its first validation imported dask.dataframe
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from checks.gates import schema_failures\n"
        "import pyarrow as pa\n"
        "from checks.schemas import TABLES, to_frame\n"
        "frames = {n: to_frame(s.empty_table()) for n, s in TABLES.items()}\n"
        "frames['quarantine'] = to_frame(pa.Table.from_pylist([{'source_file': 'a.txt', 'source_line': 0,"
        " 'reason': 'Bad', 'detail': 'x', 'text_raw': None}], schema=TABLES['quarantine']))\n"
        "print(sorted(f.split(':')[0] for f in schema_failures(frames)))\n"
        "print('dask.dataframe' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [
        "['quarantine.reason', 'quarantine.source_line']",
        "False",
    ]


def test_contact_details_are_kept_by_default_and_quarantined_when_the_policy_says_so(policy):
    from dataclasses import replace

    text = GOOD + " Write to ada@lab.example.org or call +44 20 7946 0958."
    assert route(candidate_frame([row(text=text)]), policy) == []
    (failure,) = route(candidate_frame([row(), row(text=text)]), replace(policy, contacts="quarantine"))
    assert (failure.index, failure.reason) == (1, "contact_details")
    assert failure.detail == (
        "contact details in the text (1 e-mail addresses, 1 phone numbers); the policy quarantines them"
    )
    assert "ada@" not in failure.detail


def _found_by_sets(slices) -> tuple[list[int], int]:
    """The rows whose value an earlier slice holds, and the rows less the distinct values: by sets."""
    earlier, rows, row = set(), [], 0
    for values in slices:
        rows += [row + i for i, v in enumerate(values) if v in earlier]
        earlier |= set(values)
        row += len(values)
    return rows, row - len(earlier)


VALUES = st.lists(st.lists(st.sampled_from(["a", "b", "é", "", None]), max_size=8), max_size=5)


@given(VALUES, st.integers(1, 4))
def test_repeats_finds_exactly_the_rows_of_values_of_earlier_slices(slices, parts):
    """Every row of a value an earlier slice held, repeats and nulls included; nothing else; and the
    rows that repeat any earlier row. Whatever the number of parts the keys are spilled in."""
    from checks.gates import _Repeats
    from corpus_hygiene.store.rows import STRING_KEY, string_keys

    repeats, row = _Repeats(STRING_KEY, parts=parts), 0
    for values in slices:
        repeats.add(string_keys(values), row)
        row += len(values)
    rows, repeated = repeats.found()
    assert (rows.tolist(), repeated) == _found_by_sets(slices)


PROVENANCE = st.tuples(st.sampled_from(["a.txt", "b/é.txt", ""]), st.sampled_from([0, 1, 2**31 - 1, None]))


@given(st.lists(st.lists(PROVENANCE, max_size=8), max_size=5))
def test_provenances_repeat_as_file_and_line_pairs(slices):
    """A provenance is its file and line, as numbers: the same pair is found, a line of another file is
    not; a missing line is a value of its own."""
    import pandas as pd

    from checks.gates import _AcrossRows

    across, row = _AcrossRows(None), 0
    for rows in slices:
        ids = [f"{row + i:032x}" for i in range(len(rows))]
        keys = pd.DataFrame(
            {"record_id": ids, "source_file": [f for f, _ in rows], "source_line": [n for _, n in rows]}
        )
        assert across.add(keys, None, row) == []
        row += len(rows)
    lines, repeated = across.found()
    expected = _found_by_sets([[(f, -1 if n is None else n) for f, n in rows] for rows in slices])[0]
    why = "repeats an earlier slice"
    assert lines == [f"records.*: provenance_unique failed at row {i} ({why})" for i in expected[:50]]
    assert repeated == 0


def test_real_prose_of_every_language_passes_the_record_checks(policy):
    """UDHR paragraphs of abstract length (over 200 characters; 70 in Chinese, Japanese, Korean), in all
    55 languages langdetect knows, are kept: no limit tuned on Latin script rejects Indic, Thai or
    Dravidian prose."""
    from pathlib import Path

    from corpus_hygiene.models import FileResult, Header, Paragraph, Record, SourceFile, SourceReport
    from corpus_hygiene.pipeline.process import process_paragraph
    from corpus_hygiene.pipeline.record_checks import check_results

    from .conftest import SHARED

    udhr = SHARED / "lid" / "udhr"
    if not udhr.is_dir():
        pytest.skip("../shared/lid/udhr is not present")
    src = SourceFile("u.txt", Path("u.txt"), 0)
    header = Header(1, "ICLR 2026", "ICLR", 2026, "ICLR 2026", "en")
    rejected = []
    for path in sorted(udhr.glob("*.txt")):
        result = FileResult(source=SourceReport("u.txt", 0))
        lines = [line.strip() for line in path.read_text("utf-8").splitlines()]
        shortest = 70 if path.stem in ("zh-cn", "zh-tw", "ja", "ko") else 200
        paragraphs = [line for line in lines if len(line) > shortest]
        for i, text in enumerate(paragraphs[::2]):
            out = process_paragraph(src, header, Paragraph(i + 1, text), policy)
            (result.records if isinstance(out, Record) else result.rejected).append(out)
        check_results([result], policy)
        rejected += [(path.stem, r.reason, r.detail) for r in result.rejected]
        assert {r.lang for r in result.records} == {path.stem.split("-")[0]}, path.stem
    assert rejected == [], "\n".join(map(str, rejected))


NUMERIC_KEYS = [
    ("ingest", "max_file_mb"),
    ("record", "min_chars"),
    ("record", "max_chars"),
    ("quality", "min_words"),
    ("quality", "max_mean_word_length"),
    ("quality", "min_alpha_share"),
    ("checks", "year_min"),
    ("checks", "year_max"),
    ("dedup", "num_perm"),
    ("dedup", "bands"),
    ("dedup", "threshold"),
    ("dedup", "verify_word_ngram"),
    ("dedup", "lsh_skip_common"),
    ("dedup", "seed"),
    ("gates", "max_processing_error_share"),
]
odd_numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 16, 32, 128, 0.5, 1.0, 1950, 2100]),
)


@given(st.dictionaries(st.sampled_from(NUMERIC_KEYS), odd_numbers, min_size=1, max_size=4))
def test_a_random_policy_is_refused_in_one_line_or_works(tmp_path_factory, changes):
    """Any numbers in any keys: the policy is refused with one `file:line: [table] key: problem`, or
    every stage runs with it (no value accepted that fails later)."""
    import math
    import tomllib

    from checks import DEFAULT_POLICY_PATH
    from checks.gates import evaluate_gates
    from corpus_hygiene.ingest.discover import discover
    from corpus_hygiene.pipeline.assemble import assemble
    from corpus_hygiene.pipeline.process import process_files

    folder = tmp_path_factory.mktemp("policy")
    data = tomllib.loads(DEFAULT_POLICY_PATH.read_text("utf-8"))
    for (table, key), value in changes.items():
        data[table][key] = value
    lines = []
    for table, values in data.items():
        lines.append(f"[{table}]")
        for key, value in values.items():
            if isinstance(value, float) and not math.isfinite(value):
                value = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
            elif isinstance(value, str):
                value = f'"{value}"'
            elif isinstance(value, list):
                value = "[" + ", ".join(f'"{v}"' for v in value) + "]"
            lines.append(f"{key} = {value}")
    path = folder / "policy.toml"
    path.write_text("\n".join(lines) + "\n")
    try:
        policy = load_policy(path)
    except PolicyError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{path}:"), str(exc)
        return
    corpus = folder / "in"
    corpus.mkdir()
    (corpus / "a.txt").write_text("ICLR 2026 Papers\n\n" + "We study retrieval for question answering. " * 3)
    results = process_files(discover(corpus, policy.max_file_bytes).files, policy)
    asm = assemble(results, [], policy=policy)
    evaluate_gates(asm.counts, _frames(0), policy, reasons=asm.quarantine_reasons)


def test_dedup_config_defaults_are_the_policy_files():
    """Tests that build DedupConfig() exercise the settings production runs use (checks/policy.toml)."""
    from corpus_hygiene.dedup.config import DedupConfig

    assert DedupConfig() == load_policy().dedup_config()
