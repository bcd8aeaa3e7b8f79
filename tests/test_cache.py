"""Per-file cache: an unchanged file is served from the cache; anything that shapes it is in the key."""

from dataclasses import replace

from corpus_hygiene.cache import FileCache
from corpus_hygiene.ingest import discover
from corpus_hygiene.process import process_file

from .conftest import EXAMPLES


def test_second_run_is_served_from_the_cache_with_equal_results(tmp_path, policy):
    cache = FileCache(tmp_path / "cache")
    files = discover(EXAMPLES, policy.max_file_bytes).files
    first = [process_file(f, policy, cache) for f in files]
    second = [process_file(f, policy, cache) for f in files]
    assert not any(r.source.cached for r in first) and all(r.source.cached for r in second)
    for a, b in zip(first, second, strict=True):
        assert a.records == b.records and a.rejected == b.rejected
        assert replace(a.source, cached=True) == b.source


def test_a_changed_file_or_policy_is_a_miss_and_prune_drops_the_rest(tmp_path, policy):
    (tmp_path / "in").mkdir()
    src_path = tmp_path / "in" / "a.txt"
    src_path.write_text("ICLR 2026 Papers\n\n" + "An abstract about caching results of unchanged files. " * 3)
    cache = FileCache(tmp_path / "cache")
    (src,) = discover(tmp_path / "in", policy.max_file_bytes).files
    process_file(src, policy, cache)
    assert process_file(src, policy, cache).source.cached
    assert not process_file(src, replace(policy, sha256="0" * 64), cache).source.cached
    src_path.write_text(
        "ICLR 2026 Papers\n\n" + "A changed abstract about caching the results of files. " * 3
    )
    (src,) = discover(tmp_path / "in", policy.max_file_bytes).files
    result = process_file(src, policy, cache)
    assert not result.source.cached and "changed" in result.records[0].text
    assert len(list(cache.folder.glob("*.json.gz"))) == 3
    assert cache.prune(cache.keys_of([result.source], policy.sha256)) == 2
    assert len(list(cache.folder.glob("*.json.gz"))) == 1


def test_a_damaged_entry_is_recomputed(tmp_path, policy):
    cache = FileCache(tmp_path / "cache")
    (src,) = [f for f in discover(EXAMPLES, policy.max_file_bytes).files if f.rel_path == "fr/taln_2025.txt"]
    process_file(src, policy, cache)
    for entry in cache.folder.glob("*.json.gz"):
        entry.write_bytes(b"not gzip")
    result = process_file(src, policy, cache)
    assert not result.source.cached and len(result.records) == 2


def test_missing_names_the_files_without_an_entry_without_reading_any(tmp_path, policy):
    from corpus_hygiene.current import hash_inputs
    from corpus_hygiene.ingest import discover

    (tmp_path / "in").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "in" / name).write_text(f"ICLR 2026 Papers\n\n{name} is about {'words ' * 20}\n", "utf-8")
    found = discover(tmp_path / "in", policy.max_file_bytes)
    cache = FileCache(tmp_path / "cache")
    process_file(found.files[0], policy, cache)
    missing = cache.missing(found.files, hash_inputs(found), policy.sha256)
    assert [f.rel_path for f in missing] == ["b.txt"]
    (tmp_path / "in" / "a.txt").write_text("ICLR 2026 Papers\n\nchanged\n", "utf-8")
    found = discover(tmp_path / "in", policy.max_file_bytes)
    assert [f.rel_path for f in cache.missing(found.files, hash_inputs(found), policy.sha256)] == [
        "a.txt",
        "b.txt",
    ]
