#!/usr/bin/env python3
"""Charts of mgi_workloads runs: PNG files from the JSON it writes.

    plot.py OUTDIR RUN.json [RUN.json ...]     (or a directory of them)
    plot.py --table RUN.json [...]             text table only (no matplotlib)

Writes into OUTDIR:
  exchange_<gpus>gpu.png   throughput (GB/s of input) per variant, for the
                           exchange and the communication patterns (many2one,
                           one2many, p2p: GB/s of bytes that left a GPU)
  <op>_<gpus>gpu.png       GroupBy / Join time per variant, split into
                           partition / transfer / compute (median of iters)
  zipf_<op>_<gpus>gpu.png  throughput (exchange) or time (groupby, join)
                           against the Zipf theta, one line per variant
Unverified results are drawn hatched and labelled so: a chart never hides
that a variant's answer was wrong.  Variants the program reported absent
(e.g. mgi until channels have GPU endpoints) are listed under each chart.
"""
import json
import os
import statistics
import sys

plt = None  # matplotlib, imported only when charts are drawn

VARIANT_ORDER = ["mgi", "nccl", "ucx", "ucx_mgi", "peer", "single"]
PATTERNS = ["exchange", "many2one", "one2many", "p2p"]
PHASES = ["partition_ms", "transfer_ms", "compute_ms"]


def load(paths):
    runs = []
    for p in paths:
        files = ([os.path.join(p, f) for f in sorted(os.listdir(p))
                  if f.endswith(".json")] if os.path.isdir(p) else [p])
        for f in files:
            with open(f) as fh:
                run = json.load(fh)
            if run.get("program") != "mgi_workloads":
                continue
            run["_file"] = f
            runs.append(run)
    return runs


def vkey(v):
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else 99, v)


def med(res, key):
    return statistics.median(it[key] for it in res["iters"])


def rate(res, op):
    """GB/s: input bytes for exchange, bytes that left a GPU for patterns."""
    b = res["input_bytes"] if op == "exchange" else res["cross_bytes"]
    return [b / 1e6 / max(it["total_ms"], 1e-9) for it in res["iters"]]


def absent_note(runs):
    seen = {}
    for r in runs:
        for a in r.get("absent", []):
            seen[a["variant"]] = a["why"]
    return "; ".join("%s absent: %s" % kv for kv in sorted(seen.items()))


def finish(fig, ax, runs, out):
    note = absent_note(runs)
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.04 if note else 0, 1, 1))
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print("wrote", out)


def title(run, what):
    """Two lines: what, then the machine and data (one line was wider than
    a chart of one bar group)"""
    z = run.get("zipf")
    return "%s\n%d x %s, SF %.2f%s" % (
        what, run["gpus"], run.get("device", "GPU"), run["sf"],
        "" if z is None else ", Zipf %.2f" % z)


def plot_throughput(runs, out_dir):
    """Patterns without Zipf: one bar group per op, bars per variant."""
    by_gpus = {}
    for r in runs:
        if r["op"] in PATTERNS and r.get("zipf") is None:
            by_gpus.setdefault(r["gpus"], []).append(r)
    outs = []
    for gpus, rs in sorted(by_gpus.items()):
        ops = [op for op in PATTERNS if any(r["op"] == op for r in rs)]
        variants = sorted({res["variant"] for r in rs for res in r["results"]},
                          key=vkey)
        fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(ops), 4))
        width = 0.8 / max(len(variants), 1)
        for j, v in enumerate(variants):
            for i, op in enumerate(ops):
                for r in rs:
                    for res in r["results"]:
                        if r["op"] != op or res["variant"] != v:
                            continue
                        g = rate(res, op)
                        m = statistics.median(g)
                        x = i + (j - (len(variants) - 1) / 2) * width
                        ax.bar(x, m, width, color="C%d" % j,
                               hatch=None if res["verified"] else "xx",
                               yerr=[[m - min(g)], [max(g) - m]],
                               label=v if i == 0 else None, capsize=2)
                        ax.text(x, m, "%.0f" % m, ha="center", va="bottom",
                                fontsize=7)
                        if not res["verified"]:
                            ax.text(x, m / 2, "WRONG", rotation=90,
                                    ha="center", fontsize=7)
        ax.set_xticks(range(len(ops)))
        ax.set_xticklabels(ops)
        ax.set_ylabel("GB/s (exchange: input; patterns: across GPUs)")
        ax.set_title(title(rs[0], "Exchange and patterns"), fontsize=10)
        ax.legend(fontsize=8)
        out = os.path.join(out_dir, "exchange_%dgpu.png" % gpus)
        finish(fig, ax, rs, out)
        outs.append(out)
    return outs


def plot_times(runs, out_dir):
    """GroupBy / Join without Zipf: stacked phases per variant."""
    outs = []
    for op in ["groupby", "join"]:
        by_gpus = {}
        for r in runs:
            if r["op"] == op and r.get("zipf") is None:
                by_gpus.setdefault(r["gpus"], []).append(r)
        for gpus, rs in sorted(by_gpus.items()):
            results = sorted([res for r in rs for res in r["results"]],
                             key=lambda res: vkey(res["variant"]))
            fig, ax = plt.subplots(figsize=(2 + 1.2 * len(results), 4))
            for i, res in enumerate(results):
                bottom = 0.0
                for k, ph in enumerate(PHASES):
                    h = med(res, ph)
                    ax.bar(i, h, 0.6, bottom=bottom, color="C%d" % k,
                           hatch=None if res["verified"] else "xx",
                           label=ph.replace("_ms", "") if i == 0 else None)
                    bottom += h
                total = med(res, "total_ms")
                ax.plot([i - 0.3, i + 0.3], [total, total], "k-", lw=1)
                ax.text(i, max(total, bottom), "%.1f ms%s" % (
                    total, "" if res["verified"] else " WRONG"),
                    ha="center", va="bottom", fontsize=7)
            ax.set_xticks(range(len(results)))
            ax.set_xticklabels([res["variant"] for res in results])
            ax.set_ylabel("time (ms), lower is better; line: end to end")
            ax.set_title(title(rs[0], op.capitalize()), fontsize=10)
            ax.legend(fontsize=8)
            out = os.path.join(out_dir, "%s_%dgpu.png" % (op, gpus))
            finish(fig, ax, rs, out)
            outs.append(out)
    return outs


def plot_zipf(runs, out_dir):
    outs = []
    groups = {}
    for r in runs:
        if r.get("zipf") is not None:
            groups.setdefault((r["op"], r["gpus"]), []).append(r)
    for (op, gpus), rs in sorted(groups.items()):
        series = {}
        for r in rs:
            for res in r["results"]:
                y = (statistics.median(rate(res, op)) if op in PATTERNS
                     else med(res, "total_ms"))
                series.setdefault(res["variant"], []).append(
                    (r["zipf"], y, res["verified"]))
        fig, ax = plt.subplots(figsize=(5, 4))
        for j, v in enumerate(sorted(series, key=vkey)):
            pts = sorted(series[v])
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                    color="C%d" % j, label=v)
            for p in pts:
                if not p[2]:
                    ax.annotate("WRONG", (p[0], p[1]), fontsize=7)
        ax.set_xlabel("Zipf theta of the partition key")
        ax.set_ylabel("GB/s" if op in PATTERNS else "time (ms)")
        ax.set_title("%s under skew, %d GPUs" % (op, gpus))
        ax.legend(fontsize=8)
        out = os.path.join(out_dir, "zipf_%s_%dgpu.png" % (op, gpus))
        finish(fig, ax, rs, out)
        outs.append(out)
    return outs


def table(runs, out=sys.stdout):
    """One row per (op, zipf, variant): the figure that matters, and its
    ratio against nccl and ucx of the same run (>1: better than them)."""
    sets = sorted({r.get("mgi_settings", "") for r in runs})
    print("# libmgi settings: %s" % ("; ".join(s or "none" for s in sets)
                                     if sets != [""] else
                                     "none (no MGI_* set: its defaults)"),
          file=out)
    print("%-9s %-5s %-8s %10s %8s %8s %s" % (
        "op", "zipf", "variant", "value", "x_nccl", "x_ucx", "verified"),
        file=out)
    for r in sorted(runs, key=lambda r: (r["op"], r.get("zipf") or -1)):
        op = r["op"]
        vals = {}
        for res in r["results"]:
            if op in PATTERNS:
                vals[res["variant"]] = statistics.median(rate(res, op))
            else:
                vals[res["variant"]] = med(res, "total_ms")
        for res in sorted(r["results"], key=lambda x: vkey(x["variant"])):
            v = res["variant"]
            cells = []
            for base in ["nccl", "ucx"]:
                if base not in vals or base == v or not vals[v]:
                    cells.append("-")
                elif op in PATTERNS:
                    cells.append("%.2f" % (vals[v] / vals[base]))
                else:
                    cells.append("%.2f" % (vals[base] / vals[v]))
            unit = "GB/s" if op in PATTERNS else "ms"
            z = r.get("zipf")
            print("%-9s %-5s %-8s %7.1f%-4s %8s %8s %s" % (
                op, "-" if z is None else "%.1f" % z, v, vals[v], unit,
                cells[0], cells[1], "yes" if res["verified"] else "NO"),
                file=out)
        for a in r.get("absent", []):
            z = r.get("zipf")
            print("%-9s %-5s %-8s absent: %s" % (
                op, "-" if z is None else "%.1f" % z, a["variant"], a["why"]),
                file=out)


def main(argv):
    global plt
    if len(argv) >= 3 and argv[1] == "--table":
        runs = load(argv[2:])
        table(runs)
        return 0 if runs else 1
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    plt = pyplot
    out_dir = argv[1]
    os.makedirs(out_dir, exist_ok=True)
    runs = load(argv[2:])
    if not runs:
        print("plot.py: no mgi_workloads JSON in %s" % argv[2:],
              file=sys.stderr)
        return 1
    outs = (plot_throughput(runs, out_dir) + plot_times(runs, out_dir) +
            plot_zipf(runs, out_dir))
    with open(os.path.join(out_dir, "ratios.txt"), "w") as fh:
        table(runs, fh)
    return 0 if outs else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
