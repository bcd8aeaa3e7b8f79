"""Duplicate detection: exact keys now; MinHash near-duplicates plug in beside them."""
