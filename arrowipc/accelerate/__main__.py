"""`python -m arrowipc.accelerate script.py [args]` or `python -m arrowipc.accelerate -m module
[args]`: run a script or module as `__main__`, as python does, with the accelerator installed."""
from __future__ import annotations

import runpy
import sys

from . import install

USAGE = ("usage: python -m arrowipc.accelerate script.py [args...]\n"
         "       python -m arrowipc.accelerate -m module [args...]\n")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        sys.stderr.write(USAGE)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    install()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        # the script's folder first on sys.path, as python puts it
        sys.path[0] = __import__("os").path.dirname(__import__("os").path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    if code:
        sys.exit(code)
