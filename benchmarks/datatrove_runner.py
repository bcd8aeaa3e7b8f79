"""Runs datatrove's four MinHash dedup stages on a JSONL file; executed by the benchmark-only venv
(.venv-datatrove, made by `make bench-datatrove`), so it imports nothing from corpus_hygiene.

    python datatrove_runner.py INPUT_DIR WORK_DIR N_GRAMS BUCKETS HASHES_PER_BUCKET

Writes WORK_DIR/clusters.jsonl ({"id", "cluster"} for every document; cluster -1: kept alone) and prints
the wall seconds of the four stages as JSON.
"""

import json
import sys
import time
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import MinhashDedupSignature
from datatrove.pipeline.dedup.minhash import (
    MinhashConfig,
    MinhashDedupBuckets,
    MinhashDedupCluster,
    MinhashDedupFilter,
)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.hashing import HashConfig


def main() -> int:
    inp, work = sys.argv[1], Path(sys.argv[2])
    n_grams, buckets, per_bucket = (int(x) for x in sys.argv[3:6])
    config = MinhashConfig(
        n_grams=n_grams,
        num_buckets=buckets,
        hashes_per_bucket=per_bucket,
        hash_config=HashConfig(precision=64, hash_fc="xxhash"),
    )
    reader = JsonlReader(inp, id_key="id")
    stages = [
        [reader, MinhashDedupSignature(output_folder=str(work / "sigs"), config=config)],
        [
            MinhashDedupBuckets(
                input_folder=str(work / "sigs"), output_folder=str(work / "buckets"), config=config
            )
        ],
        [
            MinhashDedupCluster(
                input_folder=str(work / "buckets"),
                output_folder=str(work / "remove"),
                config=config,
                save_cluster_id=True,
            )
        ],
        [
            reader,
            MinhashDedupFilter(
                input_folder=str(work / "remove"),
                exclusion_writer=JsonlWriter(str(work / "removed"), compression=None),
                load_cluster_ids=True,
            ),
            JsonlWriter(str(work / "kept"), compression=None),
        ],
    ]
    start = time.perf_counter()
    for i, pipeline in enumerate(stages):
        tasks = config.num_buckets if i == 1 else 1
        LocalPipelineExecutor(
            pipeline=pipeline, tasks=tasks, workers=1, logging_dir=str(work / f"logs{i}")
        ).run()
    seconds = time.perf_counter() - start
    with (work / "clusters.jsonl").open("w") as out:
        for part in ("kept", "removed"):
            for path in sorted((work / part).glob("*.jsonl")):
                for line in path.open():
                    doc = json.loads(line)
                    cluster = doc.get("metadata", {}).get("minhash_cluster_id", -1)
                    out.write(json.dumps({"id": doc["id"], "cluster": cluster}) + "\n")
    print(json.dumps({"seconds": round(seconds, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
