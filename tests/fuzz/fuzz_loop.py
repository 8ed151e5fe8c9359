"""The run loop the surface and format fuzzers share (fuzz_surfaces.py, fuzz_formats.py).

Each execution runs under an alarm (an execution past HANG_SECONDS is a hang) in a process whose
address space is capped above what its imports use (an allocation a header merely claims fails
instead of taking the machine). An execution ends in an outcome the target names ("clean",
"error", ...) or in a finding: a hang, a broken property (Finding), or an exception that is not
ours ("foreign"). Each finding's input is saved under mutate.FINDINGS with how to rebuild it.
"""
from __future__ import annotations

import hashlib
import os
import signal
import time
from collections import Counter
from typing import Any, Callable, Sequence

import mutate

HANG_SECONDS = 20           # harness.DEFAULT_TIMEOUT: an execution longer than this is a hang
MEMORY_LIMIT = 3 << 30      # address space added to what the imports use (as harness workers)


class Finding(Exception):
    """The property of the target does not hold."""


class Hang(BaseException):
    """The alarm fired: the execution ran past HANG_SECONDS."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


def limit_memory() -> None:
    """Cap this process's address space at what it uses now plus MEMORY_LIMIT."""
    import resource
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + MEMORY_LIMIT, resource.RLIM_INFINITY))


def save_finding(name: str, data: bytes, record: str) -> str:
    """Save a finding's input as mutate.FINDINGS/<name>-<hash of data>, with `record` (target,
    seed, index, how to rebuild it, what was found) beside it; the input's path."""
    os.makedirs(mutate.FINDINGS, exist_ok=True)
    path = os.path.join(mutate.FINDINGS, f"{name}-{hashlib.sha1(data).hexdigest()[:16]}")
    with open(path, "wb") as f:
        f.write(data)
    with open(path + ".txt", "w") as f:
        f.write(record)
    return path


def fuzz(label: str, pool: Sequence[Any], execute: Callable[[Any, int], str],
         save: Callable[[Any, int, str], str], seconds: float, start: int = 0,
         max_execs: int | None = None, stride: int = 1, progress: bool = False,
         after_hang: Callable[[], None] | None = None
         ) -> tuple[Counter[str], list[str], int, float]:
    """Run execute(item, index) for each item of `pool` at indices start, start + stride, ...
    until `seconds` pass or `max_execs` ran: (Counter of outcomes, [finding paths], executions,
    elapsed seconds). save(item, index, detail) saves a finding; after_hang() cleans up after an
    execution the alarm cut short."""
    signal.signal(signal.SIGALRM, _on_alarm)
    counts: Counter[str] = Counter()
    findings: list[str] = []
    t0 = time.monotonic()
    execs, index = 0, start
    while time.monotonic() - t0 < seconds and (max_execs is None or execs < max_execs):
        for item in pool:
            if (max_execs is not None and execs >= max_execs) or time.monotonic() - t0 >= seconds:
                break
            detail = ""
            signal.alarm(HANG_SECONDS)
            try:
                outcome = execute(item, index)
            except Hang:
                outcome, detail = "hang", f"ran past {HANG_SECONDS} s"
                if after_hang is not None:
                    after_hang()
            except Finding as e:
                outcome, detail = "finding", str(e)
            except BaseException as e:      # noqa: BLE001 -- a foreign exception is a finding
                outcome, detail = "foreign", f"{type(e).__name__}: {e}"
            finally:
                signal.alarm(0)
            counts[outcome] += 1
            if outcome in ("hang", "finding", "foreign"):
                findings.append(save(item, index, detail))
                print(f"FINDING {outcome} {item} {index}: {detail[:300]}", flush=True)
            execs += 1
            if progress and execs % 10_000 == 0:
                print(f"{label}: {execs} executions in {time.monotonic() - t0:.0f} s, "
                      f"index {index}, {dict(counts)}", flush=True)
        index += stride
    return counts, findings, execs, time.monotonic() - t0


def summary(label: str, counts: Counter[str], execs: int, elapsed: float) -> str:
    """The line a run ends with: executions, rate and each outcome's count."""
    return (f"{label}: {execs} executions in {elapsed:.0f} s "
            f"({execs / max(elapsed, 1e-9):.0f}/s): "
            + ", ".join(f"{k} {counts.get(k, 0)}" for k in ("clean", "error", "finding",
                                                             "foreign", "hang")))
