"""The `arrowipc` command: inspect, head, validate, convert, recover and bench Arrow IPC data.

Results go to stdout. A failure is one line on stderr, `arrowipc <command>: <what went wrong>`
(the traceback only with --debug), and the exit status tells its kind:

    0  success (for validate: the input is valid)
    1  invalid data: the input is not valid Arrow IPC (validate: problems were found)
    2  usage: a bad command line (unknown option, missing column, ...)
    3  I/O: a file could not be opened, read or written
    4  unsupported: valid data using a feature arrowipc does not implement
    5  internal error: a bug in arrowipc (run again with --debug and report it)

Heavy modules load inside the commands, so `arrowipc --help` costs about an `import arrowipc`.
"""
from __future__ import annotations

import argparse
import os
import sys

EXIT_OK = 0
EXIT_INVALID_DATA = 1
EXIT_USAGE = 2
EXIT_IO = 3
EXIT_UNSUPPORTED = 4
EXIT_INTERNAL = 5
EXIT_INTERRUPTED = 130

COMPRESSIONS = ("lz4", "zstd", "none")


class UsageError(Exception):
    """A command line that cannot be carried out (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors raised as UsageError (main turns them into exit code 2)."""

    def error(self, message):
        e = UsageError(f"{message} (see '{self.prog} --help')")
        e.prog = self.prog
        raise e


# -- commands --------------------------------------------------------------------------------------

def _json_input(args, failed):
    """The Input of `args.file`; with --json, an input that cannot be opened or is not Arrow IPC
    still gets a JSON object on stdout, `failed(path, message)`, before the one-line error."""
    from .cli_inspect import Input
    from .errors import ArrowInvalid
    try:
        return Input(args.file)
    except (ArrowInvalid, OSError) as e:
        if args.json:
            import json
            path = "<stdin>" if args.file == "-" else args.file
            print(json.dumps(failed(path, _one_line(e)), indent=2, ensure_ascii=False))
        raise


def cmd_inspect(args) -> int:
    from .cli_inspect import describe, render_text
    inp = _json_input(args, lambda path, message: {"path": path, "error": message})
    report = describe(inp)
    if args.json:
        import json
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_text(report, max_batches=args.max_batches))
    if report["error"]:
        from .errors import ArrowInvalid
        raise ArrowInvalid(report["error"])
    return EXIT_OK


def cmd_head(args) -> int:
    from .cli_convert import open_reader, select_in_order
    from .cli_inspect import Input, plural
    from .cli_table import render_rows
    columns = _column_list(args.columns)
    inp = Input(args.file)
    reader = open_reader(inp, columns)
    batches, shown = [], 0
    if args.n:
        for batch in reader:
            take = min(args.n - shown, batch.num_rows)
            batches.append(select_in_order(batch.slice(0, take), columns))
            shown += take
            if shown >= args.n:
                break
    schema = batches[0].schema if batches else _projected_schema(reader.schema, columns)
    lines, notes = render_rows(schema, batches, args.max_width)
    print("\n".join(lines))
    if inp.kind == "file":
        print(f"({shown:,} of {plural(reader.count_rows(), 'row')})")
    else:
        print(f"(first {plural(shown, 'row')})" if shown == args.n
              else f"({plural(shown, 'row')}, the whole stream)")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK


def cmd_validate(args) -> int:
    from .cli_validate import render_validation, validate_input
    inp = _json_input(args, lambda path, message: {
        "path": path, "valid": False, "problems": [{"where": "the input", "message": message}]})
    result = validate_input(inp, full=args.full)
    if args.json:
        import json
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(render_validation(result))
    return EXIT_OK if result["valid"] else EXIT_INVALID_DATA


def cmd_convert(args) -> int:
    from .cli_convert import convert, input_codec
    from .cli_inspect import Input, output_kind
    kind = _output_kind(output_kind, args.dst, args.to)
    if args.alkaid and kind != "file":
        raise UsageError("--alkaid sets the file magic: it needs a file output "
                         "(.arrow or --to file)")
    _refuse_same_file(args.src, args.dst)
    inp = Input(args.src)
    compression = _compression(args.compression, lambda: input_codec(inp))
    summary = convert(inp, args.dst, kind, compression, args.batch_rows,
                      _column_list(args.columns), b"ALKAID1" if args.alkaid else b"ARROW1",
                      args.progress)
    _report(args, f"wrote {_label(args.dst)}: {_summary_line(summary)}")
    return EXIT_OK


def cmd_recover(args) -> int:
    from .cli_convert import input_codec, recover
    from .cli_inspect import Input, output_kind
    _refuse_same_file(args.src, args.dst)
    inp = Input(args.src)
    try:
        kind = output_kind(args.dst, args.to)
    except ValueError:
        kind = inp.kind                       # same format as the input by default
    compression = _compression(args.compression, lambda: input_codec(inp))
    summary = recover(inp, args.dst, kind, compression, args.progress)
    what = f"wrote {_label(args.dst)}: {_summary_line(summary)}"
    if summary["stopped_at"] is not None:
        ending = f"stopped at byte {summary['stopped_at']:,}: {summary['reason']}"
    elif not summary["complete"]:
        ending = "the input ends between two messages, without an end-of-stream marker"
    elif inp.kind == "file" and not summary["has_footer"]:
        ending = "the data section is whole but the footer is missing"
    else:
        ending = "the input was complete"
    _report(args, f"{what}; {ending}")
    return EXIT_OK


def cmd_bench(args) -> int:
    from .cli_bench import render_bench, run_bench
    results = run_bench(rows=args.rows, batch_rows=args.batch_rows, repeat=args.repeat,
                        with_import=not args.no_import, log=sys.stderr if args.verbose else None)
    if args.json:
        import json
        print(json.dumps(results, indent=2))
    else:
        print(render_bench(results))
    return EXIT_OK


# -- helpers ---------------------------------------------------------------------------------------

def _column_list(text: str | None) -> list | None:
    if text is None:
        return None
    names = [c.strip() for c in text.split(",")]
    if not all(names):
        raise UsageError(f"--columns needs comma-separated names, got {text!r}")
    return names


def _projected_schema(schema, columns):
    from .cli_convert import select_in_order_schema
    return select_in_order_schema(schema, columns)


def _output_kind(output_kind, dst, to):
    try:
        return output_kind(dst, to)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _compression(choice: str | None, detect):
    if choice is None:
        return detect()                       # keep the input's codec
    return None if choice == "none" else choice


def _refuse_same_file(src: str, dst: str):
    if src != "-" and dst != "-" and os.path.exists(dst) and os.path.samefile(src, dst):
        raise UsageError(f"the output {dst!r} is the input: write to another path")


def _label(path: str) -> str:
    return "<stdout>" if path == "-" else path


def _about(target: str | None, what: str) -> str:
    """`<input>: what` for problems of the input data."""
    if target is None:
        return what
    return f"{'<stdin>' if target == '-' else target}: {what}"


def _summary_line(s: dict) -> str:
    kind = f"file (magic {s['magic']})" if s["format"] == "file" else "stream"
    return (f"{kind}, {s['batches']:,} record batch{'es' if s['batches'] != 1 else ''}, "
            f"{s['rows']:,} row{'s' if s['rows'] != 1 else ''}, compression {s['compression']}")


def _report(args, line: str):
    if args.quiet:
        return
    # with the data on stdout, the summary goes to stderr
    print(line, file=sys.stderr if args.dst == "-" else sys.stdout)


# -- parser ----------------------------------------------------------------------------------------

def _whole_number(minimum: int):
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
    from . import __version__
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
    p.add_argument("file", help="an Arrow IPC file or stream ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.add_argument("--max-batches", type=_whole_number(0), default=10, metavar="N",
                   help="batches listed one by one in the text report (default 10)")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("head", parents=[common], help="print the first rows as a table",
                       description="The first rows as an aligned table.")
    p.add_argument("file", help="an Arrow IPC file or stream ('-' for stdin)")
    p.add_argument("-n", type=_whole_number(0), default=10, metavar="N",
                   help="rows to show (default 10)")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")
    p.add_argument("--max-width", type=_whole_number(4), default=40, metavar="W",
                   help="cut cells longer than W characters (default 40)")
    p.set_defaults(func=cmd_head)

    p = sub.add_parser("validate", parents=[common], help="check a file or stream",
                       description="Exit status 0 when the input is valid; otherwise every "
                                   "problem found, with where, and exit status 1.")
    p.add_argument("file", help="an Arrow IPC file or stream ('-' for stdin)")
    p.add_argument("--full", action="store_true",
                   help="also check values (UTF-8, decimal precision, map keys), not only "
                        "the structure")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_validate)

    def output_options(p):
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
    p.add_argument("src", help="an Arrow IPC file or stream ('-' for stdin)")
    p.add_argument("dst", help="the output path ('-' for stdout)")
    output_options(p)
    p.add_argument("--batch-rows", type=_whole_number(1), metavar="N",
                   help="regroup rows into N-row batches")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")
    p.add_argument("--alkaid", action="store_true", help="write the file magic 'ALKAID1'")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("recover", parents=[common],
                       help="rescue the complete batches of a damaged input",
                       description="Copy every complete record batch of a truncated stream or "
                                   "footer-less file to DST, stopping at the first damaged "
                                   "message.")
    p.add_argument("src", help="a truncated Arrow IPC stream or file ('-' for stdin)")
    p.add_argument("dst", help="the output path ('-' for stdout); default format: as SRC")
    output_options(p)
    p.set_defaults(func=cmd_recover)

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
    p.set_defaults(func=cmd_bench)
    return parser


# -- entry point -----------------------------------------------------------------------------------

def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__


def main(argv: list | None = None) -> int:
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
        return args.func(args)
    except BaseException as e:        # noqa: B902 - every failure becomes a status and one line
        return _failure(e, command, target, debug)


def _failure(e: BaseException, command: str, target: str | None, debug: bool) -> int:
    from .errors import ArrowInvalid, ArrowNotImplementedError
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
    if isinstance(e, UsageError):
        status, what = EXIT_USAGE, "error"
        command = getattr(e, "prog", command)
    elif isinstance(e, ArrowNotImplementedError):
        status, what = EXIT_UNSUPPORTED, _about(target, "unsupported")
    elif isinstance(e, ArrowInvalid):
        status, what = EXIT_INVALID_DATA, _about(target, "invalid data")
        if "truncated" in str(e) and command != "arrowipc recover" and target not in (None, "-"):
            e = (f"{_one_line(e)} (to copy every complete batch: "
                 f"arrowipc recover {target} <output>)")
    elif isinstance(e, OSError):
        status, what = EXIT_IO, "I/O error"
        if e.filename is not None and e.strerror:
            e = f"{e.filename}: {e.strerror}"
    else:
        status, what = EXIT_INTERNAL, "internal error (run again with --debug and report it)"
    print(f"{command}: {what}: {_one_line(e)}", file=sys.stderr)
    return status


if __name__ == "__main__":            # pragma: no cover
    sys.exit(main())
