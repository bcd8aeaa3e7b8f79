import os
import shutil

import pytest

from corpus_hygiene.ingest.discover import InputRootError, discover


def _write(path, data=b"ICLR 2026 Papers\n\nbody\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_every_regular_file_recursively_in_code_point_order(tmp_path):
    for rel in ["b.txt", "a/z.txt", "a/b/c.txt", "A.txt", "é.txt", "a b.txt"]:
        _write(tmp_path / rel)
    found = discover(tmp_path, max_bytes=10_000)
    assert [f.rel_path for f in found.files] == ["A.txt", "a b.txt", "a/b/c.txt", "a/z.txt", "b.txt", "é.txt"]
    assert found.refused == []


def test_symlinks_outside_loops_and_dangling_become_file_rows(tmp_path):
    root = tmp_path / "in"
    outside = _write(tmp_path / "secret.txt", b"ICLR 2026 Papers\n\nsecret outside the root\n")
    _write(root / "real.txt")
    os.symlink(outside, root / "out_link.txt")
    os.symlink(tmp_path, root / "out_dir")
    os.symlink(root / "loop_a", root / "loop_b")
    os.symlink(root / "loop_b", root / "loop_a")
    os.symlink(root / "missing.txt", root / "dangling.txt")
    os.symlink(root / "real.txt", root / "inside_link.txt")
    found = discover(root, max_bytes=10_000)
    assert [f.rel_path for f in found.files] == ["real.txt"]
    assert found.skipped == ["inside_link.txt"]
    reasons = {r.source_file: r.reason for r in found.refused}
    assert reasons == {
        "dangling.txt": "broken_symlink",
        "loop_a": "symlink_loop",
        "loop_b": "symlink_loop",
        "out_dir": "symlink_outside_root",
        "out_link.txt": "symlink_outside_root",
    }
    assert all(r.source_line is None for r in found.refused)


def test_fifo_is_refused_without_opening_it(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")  # opening it for reading would block forever
    found = discover(tmp_path, max_bytes=10_000)
    assert [(r.source_file, r.reason) for r in found.refused] == [("pipe.txt", "not_regular_file")]


def test_oversized_file_is_refused_with_the_limit_in_the_detail(tmp_path):
    _write(tmp_path / "big.txt", b"x" * 2048)
    _write(tmp_path / "ok.txt", b"x" * 1024)
    found = discover(tmp_path, max_bytes=1024)
    assert [f.rel_path for f in found.files] == ["ok.txt"]
    (refused,) = found.refused
    assert refused.reason == "oversized_file"
    assert "2,048 bytes" in refused.detail and "1,024" in refused.detail


def test_missing_root_is_a_clear_error(tmp_path):
    with pytest.raises(InputRootError, match="does not exist"):
        discover(tmp_path / "nope", max_bytes=1)
    _write(tmp_path / "file.txt")
    with pytest.raises(InputRootError, match="not a folder"):
        discover(tmp_path / "file.txt", max_bytes=1)


def test_root_given_through_a_symlink_works(tmp_path):
    _write(tmp_path / "real" / "a.txt")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert [f.rel_path for f in discover(tmp_path / "link", max_bytes=10_000).files] == ["a.txt"]


def test_names_that_would_render_alike_get_distinct_reversible_paths(tmp_path, policy):
    """A name holding the byte 0xFF and a name spelt with the four characters \\xff were both
    'a\\xff.txt', and the run failed its accounting; each now has its own path, and assembly counts
    every paragraph once."""
    from corpus_hygiene.pipeline.assemble import assemble
    from corpus_hygiene.pipeline.process import process_files

    head = "ICLR 2026 Papers\n\n"
    first = "We study dense retrieval and show that a small verifier improves every question answering model."
    second = "Graph neural networks predict molecular properties, but their predictions resist explanation."
    (tmp_path / os.fsdecode(b"a\xff.txt")).write_text(head + first)
    (tmp_path / "a\\xff.txt").write_text(head + second)
    files = discover(tmp_path, policy.max_file_bytes).files
    assert sorted(f.rel_path for f in files) == ["a\\\\xff.txt", "a\\xff.txt"]
    assert {os.fsencode(f.abs_path.name) for f in files} == {b"a\xff.txt", b"a\\xff.txt"}
    asm = assemble(process_files(files, policy), [], policy=policy)
    assert asm.counts["ingested"] == 2 and asm.counts["kept"] == 2


@pytest.mark.parametrize("swapped", ["folder", "file"])
def test_a_folder_or_file_swapped_for_an_outside_link_after_discovery_is_not_read(tmp_path, policy, swapped):
    from corpus_hygiene.incremental.run_key import hash_inputs
    from corpus_hygiene.pipeline.process import process_file

    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "in" / "sub" / "a.txt").write_text("ICLR 2026 Papers\n\nA harmless abstract here.\n")
    (tmp_path / "outside" / "a.txt").write_text("ICLR 2026 Papers\n\nSECRET planted outside the root.\n")
    found = discover(tmp_path / "in", 1 << 20)
    if swapped == "folder":  # the moment of reading: sub is now a link out of the root
        shutil.rmtree(tmp_path / "in" / "sub")
        (tmp_path / "in" / "sub").symlink_to(tmp_path / "outside")
    else:
        (tmp_path / "in" / "sub" / "a.txt").unlink()
        (tmp_path / "in" / "sub" / "a.txt").symlink_to(tmp_path / "outside" / "a.txt")
    (src,) = found.files
    result = process_file(src, policy)
    assert result.records == [] and "SECRET" not in repr(result)
    (row,) = result.rejected
    assert row.source_file == "sub/a.txt" and row.reason in ("symlink_outside_root", "unreadable_file")
    assert hash_inputs(found) == {"sub/a.txt": None}
