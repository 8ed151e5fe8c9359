#!/usr/bin/env python
"""Print the arrowipc / pyarrow median-time ratio for every benchmark group.

Without an argument it runs the suite itself
(`python -m pytest bench --benchmark-enable --benchmark-json=<tmp>`) from the
repository root; given a JSON file written by pytest-benchmark it only reads it.
Output is a Markdown table; a ratio below 1 means arrowipc was faster. It also reads the report
of `bench/users.py --json` (what users do, both libraries interleaved, best of the rounds).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LIBS = ("arrowipc", "pyarrow")
OPERATION_ORDER = ("write_stream", "write_file", "read_stream_bytes", "read_file_path", "iterate_batches")
DATASET_ORDER = ("wide5m", "small1k", "cols1000")


def run_suite(json_path: Path, pytest_args: list[str]) -> int:
    command = [
        sys.executable, "-m", "pytest", "bench", "--benchmark-enable",
        f"--benchmark-json={json_path}", "--benchmark-quiet", "-q", *pytest_args,
    ]
    print("running:", " ".join(command), file=sys.stderr)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    # Pytest's own report goes to stderr so stdout holds only the table.
    return subprocess.run(command, cwd=REPO_ROOT, env=env, stdout=sys.stderr).returncode


def statistic_of(report: dict) -> str:
    """The figure a report compares: "median" (pytest-benchmark), or the "min" (best of the
    interleaved rounds) that bench/users.py names in its report."""
    return report.get("stat", "median")


def medians_by_group(report: dict) -> dict[str, dict[str, float]]:
    """{group: {lib: seconds}} from a pytest-benchmark-shaped JSON report (the median, or the
    statistic the report names)."""
    stat = statistic_of(report)
    groups: dict[str, dict[str, float]] = {}
    for bench in report.get("benchmarks", []):
        lib = bench.get("extra_info", {}).get("lib")
        if lib is None:  # fall back to the parametrize id, e.g. "wide5m-arrowipc"
            lib = bench.get("param", "").rsplit("-", 1)[-1]
        groups.setdefault(bench["group"], {})[lib] = bench["stats"][stat]
    return groups


def _group_sort_key(group: str):
    operation, _, dataset = group.rpartition("-")
    op_rank = OPERATION_ORDER.index(operation) if operation in OPERATION_ORDER else len(OPERATION_ORDER)
    ds_rank = DATASET_ORDER.index(dataset) if dataset in DATASET_ORDER else len(DATASET_ORDER)
    return (ds_rank, op_rank, group)


def _format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def markdown_table(groups: dict[str, dict[str, float]], stat: str = "median") -> str:
    label = "best" if stat == "min" else stat
    lines = [
        f"| group | arrowipc {label} | pyarrow {label} | ratio (arrowipc ÷ pyarrow) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for group in sorted(groups, key=_group_sort_key):
        ours, theirs = groups[group].get("arrowipc"), groups[group].get("pyarrow")
        ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "—"
        lines.append(f"| {group} | {_format_seconds(ours)} | {_format_seconds(theirs)} | {ratio} |")
    return "\n".join(lines)


def environment_line(report: dict) -> str:
    machine = report.get("machine_info", {})
    versions = machine.get("versions", {})
    nproc = machine.get("nproc") or os.cpu_count()
    python = machine.get("python_version") or platform.python_version()
    parts = [f"nproc={nproc}", f"cpu={machine.get('cpu', {}).get('brand_raw', platform.processor() or 'unknown')}",
             f"python={python}"]
    parts += [f"{name}={version}" for name, version in versions.items()]
    if "pytest-benchmark" not in versions and report.get("version"):
        parts.append(f"pytest-benchmark={report['version']}")
    if report.get("datetime"):
        parts.append(f"run={report['datetime']}")
    return "Machine: " + ", ".join(parts)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Extra arguments after `--` go to pytest, e.g. `-- -k wide5m`.",
    )
    parser.add_argument("json", nargs="?", type=Path,
                        help="existing pytest-benchmark JSON to read instead of running the suite")
    parser.add_argument("--keep-json", type=Path, metavar="PATH",
                        help="when running the suite, also save its JSON report here")
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first `--` belongs to pytest, untouched by argparse.
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.pytest_args = argv[split + 1:]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pytest_status = 0
    if args.json is not None:
        if args.pytest_args:
            print("pytest arguments are ignored when reading an existing JSON", file=sys.stderr)
        report = json.loads(args.json.read_text())
    else:
        with tempfile.TemporaryDirectory() as tmp:
            json_path = args.keep_json.resolve() if args.keep_json else Path(tmp) / "bench.json"
            pytest_status = run_suite(json_path, args.pytest_args)
            if not json_path.exists():
                print(f"pytest wrote no benchmark report (exit status {pytest_status})", file=sys.stderr)
                return pytest_status or 1
            report = json.loads(json_path.read_text())

    print(markdown_table(medians_by_group(report), statistic_of(report)))
    print()
    print(environment_line(report))
    if pytest_status:
        # Still print what ran (e.g. only the pyarrow half) but report the failure.
        print(f"note: pytest exited with status {pytest_status}; groups with '—' did not complete",
              file=sys.stderr)
    return pytest_status


if __name__ == "__main__":
    sys.exit(main())
