"""Which language a text is in: its script first, word lists and langdetect for the rest (detect.py)."""
