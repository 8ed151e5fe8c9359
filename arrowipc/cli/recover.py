"""`arrowipc recover`: copy every complete batch of a truncated stream or a file without its footer.

The scan is arrowipc.ipc.recover's (one message at a time, stopping at the first that is cut short
or fails the structural checks); the batches go out through the convert command's writer as they
come, so memory stays at about one batch.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Iterator

from ..ipc.format import FILE_MAGIC
from .common import EXIT_OK, Input, output_kind
from .convert import (Progress, compression_choice, input_codec, refuse_same_file, report,
                      replacements_as_deltas, summary_line, write_batches)

if TYPE_CHECKING:
    from ..table import RecordBatch


__all__ = ["recover", "run"]


def recover(inp: Input, dst: str, kind: str, compression: str | None,
            progress: bool | None) -> dict[str, Any]:
    """Write the complete batches of `inp` to `dst`; a summary dict of what was written and why
    the scan stopped."""
    from ..ipc.recover import RescuedBatches
    rescued = RescuedBatches(inp.source)
    bar = Progress.auto(inp.size, "recovering", progress)
    pairs: Iterator[tuple[RecordBatch, Any]] = ((item.batch, item.custom_metadata)
                                                for item in rescued)
    if kind == "file" and inp.kind == "stream":
        pairs = replacements_as_deltas(pairs, rescued.schema)
    summary = write_batches(rescued.schema, pairs, dst, kind, compression, None,
                            FILE_MAGIC, bar, lambda: rescued.position)
    failed = rescued.stopped_at is not None
    summary.update(complete=rescued.report.complete, stopped_at=rescued.stopped_at,
                   reason=rescued.report.error if failed else None, has_footer=rescued.has_footer)
    return summary


def run(args: argparse.Namespace) -> int:
    """`arrowipc recover` with parsed arguments; returns the exit status."""
    refuse_same_file(args.src, args.dst)
    inp = Input(args.src)
    try:
        kind = output_kind(args.dst, args.to)
    except ValueError:
        kind = inp.kind                       # same format as the input by default
    compression = compression_choice(args.compression, lambda: input_codec(inp))
    summary = recover(inp, args.dst, kind, compression, args.progress)
    what = f"wrote {'<stdout>' if args.dst == '-' else args.dst}: {summary_line(summary)}"
    if summary["stopped_at"] is not None:
        ending = f"stopped at byte {summary['stopped_at']:,}: {summary['reason']}"
    elif not summary["complete"]:
        ending = "the input ends between two messages, without an end-of-stream marker"
    elif inp.kind == "file" and not summary["has_footer"]:
        ending = "the data section is whole but the footer is missing"
    else:
        ending = "the input was complete"
    report(args, f"{what}; {ending}")
    return EXIT_OK
