"""atheris (libFuzzer) harness for the IPC readers: stream, file and compressed-body targets.

Every input goes through harness.exercise (read every batch, to_pylist it, export it to pyarrow);
an arrowipc exception is the expected way to refuse an input, anything else escapes and libFuzzer
saves the input as crash-<sha1> (a signal is caught by libFuzzer the same way). Coverage
feedback comes from arrowipc's Python modules (atheris instruments their bytecode); the Cython
extensions are not instrumented, so for them the mutation engine works from the gold seeds.

    python tests/fuzz/fuzz_ipc.py --target stream -max_total_time=60
    python tests/fuzz/fuzz_ipc.py --target compressed -max_total_time=3600 -timeout=20 \\
        -rss_limit_mb=4096 tests/fuzz/.corpus/compressed

With no corpus folder the harness uses tests/fuzz/.corpus/<target>; an empty first corpus folder
is seeded from seeds.py. Findings: move the crash-* file into tests/fuzz/regressions/ once fixed.
"""
from __future__ import annotations

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "untrusted"))

import atheris  # noqa: E402

import harness  # noqa: E402  (puts the repository root on sys.path)
import seeds  # noqa: E402

with atheris.instrument_imports(include=["arrowipc"]):
    import arrowipc.ipc  # noqa: F401
    from arrowipc.errors import ArrowException

MODE = "stream"


def test_one_input(data: bytes) -> None:
    try:
        harness.exercise(data, MODE)
    except (ArrowException, harness.PyarrowRefuses):
        pass


def _corpus_dir(target: str, args: list) -> list:
    """libFuzzer's arguments with a corpus folder, seeded when empty."""
    folders = [a for a in args if not a.startswith("-")]
    if not folders:
        folders = [os.path.join(HERE, ".corpus", target)]
        args = args + folders
    corpus = folders[0]
    if not os.path.isdir(corpus) or not os.listdir(corpus):
        os.makedirs(corpus, exist_ok=True)
        for i, path in enumerate(seeds.seed_files(target)):
            shutil.copy(path, os.path.join(corpus, f"seed-{i:04d}"))
    return args


def main(argv):
    global MODE
    target = "stream"
    if "--target" in argv:
        k = argv.index("--target")
        target = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    if target not in seeds.TARGETS:
        raise SystemExit(f"--target must be one of {seeds.TARGETS}")
    MODE = seeds.mode_of(target)
    libfuzzer_args = _corpus_dir(target, argv)
    atheris.Setup([sys.argv[0]] + libfuzzer_args, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv[1:])
