"""Publishing: the versioned dataset folder, its manifest, card and schema, the changes since the last run."""
