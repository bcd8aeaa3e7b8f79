"""What lets a re-run skip work: the per-file cache, the run key, the memo of verified pairs."""
