#!/usr/bin/env python3
"""Turn one GPU bench run into BENCHMARKS.md rows and a throughput plot.

    python3 scripts/bench_table.py RESULTS_DIR [--plot PNG | --no-plot] [--family NAME]

RESULTS_DIR holds what stage/run-bench.sh wrote to $OUT: cuprim-bench.txt
(criterion's bencher lines, median ns per call), cub.csv (cub_bench.cu),
and optionally peers.txt (peers.py), gpu.txt and jit.txt.

Each cuprim bench `<op>/<elem>/<n>` is paired with an anchor from the same
run: CUB's row `<op>_<elem>` at the same n when cub_bench has one, else the
device copy `memcpy_f32` of the same n (the anchor for data movement). The
ratio is cuprim time / anchor time (below 1 is faster). "% of copy BW" is
the bytes the primitive must move over its time, against memcpy_f32's
8n bytes over its time at that n. Bytes come from CUB's own GB/s column
when a CUB row pairs, else from BYTES_PER_ELEMENT below; ops without
either get no bandwidth column.

The plot (matplotlib) shows GB/s against n for the ops of one family
(default: the transform family) beside memcpy; it is written to
benchmarks/plots/bench-<family>.png unless --plot or --no-plot says otherwise.
The raw files of a run BENCHMARKS.md quotes are kept in benchmarks/runs/<name>/.
"""

import argparse
import csv
import os
import re
import sys
from collections import defaultdict

ELEM_BYTES = {"u8": 1, "i8": 1, "f16": 2, "bf16": 2, "u32": 4, "i32": 4, "f32": 4, "u64": 8, "i64": 8, "f64": 8}

# Bytes an op must move per element, from the element size s (index or key
# types named in the elem field, e.g. "u8_u32", add their own size).
BYTES_PER_ELEMENT = {
    "fill": lambda s: s,
    "copy_from": lambda s: 2 * s,
    "gather_identity": lambda s: 2 * s + 4,
    "gather_random": lambda s: 2 * s + 4,
    "transform_square": lambda s: 2 * s,
    "adjacent_difference": lambda s: 2 * s,
    "reduce_sum": lambda s: s,
    "reduce_max": lambda s: s,
    "sum_to_host": lambda s: s,
    "scan_incl_sum": lambda s: 2 * s,
    "scan_excl_sum": lambda s: 2 * s,
    "histogram_even256": lambda s: s,
    "histogram_even256_onebin": lambda s: s,
    "histogram_even256_normal": lambda s: s,
    "histogram_edges256": lambda s: s,
    "histogram_even65536": lambda s: s,
}

FAMILIES = {
    "transform": ["fill", "copy_from", "gather_identity", "gather_random", "transform_square", "adjacent_difference"],
    "reduce": ["reduce_sum", "reduce_max", "sum_to_host", "collective"],
    "scan": ["scan_incl_sum", "scan_excl_sum", "copy_if_half", "scan_by_key"],
    "histogram": ["histogram_even256", "histogram_even256_onebin", "histogram_even256_normal", "histogram_edges256", "histogram_even65536"],
    "sort": ["sort_keys", "sort_pairs"],
    "knn": ["knn_build", "knn_query_k8_q1000000", "knn_query_k8_q100000", "knn_query_asgiven_k8_q1000000", "knn_brute_k8_q10000"],
}

# kNN rows (op, elem, n points) -> (anchor label, anchor ms): cudaKDTree's
# times on H100 from the issue / DESIGN.md (not re-measured in the run), or
# a peers.py torch row of the same run (label "peer:<key>").
KNN_ANCHORS = {
    ("knn_build", "3d_f32", 1000000): ("cudaKDTree build (H100, DESIGN.md)", 9.44),
    ("knn_build", "3d_f32", 10000000): ("cudaKDTree build (H100, DESIGN.md)", 75.8),
    ("knn_query_k8_q1000000", "3d_f32", 1000000): ("cudaKDTree query (H100, DESIGN.md)", 2.49),
    ("knn_query_k8_q1000000", "3d_f32", 10000000): ("cudaKDTree query (H100, DESIGN.md)", 5.11),
    ("knn_query_k8_q100000", "3d_f32", 1000000): ("peer:torch brute kNN q=100000 d=3 k=8", None),
    ("knn_brute_k8_q10000", "16d_f32", 1000000): ("peer:torch brute kNN q=10000 d=16 k=8", None),
}

# Peer rows of peers.py worth showing beside a cuprim op: (op, elem) -> label prefix.
PEERS = {
    ("copy_from", "f32"): "copy f32",
    ("reduce_sum", "f32"): "torch sum f32",
    ("reduce_sum", "f64"): "torch sum f64",
    ("scan_incl_sum", "f32"): "torch cumsum f32",
    ("histogram_even256", "f32"): "torch histc f32 256 bins",
}

BENCH_LINE = re.compile(r"^test (\S+) \.\.\. bench:\s+([\d,]+) (\w+)/iter")
HOST_LINE = re.compile(r"^host_overhead (\S+) (.*)$")
PEER_LINE = re.compile(r"^(.+?) n=(\d+): ([\d.]+) ms")
# peers.py's kNN rows: "torch brute kNN m=1000000 q=100000 d=3 k=8: 1830.00 ms ..."
KNN_PEER_LINE = re.compile(r"^(torch brute kNN) m=(\d+) (q=\d+ d=\d+ k=\d+): ([\d.]+) ms")
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def read_cuprim(path):
    rows, host = [], []
    for line in open(path):
        m = BENCH_LINE.match(line.strip())
        if m:
            ident, value, unit = m.groups()
            ms = float(value.replace(",", "")) * UNIT_NS.get(unit, 1.0) / 1e6
            parts = ident.split("/")
            if len(parts) == 3 and parts[2].isdigit():
                rows.append((parts[0], parts[1], int(parts[2]), ms))
            else:
                rows.append((ident, "", 0, ms))
            continue
        m = HOST_LINE.match(line.strip())
        if m:
            fields = dict(kv.split("=", 1) for kv in m.group(2).split() if "=" in kv)
            host.append((m.group(1), fields))
    return rows, host


def read_cub(path):
    table = {}
    if not os.path.exists(path):
        return table
    with open(path) as f:
        for row in csv.DictReader(f):
            try:
                n, ms = int(row["n"]), float(row["ms"])
            except (KeyError, TypeError, ValueError):
                continue
            rate = row.get("GBps_or_Gkeys")
            table[(row["op"], n)] = (ms, float(rate) if rate else None)
    return table


def read_peers(path):
    table = {}
    if not os.path.exists(path):
        return table
    for line in open(path):
        m = KNN_PEER_LINE.match(line.strip())
        if m:
            table[("%s %s" % (m.group(1), m.group(3)), int(m.group(2)))] = float(m.group(4))
            continue
        m = PEER_LINE.match(line.strip())
        if m:
            table[(m.group(1), int(m.group(2)))] = float(m.group(3))
    return table


def elem_size(elem):
    """Bytes of the element (the last type named), plus those of any key type before it."""
    names = re.findall(r"(bf16|f16|u8|i8|u32|i32|f32|u64|i64|f64)", elem)
    return [ELEM_BYTES[t] for t in names]


def own_bytes(op, elem, n, cub_row):
    if cub_row and cub_row[1] and not op.startswith("sort"):
        ms, gbps = cub_row
        return gbps * 1e6 * ms  # CUB's own byte count
    sizes = elem_size(elem)
    if op in ("sort_keys", "sort_pairs") and sizes:
        # LSD radix sort, 8-bit digits over the whole key: one read of the
        # keys for the histogram, then per pass a read and a write of keys
        # (and values).
        k = sizes[0]
        v = sizes[1] if op == "sort_pairs" and len(sizes) > 1 else 0
        return n * (k + k * 2 * (k + v))
    if op in BYTES_PER_ELEMENT and sizes:
        return n * (BYTES_PER_ELEMENT[op](sizes[-1]) + sum(sizes[:-1]))
    return None


def fmt_time(ms):
    if ms is None:
        return ""
    if ms < 1.0:
        return "%.1f us" % (ms * 1e3) if ms >= 0.01 else "%.2f us" % (ms * 1e3)
    return "%.3f ms" % ms


def pow2(n):
    return "2^%d" % (n.bit_length() - 1) if n and n & (n - 1) == 0 else str(n)


def build_rows(cuprim, cub, peers):
    out = []
    for op, elem, n, ms in cuprim:
        if not n:
            continue
        cub_row = cub.get(("%s_%s" % (op, elem), n))
        memcpy = cub.get(("memcpy_f32", n))
        knn = KNN_ANCHORS.get((op, elem, n))
        if knn:
            label, anchor_ms = knn
            if label.startswith("peer:"):
                label = label[5:]
                anchor_ms = peers.get((label, n))
            anchor_name = label if anchor_ms is not None else ""
        elif cub_row:
            anchor_name, anchor_ms = "CUB %s_%s" % (op, elem), cub_row[0]
        elif memcpy:
            anchor_name, anchor_ms = "memcpy f32", memcpy[0]
        else:
            anchor_name, anchor_ms = "", None
        nbytes = own_bytes(op, elem, n, cub_row)
        pct = None
        if nbytes and memcpy:
            copy_bw = 8.0 * n / memcpy[0]  # bytes per ms
            pct = 100.0 * (nbytes / ms) / copy_bw
        peer_label = PEERS.get((op, elem))
        peer_ms = peers.get((peer_label, n)) if peer_label else None
        out.append(
            {
                "op": op,
                "elem": elem,
                "n": n,
                "ms": ms,
                "anchor": anchor_name,
                "anchor_ms": anchor_ms,
                "ratio": ms / anchor_ms if anchor_ms else None,
                "gbps": nbytes / ms / 1e6 if nbytes else None,
                "pct": pct,
                "peer": peer_label if peer_ms is not None else "",
                "peer_ms": peer_ms,
            }
        )
    return out


def print_markdown(rows, host, results):
    gpu = os.path.join(results, "gpu.txt")
    if os.path.exists(gpu):
        lines = [l.strip() for l in open(gpu) if l.strip()]
        if len(lines) > 1:
            print("GPU (nvidia-smi name, clocks.sm, clocks.mem): %s" % lines[1])
        print()
    print("| op | elem | n | cuprim | anchor | anchor time | cuprim / anchor | GB/s | % of copy BW | peer | peer time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
            % (
                r["op"],
                r["elem"],
                pow2(r["n"]),
                fmt_time(r["ms"]),
                r["anchor"],
                fmt_time(r["anchor_ms"]),
                ("%.2f" % r["ratio"] if r["ratio"] >= 0.01 else "%.2g" % r["ratio"]) if r["ratio"] else "",
                "%.0f" % r["gbps"] if r["gbps"] else "",
                "%.0f%%" % r["pct"] if r["pct"] is not None else "",
                r["peer"],
                fmt_time(r["peer_ms"]),
            )
        )
    if host:
        print()
        print("| host cost of one cached call | median | p10 | p90 | calls | target |")
        print("|---|---|---|---|---|---|")
        for name, f in host:
            print(
                "| %s | %s us | %s us | %s us | %s | < %s us |"
                % (name, f.get("median_us", ""), f.get("p10_us", ""), f.get("p90_us", ""), f.get("calls", ""), f.get("target_us", ""))
            )
    jit = os.path.join(results, "jit.txt")
    if os.path.exists(jit):
        run = None
        found = False
        for line in open(jit):
            line = line.strip()
            if line.startswith("run="):
                run = line.split()[0][4:]
                continue
            m = re.match(r"jit_timing step=(\S+) ms=([\d.]+) source=(\S+)(.*)", line)
            if m:
                if not found:
                    print()
                    print("| first call | process | ms | kernel from | verdict |")
                    print("|---|---|---|---|---|")
                    found = True
                print("| %s | %s | %s | %s | %s |" % (m.group(1), run or "", m.group(2), m.group(3), m.group(4).strip()))


def plot(rows, cub, family, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench_table: matplotlib is not installed; no plot (pip install matplotlib)", file=sys.stderr)
        return False
    ops = FAMILIES.get(family)
    series = defaultdict(list)
    anchors = defaultdict(list)
    # Sorts move a data-dependent number of bytes: keys per second instead,
    # with CUB's rows of the same ops dashed beside them.
    keys_per_s = family == "sort"
    for r in rows:
        if ops is not None and r["op"] not in ops:
            continue
        label = "%s %s" % (r["op"], r["elem"])
        if keys_per_s:
            series[label].append((r["n"], r["n"] / r["ms"] / 1e6))
            if r["anchor_ms"] and r["anchor"].startswith("CUB"):
                anchors["CUB " + label].append((r["n"], r["n"] / r["anchor_ms"] / 1e6))
        elif r["gbps"]:
            series[label].append((r["n"], r["gbps"]))
    memcpy = [] if keys_per_s else sorted((n, 8.0 * n / ms / 1e6) for (op, n), (ms, _) in cub.items() if op == "memcpy_f32")
    if not series:
        print("bench_table: nothing of family %r to plot" % family, file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = {}
    for label, points in sorted(series.items()):
        points.sort()
        line = ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        colors[label] = line[0].get_color()
    for label, points in sorted(anchors.items()):
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], "--", marker="x", color=colors.get(label[4:]), label=label)
    if memcpy:
        ax.plot([p[0] for p in memcpy], [p[1] for p in memcpy], "k--", marker="s", label="memcpy f32 (CUB run)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements n")
    ax.set_ylabel("Gkeys/s" if keys_per_s else "GB/s (bytes the op must move)")
    ax.set_title("cuprim %s family" % family)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print("bench_table: wrote %s" % path, file=sys.stderr)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default=os.environ.get("OUT", "."), help="folder with cuprim-bench.txt, cub.csv, peers.txt")
    parser.add_argument("--family", default="transform", help="ops to plot: %s (knn has no GB/s: rows only)" % ", ".join(FAMILIES))
    parser.add_argument("--plot", help="PNG to write (default: benchmarks/plots/bench-<family>.png)")
    parser.add_argument("--no-plot", action="store_true", help="print the rows only")
    args = parser.parse_args()

    bench = os.path.join(args.results, "cuprim-bench.txt")
    if not os.path.exists(bench):
        sys.exit("bench_table: %s not found" % bench)
    cuprim, host = read_cuprim(bench)
    cub = read_cub(os.path.join(args.results, "cub.csv"))
    peers = read_peers(os.path.join(args.results, "peers.txt"))
    if not cub:
        print("bench_table: no cub.csv rows; anchor columns stay empty", file=sys.stderr)
    rows = build_rows(cuprim, cub, peers)
    print_markdown(rows, host, args.results)
    if not args.no_plot:
        path = args.plot
        if not path:
            repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            plots = os.path.join(repo, "benchmarks", "plots")
            os.makedirs(plots, exist_ok=True)
            path = os.path.join(plots, "bench-%s.png" % args.family)
        plot(rows, cub, args.family, path)


if __name__ == "__main__":
    main()
