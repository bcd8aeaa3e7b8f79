"""Imported once by the forkserver that local Dask workers are forked from (``cluster._fork_workers_warm``):
every worker starts with the per-file stage's warm-up done, and its memory shared until written."""

from corpus_hygiene.cluster import warm_up

warm_up()
