"""The output commit protocol: tasks write under _temporary/<job>/, the driver publishes.

  setup:   the driver creates <root>/_temporary/<job>/ before any task runs
  task:    <root>/_temporary/<job>/attempt-<id>/part-<partition>-<job>.<ext>
  commit:  move each reported file to <root>/, drop what 'overwrite' replaces, write _SUCCESS
  abort:   remove <root>/_temporary/<job> (and the root when this job created it and it is empty)

Tasks never create the job directory, only their attempt directory inside it. When a task fails,
Spark aborts the job while other tasks may still be running; once abort has removed the job
directory, such a task cannot start a file under the output path any more.

Files of failed or speculative attempts are never reported, so commit leaves them behind in the
job's temporary directory and removes that directory whole. Paths must be visible to the driver
and every executor (a local disk in local mode, a shared mount on a cluster).
"""
from __future__ import annotations

import json
import os
import shutil
from typing import Any

from ..ipc.sinks import fsync_directory

__all__ = ["abort_job", "commit_job", "job_dir", "part_file_name", "setup_job", "SUCCESS",
           "task_dir", "TEMPORARY"]

TEMPORARY = "_temporary"
SUCCESS = "_SUCCESS"


def job_dir(root: str, job_id: str) -> str:
    """The folder under `root` where the tasks of job `job_id` write before the commit."""
    return os.path.join(root, TEMPORARY, job_id)


def setup_job(root: str, job_id: str) -> None:
    """Create the job's temporary directory (on the driver, before the tasks run)."""
    os.makedirs(job_dir(root, job_id), exist_ok=True)


def task_dir(root: str, job_id: str, task_attempt_id: int) -> str:
    """A directory of this task attempt's own, inside the job's (which must still exist)."""
    path = os.path.join(job_dir(root, job_id), f"attempt-{task_attempt_id}")
    try:
        os.mkdir(path)
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise RuntimeError(f"arrowipc: the write job {job_id} was aborted (its directory "
                           f"{job_dir(root, job_id)} is gone); this task writes nothing") from None
    return path


def part_file_name(partition_id: int, job_id: str, index: int, extension: str) -> str:
    """The name of a task's output file: part-NNNNN-JOB[-INDEX]EXT."""
    suffix = "" if index == 0 else f"-{index}"
    return f"part-{partition_id:05d}-{job_id}{suffix}{extension}"


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def _remove_if_empty(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def _drop_job_dir(root: str, job_id: str) -> None:
    path = job_dir(root, job_id)
    # A task still finishing may add a file while the tree is removed: go again, briefly.
    for _ in range(5):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            break
    _remove_if_empty(os.path.join(root, TEMPORARY))


def commit_job(root: str, job_id: str, written: list[tuple[str, str]], overwrite: bool,
               summary: dict[str, Any], durable: bool = False) -> list[str]:
    """Publish `written` ([(temporary path, final name)]) into `root`; returns the final paths.

    With overwrite the entries that were in `root` before are removed only now, after the new
    files are in place, so a failed job never loses the old data. With `durable` (the tasks
    fsynced their files) the renames are flushed before anything old is removed, and _SUCCESS is
    flushed too, so after a power loss _SUCCESS names only files that are on disk.
    """
    os.makedirs(root, exist_ok=True)
    old = [] if not overwrite else [n for n in os.listdir(root) if n != TEMPORARY]
    final_paths = []
    for temp_path, name in written:
        final = os.path.join(root, name)
        os.replace(temp_path, final)
        final_paths.append(final)
    if durable:
        fsync_directory(root)
    new_names = {os.path.basename(p) for p in final_paths}
    for name in old:
        if name not in new_names:
            _remove(os.path.join(root, name))
    _drop_job_dir(root, job_id)
    with open(os.path.join(root, SUCCESS), "w") as f:
        json.dump(dict(summary, job=job_id, files=sorted(new_names)), f, indent=1)
        f.write("\n")
        if durable:
            f.flush()
            os.fsync(f.fileno())
    if durable:
        fsync_directory(root)
    return final_paths


def abort_job(root: str, job_id: str, root_existed: bool) -> None:
    """Remove everything this job wrote; the root too when the job created it and it is empty."""
    _drop_job_dir(root, job_id)
    if not root_existed:
        _remove_if_empty(root)
