"""Fuzz targets for the surfaces built over the readers: the push decoder, the async reader and
file objects that misbehave.

Each execution takes a mutant of a stream seed (tests/fuzz/mutate.py, deterministic in (seed,
index)) or, for `fileobj`, a seed intact, and checks a property stronger than "no crash":

* ``push``    -- ipc.StreamDecoder fed the mutant in a random chunking (1 byte, random sizes,
  whole) gives the batches ipc.open_stream gives, then the same error class and message; after an
  error every feed and finish raise it again;
* ``async``   -- ipc.open_stream_async over an asyncio.StreamReader fed random pieces gives the
  same, without ever running longer than the hang guard (a reader that spins without awaiting
  is caught by the alarm, which wait_for cannot do);
* ``fileobj`` -- a stream or file read through a file object that breaks its contract once (a
  read returning more than asked, a negative count, None, the wrong type, an exception, a seek
  or tell that lies) gives either every batch (the broken call was never made) or an
  ArrowInvalid/OSError naming the source and a byte offset, never a foreign exception and never
  fewer batches without an error.

Anything else is a finding, written to tests/fuzz/findings/surface-<target>-<hash> with a .txt
saying how to rebuild it. Runs in this process under an address-space limit, one alarm per
execution:

    python tests/fuzz/fuzz_surfaces.py --target push --seconds 300
    python tests/fuzz/fuzz_surfaces.py --target async --seconds 300 --start 100000
    python tests/fuzz/fuzz_surfaces.py --target fileobj --max-execs 1000000

and prints "<target>: N executions in S s (R/s): ..." at the end (every 10,000 with --progress).
"""
from __future__ import annotations

import asyncio
import io
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mutate  # noqa: E402  (puts tests/untrusted on sys.path)
import seeds  # noqa: E402

from fuzz_loop import Finding, fuzz, limit_memory, save_finding, summary  # noqa: E402

TARGETS = ("push", "async", "fileobj")


def _outcome(fn):
    """([fingerprint of each batch], (error class, message) or None) of iterating fn()."""
    from arrowipc.errors import ArrowException
    got = []
    try:
        for batch in fn():
            batch.validate()
            got.append((batch.num_rows, [[None if b is None else b.to_pybytes()
                                          for b in c.buffers()] for c in batch.columns]))
    except ArrowException as e:
        return got, (type(e).__name__, str(e))
    return got, None


BYTEWISE_WINDOWS = (16, 64, 256)    # bytes fed one at a time by a "bytewise" chunking
PIECE_SIZES = (1, 2, 3, 5, 8, 13, 64, 100, 999, 4096)
MAX_READS = 128                     # the async reader's chunk size is at least len(data) / this


def _chunking(data, rng):
    """The sizes of the pieces `data` is fed in: whole; random sizes; or "bytewise": one byte at
    a time over a window of 16 to 256 bytes (half the time from just before a message's
    continuation marker, where the framing and metadata lie), the bytes before and after the
    window in one piece each. The window keeps the cost of an execution bounded whatever the
    input's size (feeding a whole input a byte at a time costs a decoder step per byte), while
    over many executions every boundary of every message is split at every byte."""
    n = len(data)
    kind = rng.randrange(3)
    if kind == 0 and n:
        width = min(rng.choice(BYTEWISE_WINDOWS), n)
        markers = mutate._markers(data)
        if markers and rng.random() < .5:
            at = max(0, min(rng.choice(markers) - rng.randrange(8), n - width))
        else:
            at = rng.randrange(n - width + 1)
        return [k for k in (at,) if k] + [1] * width + [k for k in (n - at - width,) if k]
    if kind <= 1:
        return [max(n, 1)]
    sizes, total = [], 0
    while total < n:
        sizes.append(rng.choice(PIECE_SIZES))
        total += sizes[-1]
    return sizes


def push_decoder_outcome(data, sizes):
    from arrowipc import ipc
    from arrowipc.errors import ArrowException
    decoder, pos, got = ipc.StreamDecoder(), 0, []

    def batches():
        nonlocal pos
        for size in sizes:
            yield from decoder.feed(data[pos:pos + size])
            pos += size
        decoder.finish()

    got, error = _outcome(batches)
    # the decoder's own error (not a batch's deferred checks, raised by validate()) must stay
    if error is not None and decoder.error is not None and \
            (type(decoder.error).__name__, str(decoder.error)) == error:
        for again in (lambda: decoder.feed(data[pos:]), decoder.finish):
            try:
                again()
            except ArrowException as e:
                if (type(e).__name__, str(e)) != error:
                    raise Finding(f"the error changed from {error} to {e!r}") from None
            else:
                raise Finding(f"the error {error} was not sticky")
    return got, error


async def _async_outcome(data, sizes, chunk_size):
    from arrowipc import ipc
    stream = asyncio.StreamReader()

    async def producer():
        pos = 0
        for size in sizes:
            stream.feed_data(data[pos:pos + size])
            pos += size
            await asyncio.sleep(0)
        stream.feed_eof()

    task = asyncio.create_task(producer())
    reader = ipc.open_stream_async(stream, chunk_size=chunk_size)
    got = []

    def collected():
        return iter(got)

    from arrowipc.errors import ArrowException
    error = None
    try:
        async for batch in reader:
            got.append(batch)
    except ArrowException as e:
        error = (type(e).__name__, str(e))
    finally:
        task.cancel()
        await asyncio.wait([task])       # the loop is reused: leave no task behind
    out, later = _outcome(collected)
    return out, later or error


def run_push(data, rng):
    from arrowipc import ipc
    expected = _outcome(lambda: ipc.open_stream(data))
    got = push_decoder_outcome(data, _chunking(data, rng))
    if got != expected:
        raise Finding(f"push decoder: {len(got[0])} batches, {got[1]}; stream reader: "
                      f"{len(expected[0])} batches, {expected[1]}")
    return "error" if got[1] else "clean"


_LOOP = None


def _event_loop():
    """One event loop for every async execution (a new loop per execution costs more than the
    execution); a hang replaces it, since the alarm may have left it mid-step."""
    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return _LOOP


def _drop_event_loop():
    global _LOOP
    if _LOOP is not None:
        try:
            _LOOP.close()
        except Exception:       # noqa: BLE001 -- a loop stopped mid-step by the alarm
            pass
        _LOOP = None


def run_async(data, rng):
    from arrowipc import ipc
    expected = _outcome(lambda: ipc.open_stream(data))
    sizes = _chunking(data, rng)
    # a chunk size of 1 over a whole input costs an await and a decoder step per byte: the
    # reads are bounded at MAX_READS (small inputs are still read a byte at a time)
    chunk_size = max(rng.choice((1, 7, 64, 4096, 1 << 16)), -(-len(data) // MAX_READS))
    got = _event_loop().run_until_complete(_async_outcome(data, sizes, chunk_size))
    if got != expected:
        raise Finding(f"async reader: {len(got[0])} batches, {got[1]}; stream reader: "
                      f"{len(expected[0])} batches, {expected[1]}")
    return "error" if got[1] else "clean"


class _Misbehaving(io.RawIOBase):
    """A seekable file object over `data` whose `call`-th call of `method` breaks the
    contract as `how` says."""

    name = "fuzzed-object"

    def __init__(self, data, method, how, call, has_readinto):
        self.inner, self.method, self.how, self.call = io.BytesIO(data), method, how, call
        self.calls, self.broke, self.has_readinto = 0, False, has_readinto

    def _breaks(self, method):
        if method != self.method or self.broke:
            return False
        self.calls += 1
        self.broke = self.calls == self.call
        return self.broke

    def readable(self):
        return True

    def seekable(self):
        return True

    def __getattribute__(self, name):
        if name == "readinto" and not object.__getattribute__(self, "has_readinto"):
            raise AttributeError(name)
        return super().__getattribute__(name)

    def readinto(self, view):
        if self._breaks("readinto"):
            got = self.inner.readinto(view)
            return _broken_answer(self.how, got, bytes(view[:got]), count=True)
        return self.inner.readinto(view)

    def read(self, n=-1):
        if self._breaks("read"):
            got = self.inner.read(n)
            return _broken_answer(self.how, len(got), got, count=False)
        return self.inner.read(n)

    def seek(self, offset, whence=0):
        landed = self.inner.seek(offset, whence)
        if self._breaks("seek"):
            return _broken_answer(self.how, landed, b"", count=True)
        return landed

    def tell(self):
        at = self.inner.tell()
        return _broken_answer(self.how, at, b"", count=True) if self._breaks("tell") else at


def _broken_answer(how, n, data, count):
    """What a broken call returns instead of `n` (a count or position) or `data` (bytes)."""
    if how == "raise":
        raise RuntimeError("the device went away")
    if how == "oserror":
        raise ConnectionResetError("connection reset by peer")
    if how == "none":
        return None
    if how == "negative":
        return -1
    if how == "more":
        return n + 100 if count else data + b"\0" * 100
    if how == "float":
        return float(n)
    if how == "str":
        return str(n) if count else data.decode("latin-1")
    if how == "elsewhere":
        return n + 8
    return n


BREAKS = {"readinto": ("negative", "none", "more", "float", "str", "raise", "oserror"),
          "read": ("more", "none", "str", "raise", "oserror", "float"),
          "seek": ("elsewhere", "str", "negative", "none", "raise"),
          "tell": ("str", "negative", "raise")}


_HONEST_OUTCOMES = {}


def run_fileobj(data, rng, form):
    from arrowipc import ipc
    from arrowipc.errors import ArrowException
    read = (lambda f: ipc.open_stream(f)) if form == "stream" else (lambda f: ipc.open_file(f))
    # the inputs are the seeds themselves: an honest object's outcome is read once per seed
    expected = _HONEST_OUTCOMES.get((form, data))
    if expected is None:
        expected = _HONEST_OUTCOMES[(form, data)] = _outcome(lambda: read(io.BytesIO(data)))
    method = rng.choice(sorted(BREAKS))
    how = rng.choice(BREAKS[method])
    f = _Misbehaving(data, method, how, rng.randrange(1, 24), method != "read" or rng.random() < .5)
    if method == "read":
        f.has_readinto = False
    try:
        got = _outcome(lambda: read(f))
    except (ArrowException, OSError) as e:      # raised while opening
        got = ([], (type(e).__name__, str(e)))
    if not f.broke:
        if got != expected:
            raise Finding(f"an honest object read differently: {got[1]} vs {expected[1]}")
        return "clean" if got[1] is None else "error"
    if got[1] is None:
        if got != expected:
            raise Finding(f"{method} -> {how}: no error but {len(got[0])} batches instead of "
                          f"{len(expected[0])}")
        return "clean"                   # the broken answer was harmless (a lie not used)
    name, message = got[1]
    if method in ("read", "readinto"):
        if "fuzzed-object" not in message or not re.search(r"at (byte|offset) \d+", message):
            raise Finding(f"{method} -> {how}: {name}: {message} does not name the source and "
                          f"the byte")
    if len(got[0]) > len(expected[0]):
        raise Finding(f"{method} -> {how}: more batches than the input holds")
    return "error"


def _seed_pool(target, full_seeds=False):
    """(seed path, form) pairs: the gold seeds, those above seeds.SMALL_SEED bytes replaced by
    their slim twins (every type and message shape, at a cost per execution that lets a long
    run reach millions), or the gold seeds themselves with `full_seeds`."""
    files = seeds.seed_files if full_seeds else seeds.small_seed_files
    if target == "fileobj":
        return [(p, "stream") for p in files("stream")[::2]] + \
               [(p, "file") for p in files("file")[::2]]
    return [(p, "stream") for p in files("stream")] + \
           [(p, "stream") for p in files("compressed")]


def make_input(target, path, index):
    """(bytes, rng) of execution `index` on seed `path`: a mutant for push/async (index 0 of
    each seed is the seed itself), the seed for fileobj."""
    rng = random.Random(f"surface:{target}:{os.path.basename(path)}:{index}")
    if target == "fileobj" or index % 50 == 0:
        return mutate._seed(path), rng
    return mutate.make_mutant(path, index), rng


def _save(target, path, index, detail) -> str:
    data, _ = make_input(target, path, index)
    return save_finding(f"surface-{target}", data,
                        f"target {target}\nseed {path}\nindex {index}\n"
                        f"rebuild: fuzz_surfaces.make_input({target!r}, seed, index)\n{detail}\n")


def run(target, seconds=60.0, start=0, max_execs=None, progress=False, memory_limit=True,
        stride=1, full_seeds=False):
    """Fuzz `target` until `seconds` pass or `max_execs` ran, over indices start, start +
    stride, ... (each index once per seed): (Counter of outcomes, [finding paths], executions,
    elapsed seconds)."""
    import arrowipc.ipc  # noqa: F401  (imported before the memory limit)
    if memory_limit:
        limit_memory()
    runner = {"push": run_push, "async": run_async}.get(target)

    def execute(item, index):
        path, form = item
        data, rng = make_input(target, path, index)
        return runner(data, rng) if runner else run_fileobj(data, rng, form)
    return fuzz(target, _seed_pool(target, full_seeds), execute,
                lambda item, index, detail: _save(target, item[0], index, detail),
                seconds, start, max_execs, stride, progress, after_hang=_drop_event_loop)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", choices=TARGETS, required=True)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--max-execs", type=int, default=None)
    ap.add_argument("--start", type=int, default=0, help="first mutant index (resume a run)")
    ap.add_argument("--stride", type=int, default=1,
                    help="run indices start, start + stride, ... (processes sharing a range)")
    ap.add_argument("--full-seeds", action="store_true",
                    help="the gold seeds whatever their size, not their slim twins")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    counts, findings, execs, elapsed = run(args.target, args.seconds, args.start,
                                           args.max_execs, args.progress, stride=args.stride,
                                           full_seeds=args.full_seeds)
    print(summary(args.target, counts, execs, elapsed), flush=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
