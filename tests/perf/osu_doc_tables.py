#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The one-node OSU tables of docs/performance.md, from what run_bench_osu.sh printed.

Reads the log of `run_bench_osu.sh BUILD SRC TARBALL node RUNS` (its two "BENCH_OSU {...}" lines,
bound and not bound) and prints, in Markdown, the summary table (per benchmark: the range over
message sizes of the median paired ratio, and the sizes where Strata is behind) and the
per-size table of each message-rate benchmark. Usage: osu_doc_tables.py LOG
"""
import json
import re
import sys

RATES = ("put_mr", "put_mr_nb", "get_mr_nb")
FIRST_RATE_SIZE = 512  # the per-size tables start here; the summary and the plots have the rest


def size_name(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def rate_name(rate):
    for unit, scale in (("M/s", 1e6), ("k/s", 1e3)):
        if rate >= scale:
            return f"{rate / scale:.3g} {unit}"
    return f"{rate:.3g}/s"


def split(metric):
    """(benchmark, size or None, is a rate) of a figure's name."""
    m = re.fullmatch(r"(.+?)_(\d+)_(us|per_s)", metric)
    if m:
        return m.group(1), int(m.group(2)), m.group(3) == "per_s"
    return metric.removesuffix("_us"), None, False


def figures(log):
    """{bind: {metric: figure}} from the log's BENCH_OSU lines."""
    out = {}
    for line in open(log, encoding="utf-8"):
        if line.startswith("BENCH_OSU "):
            record = json.loads(line[len("BENCH_OSU "):])
            out[record["bind"]] = {k: v for k, v in record.items() if isinstance(v, dict)}
    return out


def summary_cell(metrics):
    ratios = [(size, f["to_openmpi"], rate) for (size, rate), f in sorted(metrics.items())]
    lo = min(r for _, r, _ in ratios)
    hi = max(r for _, r, _ in ratios)
    cell = f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}"
    behind = [f"{size_name(s)} {r:.3f}" for s, r, rate in ratios
              if s is not None and (r < 1 if rate else r > 1)]
    return cell + (f" (behind: {', '.join(behind)})" if behind else "")


def main(log):
    by_bind = figures(log)
    binds = ("core", "none")
    missing = [b for b in binds if b not in by_bind]
    if missing:
        sys.exit(f"osu_doc_tables.py: no BENCH_OSU line for bind {', '.join(missing)} in {log}")
    grouped = {}
    for bind in binds:
        for metric, figure in by_bind[bind].items():
            bench, size, rate = split(metric)
            if bench.startswith("atomics") or figure.get("to_openmpi") is None:
                continue
            grouped.setdefault(bench, {}).setdefault(bind, {})[(size, rate)] = figure
    print("| Benchmark | bound | not bound |\n|---|---|---|")
    for bench in sorted(grouped):
        cells = [summary_cell(grouped[bench][b]) for b in binds if b in grouped[bench]]
        if len(cells) == 2:
            print(f"| `{bench}` | {cells[0]} | {cells[1]} |")
    for bench in RATES:
        if bench not in grouped:
            continue
        print(f"\n`{bench}`:\n")
        print("| Size | Strata, bound | Open MPI, bound | ratio (range) | Strata, not bound "
              "| Open MPI, not bound | ratio (range) | limit |")
        print("|---|---|---|---|---|---|---|---|")
        sizes = sorted(s for s, _ in grouped[bench]["core"] if s >= FIRST_RATE_SIZE)
        for size in sizes:
            row = [size_name(size)]
            for bind in binds:
                f = grouped[bench][bind][(size, True)]
                row += [rate_name(f["strata"]), rate_name(f["openmpi"]),
                        f"{f['to_openmpi']:.3f} ({f['to_openmpi_lowest']:.3f}-"
                        f"{f['to_openmpi_highest']:.3f})"]
            row.append(rate_name(grouped[bench]["core"][(size, True)]["floor"]))
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    main(sys.argv[1])
