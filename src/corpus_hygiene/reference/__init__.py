"""References: datasets a run is checked against, read and never written.

``source.py`` finds a reference's Parquet files and their content hash; ``index.py`` indexes them once
(exact keys, MinHash signatures, texts, short texts' n-grams) into a cache file keyed by that hash;
``contamination.py`` measures how much of a short reference text a record contains; ``match.py``
finds, for every record of a run, the reference row it repeats or the item it contains.
"""
