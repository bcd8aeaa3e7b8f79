"""``python -m tests.fault_run STEP[:SIGNAL] ARGS...``: ``hygiene ARGS...`` killed with SIGKILL at STEP, as a
crash or an out-of-memory kill would (tests/test_filesystem.py); with SIGINT or SIGTERM, that signal sent to
the process group at STEP, as a terminal's Ctrl-C or a supervisor would (tests/test_interrupt.py)."""

import os
import signal
import sys

# The publish steps (``StagedVersion.commit``'s checkpoints), then the flow's own writes.
PUBLISH_STEPS = ("wrote manifest", "version complete", "link ready", "switched")
STEPS = ("cache entry", "report", *PUBLISH_STEPS, "after publish", "memo")


def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


def signalled(name: str, original):
    """``original`` that first sends signal ``name`` to this process group (SIGKILL: to this process)."""

    def hook(*args, **kwargs):
        if name == "SIGKILL":
            die()
        os.killpg(os.getpgrp(), getattr(signal, name))
        return original(*args, **kwargs)

    return hook


def main() -> int:
    (step, _, name), args = sys.argv[1].partition(":"), sys.argv[2:]
    name = name or "SIGKILL"
    import flows.hygiene as flow
    from corpus_hygiene.cli import main as hygiene
    from corpus_hygiene.incremental.file_cache import FileCache
    from corpus_hygiene.publish.dataset import StagedVersion

    if step in PUBLISH_STEPS:
        commit = StagedVersion.commit

        def killed_at_step(self, manifest, checkpoint=None, extra_files=None):
            return commit(self, manifest, lambda at: at == step and die(), extra_files)

        StagedVersion.commit = killed_at_step
    else:
        target = {
            "cache entry": (FileCache, "put"),
            "gates": (flow, "check_gates_and_stage"),
            "report": (flow, "write_reports"),
            "after publish": (FileCache, "after_publish"),
            "memo": (flow, "save_memo"),
        }[step]
        setattr(*target, signalled(name, getattr(*target)))
    return hygiene(args)


if __name__ == "__main__":
    sys.exit(main())
