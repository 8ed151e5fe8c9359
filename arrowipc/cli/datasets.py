"""Directories and globs as inputs of `arrowipc inspect`, `validate`, `head` and `convert`.

A directory is read as a dataset (arrowipc.dataset: walked recursively, Spark and Hive side files
skipped, `col=value` directories as partition columns); a glob names the files it matches.
`inspect` and `validate` report each file and then the total, `head` reads rows across the
files in order, and `convert` merges them into one file or stream.
"""
from __future__ import annotations

import argparse
import glob
import os
from typing import Any

from .common import EXIT_INVALID_DATA, EXIT_OK, Input, column_list, plural

__all__ = ["dataset_files", "run_convert", "run_head", "run_inspect", "run_validate"]


def is_dataset_name(name: str) -> bool:
    """Whether a command-line input names a dataset: a directory, or a glob that is not the
    name of an existing file."""
    if name == "-" or os.path.isfile(name):
        return False
    return os.path.isdir(name) or any(c in name for c in "*?[")


def dataset_files(name: str) -> list[str] | None:
    """The files of the dataset `name` names (None when it names one file or stdin)."""
    if not is_dataset_name(name):
        return None
    from ..dataset.discovery import discover
    if not os.path.isdir(name) and not glob.glob(name):
        raise FileNotFoundError(2, "No such file or directory (the glob matches nothing)", name)
    _, found = discover(name)
    if not found:
        if os.path.isdir(name):
            raise IsADirectoryError(21, "Is a directory, and holds no data files (names "
                                        "starting with '.' or '_', and Spark's side files, are "
                                        "skipped)", name)
        raise FileNotFoundError(2, "No such file or directory (the glob matches no data file)",
                                name)
    return [f.path for f in found]


def _dataset(name: str) -> Any:
    from .. import dataset as ds
    return ds.dataset(name, partitioning="hive" if os.path.isdir(name) else None)


def run_inspect(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc inspect DIR`: each file's report, then the totals."""
    from ..errors import ArrowInvalid
    from .inspect import describe, render_text
    reports = [describe(Input(path)) for path in files]
    total = {"files": len(files),
             "record_batches": sum(r["num_record_batches"] for r in reports),
             "rows": sum(r["num_rows"] for r in reports),
             "size_bytes": sum(r["size_bytes"] for r in reports),
             "files_with_errors": sum(1 for r in reports if r["error"])}
    if args.json:
        import json
        print(json.dumps({"dataset": args.file, "files": reports, "total": total}, indent=2,
                         ensure_ascii=False))
    else:
        for r in reports:
            print(render_text(r, max_batches=args.max_batches))
            print()
        print(f"total: {plural(total['files'], 'file')}, "
              f"{plural(total['record_batches'], 'record batch')}, "
              f"{plural(total['rows'], 'row')}, {total['size_bytes']:,} bytes")
    bad = [r for r in reports if r["error"]]
    if bad:
        raise ArrowInvalid(f"{bad[0]['path']}: {bad[0]['error']}")
    return EXIT_OK


def run_validate(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc validate DIR`: each file checked, then how many are valid."""
    from .validate import render_validation, validate_input
    results = [validate_input(Input(path), full=args.full) for path in files]
    invalid = [r for r in results if not r["valid"]]
    batches = sum(r["record_batches"] for r in results)
    rows = sum(r["rows"] for r in results)
    if args.json:
        import json
        print(json.dumps({"dataset": args.file, "valid": not invalid, "files": results,
                          "invalid_files": len(invalid), "record_batches": batches,
                          "rows": rows}, indent=2, ensure_ascii=False))
    else:
        for r in results:
            print(render_validation(r))
        if invalid:
            print(f"invalid: {args.file}: {len(invalid)} of {plural(len(results), 'file')} "
                  f"invalid")
        else:
            print(f"valid: {args.file}: {plural(len(results), 'file')}, "
                  f"{plural(batches, 'record batch')}, {plural(rows, 'row')}")
    return EXIT_INVALID_DATA if invalid else EXIT_OK


def run_head(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc head DIR`: the first rows across the files, in the dataset's order."""
    import sys
    from .head import render_rows
    columns = column_list(args.columns)
    data = _dataset(args.file)
    table = data.head(args.n, columns=columns)
    lines, notes = render_rows(table.schema, table.to_batches(), args.max_width)
    print("\n".join(lines))
    print(f"({table.num_rows:,} of {plural(data.count_rows(), 'row')} in "
          f"{plural(len(files), 'file')})")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK


def run_convert(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc convert DIR OUT`: the dataset's files merged into one file or stream."""
    from .convert import (input_codec, output_kind_or_usage_error, regroup, report,
                          summary_line, write_batches)
    from .common import UsageError
    kind = output_kind_or_usage_error(args.dst, args.to)
    if args.alkaid:
        raise UsageError("--alkaid is for one input file, not a dataset")
    compression = (input_codec(Input(files[0])) if args.compression is None
                   else None if args.compression == "none" else args.compression)
    data = _dataset(args.src)
    scanner = data.scanner(columns=column_list(args.columns))
    pairs: Any = ((b, None) for b in scanner.to_batches())
    if args.batch_rows:
        pairs = regroup(pairs, scanner.projected_schema, args.batch_rows)
    summary = write_batches(scanner.projected_schema, pairs, args.dst, kind, compression)
    report(args, f"wrote {'<stdout>' if args.dst == '-' else args.dst} from "
                 f"{plural(len(files), 'file')}: {summary_line(summary)}")
    return EXIT_OK
