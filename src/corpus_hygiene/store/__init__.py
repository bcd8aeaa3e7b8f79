"""The run's records on disk (records.py), their keys in memory (keys.py), ids spilled by hash (spill.py)
and the output tables as views over them (rows.py)."""
