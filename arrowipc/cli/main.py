"""The `arrowipc` command line: the parser, dispatch to one module per command, and how a failure
becomes one line on stderr and an exit status (see arrowipc/cli/__init__.py for the statuses).

Heavy modules load inside the commands, so `arrowipc --help` costs about an `import arrowipc`.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from typing import Callable, NoReturn

from .common import (COMPRESSIONS, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID_DATA, EXIT_IO,
                     EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE, UsageError, one_line)

__all__ = ["build_parser", "COMMANDS", "main"]

COMMANDS = ("inspect", "head", "validate", "convert", "recover", "bench")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors raised as UsageError (main turns them into exit code 2)."""

    def error(self, message: str) -> NoReturn:
        e = UsageError(f"{message} (see '{self.prog} --help')")
        e.prog = self.prog
        raise e


# -- helpers ---------------------------------------------------------------------------------------

def _about(target: str | None, what: str) -> str:
    """`<input>: what` for problems of the input data."""
    if target is None:
        return what
    return f"{'<stdin>' if target == '-' else target}: {what}"


# -- parser ----------------------------------------------------------------------------------------

def _whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: an int of at least `minimum`, else a usage error (exit status 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, got {value}")
        return value
    parse.__name__ = f"whole number >= {minimum}"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `arrowipc` command and its subcommands."""
    from .. import __version__
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true",
                        help="show the full traceback when something fails")
    parser = _Parser(prog="arrowipc", parents=[common],
                     description="Inspect, check, convert and rescue Apache Arrow IPC files "
                                 "(.arrow) and streams (.arrows). Use '-' to read stdin.",
                     epilog="exit status: 0 ok, 1 invalid data, 2 usage error, 3 I/O error, "
                            "4 unsupported feature, 5 internal error, 130 interrupted (Ctrl-C)")
    parser.add_argument("--version", action="version", version=f"arrowipc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("inspect", parents=[common], help="describe a file or stream",
                       description="Format, metadata version, schema (with field metadata), "
                                   "batches, rows, per-column sizes, compression, dictionaries "
                                   "and custom metadata, read from the message headers.")
    p.add_argument("file", help="an Arrow IPC file or stream ('-' for stdin), or a directory "
                                "or glob of them (a dataset)")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.add_argument("--max-batches", type=_whole_number(0), default=10, metavar="N",
                   help="batches listed one by one in the text report (default 10)")
    p.set_defaults(command_module="inspect")

    p = sub.add_parser("head", parents=[common], help="print the first rows as a table",
                       description="The first rows as an aligned table.")
    p.add_argument("file", help="an Arrow IPC file or stream ('-' for stdin), or a directory "
                                "or glob of them (a dataset)")
    p.add_argument("-n", type=_whole_number(0), default=10, metavar="N",
                   help="rows to show (default 10)")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")
    p.add_argument("--max-width", type=_whole_number(4), default=40, metavar="W",
                   help="cut cells longer than W characters (default 40)")
    p.set_defaults(command_module="head")

    p = sub.add_parser("validate", parents=[common], help="check a file or stream",
                       description="Exit status 0 when the input is valid; otherwise every "
                                   "problem found, with where, and exit status 1.")
    p.add_argument("file", help="an Arrow IPC file or stream ('-' for stdin), or a directory "
                                "or glob of them (a dataset)")
    p.add_argument("--full", action="store_true",
                   help="also check values (UTF-8, decimal precision, map keys), not only "
                        "the structure")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(command_module="validate")

    def output_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--to", choices=("file", "stream"),
                       help="output format (default: from the extension of DST)")
        p.add_argument("--compression", choices=COMPRESSIONS,
                       help="body compression of the output (default: as the input)")
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="progress bar on stderr (default: for inputs of 64 MiB or more, "
                            "when stderr is a terminal)")
        p.add_argument("-q", "--quiet", action="store_true", help="no summary line")

    p = sub.add_parser("convert", parents=[common], help="stream <-> file, recompress, regroup",
                       description="Rewrite SRC as DST: file or stream by DST's extension "
                                   "(.arrow/.feather: file; .arrows/.stream: stream) or --to.")
    p.add_argument("src", help="an Arrow IPC file or stream ('-' for stdin), or a directory "
                               "or glob of them (a dataset)")
    p.add_argument("dst", help="the output path ('-' for stdout)")
    output_options(p)
    p.add_argument("--batch-rows", type=_whole_number(1), metavar="N",
                   help="regroup rows into N-row batches")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")
    p.add_argument("--alkaid", action="store_true", help="write the file magic 'ALKAID1'")
    p.set_defaults(command_module="convert")

    p = sub.add_parser("recover", parents=[common],
                       help="rescue the complete batches of a damaged input",
                       description="Copy every complete record batch of a truncated stream or "
                                   "footer-less file to DST, stopping at the first damaged "
                                   "message.")
    p.add_argument("src", help="a truncated Arrow IPC stream or file ('-' for stdin)")
    p.add_argument("dst", help="the output path ('-' for stdout); default format: as SRC")
    output_options(p)
    p.set_defaults(command_module="recover")

    p = sub.add_parser("bench", parents=[common], help="time arrowipc against pyarrow",
                       description="Time writing and reading streams and files with arrowipc "
                                   "and, when installed, pyarrow; print the ratio table "
                                   "(ratio = arrowipc time / pyarrow time; below 1 is faster).")
    p.add_argument("--rows", type=_whole_number(1), default=1_000_000,
                   help="rows of the data set (1000000)")
    p.add_argument("--batch-rows", type=_whole_number(1), default=65_536,
                   help="rows per batch (65536)")
    p.add_argument("--repeat", type=_whole_number(1), default=5, help="runs per measurement (5)")
    p.add_argument("--no-import", action="store_true", help="skip the import-time row")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="log each step on stderr")
    p.set_defaults(command_module="bench")
    return parser


# -- entry point -----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    command, target = "arrowipc", None
    try:
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        command = f"arrowipc {args.command}"
        if extra:
            e = UsageError(f"unrecognized arguments: {' '.join(extra)} (see '{command} --help')")
            e.prog = command
            raise e
        target = getattr(args, "file", None) or getattr(args, "src", None)
        run: Callable[[argparse.Namespace], int] = \
            importlib.import_module(f".{args.command_module}", __package__).run
        return run(args)
    except BaseException as e:        # noqa: B902 - every failure becomes a status and one line
        return _failure(e, command, target, debug)


def _failure(e: BaseException, command: str, target: str | None, debug: bool) -> int:
    """The exit status for `e`, after printing it as one line on stderr."""
    from ..errors import ArrowInvalid, ArrowNotImplementedError
    if isinstance(e, SystemExit):      # --help and --version
        return e.code if isinstance(e.code, int) else EXIT_OK
    if isinstance(e, BrokenPipeError):   # `arrowipc head big.arrow | head -3`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    if isinstance(e, KeyboardInterrupt):
        print(f"{command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if debug:
        import traceback
        traceback.print_exception(e)
    shown: BaseException | str = e          # what the one-line message says
    if isinstance(e, UsageError):
        status, what = EXIT_USAGE, "error"
        command = getattr(e, "prog", command)
    elif isinstance(e, ArrowNotImplementedError):
        status, what = EXIT_UNSUPPORTED, _about(target, "unsupported")
    elif isinstance(e, ArrowInvalid):
        status, what = EXIT_INVALID_DATA, _about(target, "invalid data")
        if "truncated" in str(e) and command != "arrowipc recover" and target not in (None, "-"):
            shown = (f"{one_line(e)} (to copy every complete batch: "
                 f"arrowipc recover {target} <output>)")
    elif isinstance(e, OSError):
        status, what = EXIT_IO, "I/O error"
        if e.filename is not None and e.strerror:
            shown = f"{e.filename}: {e.strerror}"
    else:
        status, what = EXIT_INTERNAL, "internal error (run again with --debug and report it)"
    print(f"{command}: {what}: {one_line(shown)}", file=sys.stderr)
    return status


if __name__ == "__main__":            # pragma: no cover
    sys.exit(main())
