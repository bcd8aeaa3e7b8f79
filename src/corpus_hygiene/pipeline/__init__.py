"""Per-file processing (decode, parse, clean, enrich) and the assembly of the run's tables."""
