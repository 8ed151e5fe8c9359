#!/usr/bin/env python
"""Plot the arrowipc / pyarrow time ratio of every benchmark group as a PNG.

    python bench/plot_ratios.py REPORT.json [-o docs/benchmarks.png] [--title TEXT]

REPORT.json is either a pytest-benchmark report (`python bench/ratios.py --keep-json PATH`, or
`pytest bench --benchmark-enable --benchmark-json=PATH`), the report of `python bench/users.py
--json PATH`, or the output of `arrowipc bench --json`. One horizontal bar per group, on a log scale around 1: left of the line
arrowipc is faster, right of it pyarrow is. The Markdown ratio table of the same report is printed
on stdout, ready for docs/benchmarks.md. Needs matplotlib.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ratios import (_format_seconds, _group_sort_key, markdown_table,  # noqa: E402
                    medians_by_group, statistic_of)


def groups_of(report: dict) -> dict:
    """{group: {lib: median seconds}} from either report format."""
    if "benchmarks" in report:                     # pytest-benchmark
        return medians_by_group(report)
    if "results" in report:                        # arrowipc bench --json
        return {op: dict(libs) for op, libs in report["results"].items()}
    raise ValueError("not a pytest-benchmark report nor `arrowipc bench --json` output")


def ratios_of(groups: dict) -> list:
    """[(group, ratio)] for groups timed by both libraries, in the table's order."""
    out = []
    for group in sorted(groups, key=_group_sort_key):
        ours, theirs = groups[group].get("arrowipc"), groups[group].get("pyarrow")
        if ours is not None and theirs:
            out.append((group, ours / theirs))
    return out


def plot(groups: dict, path: Path, title: str, subtitle: str = "") -> None:
    import matplotlib
    matplotlib.use("Agg")                          # no display needed
    import matplotlib.pyplot as plt

    pairs = ratios_of(groups)
    if not pairs:
        raise ValueError("no group was timed by both arrowipc and pyarrow")
    names = [g for g, _ in pairs][::-1]            # first group at the top
    values = [r for _, r in pairs][::-1]
    colors = ["#2e7d32" if r <= 1 else "#c62828" for r in values]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(names) + 1.6), dpi=110)
    ax.barh(names, [math.log10(r) for r in values], color=colors, height=0.6)
    ax.axvline(0, color="black", linewidth=1)
    span = max(abs(math.log10(r)) for r in values) * 1.35 + 0.05
    ax.set_xlim(-span, span)
    # half decades while they fit, whole decades on a wide axis (labels would overlap)
    candidates = ((0.001, 0.01, 0.1, 1, 10, 100, 1000) if span > 2
                  else (0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100))
    ticks = [t for t in candidates if abs(math.log10(t)) <= span]
    ax.set_xticks([math.log10(t) for t in ticks], [f"{t:g}×" for t in ticks])
    for y, r in enumerate(values):
        x = math.log10(r)
        ax.text(x + (0.01 if x >= 0 else -0.01), y, f" {r:.2f} " if r >= 0.01 else f" {r:.1g} ",
                va="center",
                ha="left" if x >= 0 else "right", fontsize=8)
    ax.set_xlabel("arrowipc time / pyarrow time (log scale; left of 1: arrowipc is faster)")
    ax.set_title(title + (f"\n{subtitle}" if subtitle else ""), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def machine_summary(report: dict) -> str:
    """A short line saying where the numbers come from."""
    if "versions" in report:                       # arrowipc bench --json
        v = report["versions"]
        return (f"{report.get('rows', 0):,} rows, {report.get('cpus')} CPUs, "
                + ", ".join(f"{k} {v[k]}" for k in ("arrowipc", "pyarrow", "python") if k in v))
    machine = report.get("machine_info", {})
    versions = machine.get("versions", {})
    parts = [f"{machine['cpu'].get('count', '')} CPUs".strip()] if machine.get("cpu") else []
    parts += [f"{k} {versions[k]}" for k in ("arrowipc", "pyarrow") if k in versions]
    if machine.get("python_version"):
        parts.append(f"Python {machine['python_version']}")
    return ", ".join(p for p in parts if p)


def simple_table(groups: dict) -> str:
    lines = ["| operation | arrowipc | pyarrow | ratio (arrowipc ÷ pyarrow) |",
             "| --- | ---: | ---: | ---: |"]
    for group in sorted(groups, key=_group_sort_key):
        ours, theirs = groups[group].get("arrowipc"), groups[group].get("pyarrow")
        ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "—"
        lines.append(f"| {group} | {_format_seconds(ours)} | {_format_seconds(theirs)} | {ratio} |")
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="benchmark report (JSON)")
    parser.add_argument("-o", "--output", type=Path,
                        default=HERE.parent / "docs" / "benchmarks.png",
                        help="PNG to write (default: docs/benchmarks.png)")
    parser.add_argument("--title", default="arrowipc vs pyarrow: time ratio per benchmark group")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("matplotlib") is None:
        print("plot_ratios: matplotlib is needed (pip install matplotlib)", file=sys.stderr)
        return 2
    report = json.loads(args.report.read_text())
    groups = groups_of(report)
    plot(groups, args.output, args.title, machine_summary(report))
    table = (markdown_table(groups, statistic_of(report)) if "benchmarks" in report
             else simple_table(groups))
    print(table)
    print(f"\nwrote {os.path.relpath(args.output)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
