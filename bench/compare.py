#!/usr/bin/env python3
"""Compare two benchmark results and flag the figures that dropped.

    compare.py [--band FRACTION] [--all] BASE NEW

BASE and NEW are results of the same kind:
  * bench/perftest_compare.sh's output (its last line, "JSON [...]"; a file
    holding only the JSON array, or several runs' output one after the
    other, works too): one figure per test and size for cuda_mgi, cuda_ipc
    and their ratio;
  * the workloads harness's output (bench/workloads/run.sh's OUTDIR, or one
    mgi_workloads --json file): one figure per operation, Zipf theta and
    variant (GB/s for the Exchange and the patterns, ms for GroupBy and
    Join, as plot.py --table gives them), and each variant's ratio to NCCL.

A figure dropped when it is worse than BASE by more than the band: a rate
(GB/s, a ratio) below BASE x (1 - band), a time (us, ms) above
BASE x (1 + band).  The figures of this project are checked: cuda_mgi and
its ratio to cuda_ipc; the mgi and ucx_mgi variants and their ratio to
NCCL.  The baselines (cuda_ipc, nccl, ucx, peer, single) are printed beside
them, so that a machine that was slower as a whole shows, but flagged only
with --all.  A checked figure missing from NEW, or a workload answer that
was not verified, counts as a drop.

The default band, 10 %, is just wider than what repeated invocations
spread over on one kind of machine (2 x H200, bench/RESULTS.md): with the
same build, perftest's bandwidth medians from 4 MiB up within 3 % and its
latency medians within 9.4 %; the mgi variant's Exchange 1071.8-1156.2
GB/s (7.9 %) and its ratio to NCCL 1.39-1.50 over the invocations since
landing buffers (five of them with one build).  A narrower band flags noise.  Sizes below 4 MiB (the 1 MiB
runs of both transports spread over 90-109 GB/s on UCX 1.13), UCX over
cuda_mgi's patterns and UCX-only (636-760 GB/s) spread more: judge a drop
there by the runs that perftest_compare.sh prints beside each median, or
by a second invocation.

Exit status: 0 nothing dropped; 1 a checked figure dropped, is missing or
came from an answer not verified; 2 bad input (unreadable, results of
different kinds or of another GPU count or data size, nothing in common).
"""
import argparse
import json
import os
import statistics
import sys

PATTERNS = ("exchange", "many2one", "one2many", "p2p")
OWN_PERF = ("cuda_mgi", "ratio")
OWN_WL = ("mgi", "ucx_mgi")
VARIANT_ORDER = ("mgi", "nccl", "ucx", "ucx_mgi", "peer", "single")


class Figure:
    """One number: `higher` says whether more is better; `own` whether it
    is this project's (checked) or a baseline's (shown)."""

    def __init__(self, value, unit, higher, own):
        self.value = value
        self.unit = unit
        self.higher = higher
        self.own = own
        self.unverified = False


def vkey(v):
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else 99, v)


def size_name(n):
    for unit, b in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= b and n % b == 0:
            return "%d %s" % (n // b, unit)
    return "%d B" % n


def perftest_figures(entries):
    figs = {}
    for e in entries:
        lat = e.get("unit") == "us"
        name = "%s %s" % (e["test"], size_name(int(e["size"])))
        for tl in ("cuda_mgi", "cuda_ipc"):
            if isinstance(e.get(tl), (int, float)):
                figs["%s %s" % (name, tl)] = Figure(
                    float(e[tl]), e.get("unit", ""), not lat, tl in OWN_PERF)
        if isinstance(e.get("ratio"), (int, float)):
            # cuda_mgi / cuda_ipc: for a latency, lower is better
            figs["%s ratio" % name] = Figure(float(e["ratio"]), "x", not lat,
                                             True)
    return figs


def read_perftest(path):
    """-> (figures, what ran: the UCX version line)"""
    with open(path) as fh:
        text = fh.read()
    if text.lstrip().startswith("["):
        return perftest_figures(json.loads(text)), "perftest"
    entries = []
    ucx = set()
    for line in text.splitlines():
        at = line.find("JSON [")
        if at >= 0:
            entries.extend(json.loads(line[at + len("JSON "):]))
        at = line.find("# UCX: ")
        if at >= 0:
            ucx.add(line[at + 2:].strip())
    if not entries:
        raise ValueError("%s: no \"JSON [...]\" line of perftest_compare.sh"
                         % path)
    return perftest_figures(entries), "perftest, " + (
        ", ".join(sorted(ucx)) or "UCX version not given")


def wl_value(res, op):
    """plot.py --table's figure: the median over the iterations of GB/s
    (input bytes for the Exchange, bytes that left a GPU for the patterns)
    or of the time in ms."""
    if op in PATTERNS:
        b = res["input_bytes"] if op == "exchange" else res["cross_bytes"]
        return statistics.median(b / 1e6 / max(it["total_ms"], 1e-9)
                                 for it in res["iters"]), "GB/s", True
    return statistics.median(it["total_ms"] for it in res["iters"]), \
        "ms", False


def wl_figures(runs):
    figs = {}
    for run in sorted(runs, key=lambda r: (
            r["op"], -1 if r.get("zipf") is None else r["zipf"])):
        op = run["op"]
        z = run.get("zipf")
        where = op if z is None else "%s zipf %.1f" % (op, z)
        vals = {}
        for res in sorted(run["results"], key=lambda r: vkey(r["variant"])):
            v = res["variant"]
            value, unit, higher = wl_value(res, op)
            vals[v] = (value, higher)
            fig = Figure(value, unit, higher, v in OWN_WL)
            # a wrong answer fails however fast it came
            fig.unverified = not res.get("verified", False)
            figs["%s %s" % (where, v)] = fig
        if "nccl" in vals:
            base, higher = vals["nccl"]
            for v, (value, _) in vals.items():
                if v == "nccl" or value <= 0 or base <= 0:
                    continue
                x = value / base if higher else base / value
                figs["%s %s x_nccl" % (where, v)] = Figure(
                    x, "x", True, v in OWN_WL)
    return figs


def read_workloads(path):
    """-> (figures, what ran: GPUs, device and scale factor)"""
    files = ([os.path.join(path, f) for f in sorted(os.listdir(path))
              if f.endswith(".json")] if os.path.isdir(path) else [path])
    runs = []
    for f in files:
        with open(f) as fh:
            run = json.load(fh)
        if isinstance(run, dict) and run.get("program") == "mgi_workloads":
            runs.append(run)
    if not runs:
        raise ValueError("%s: no mgi_workloads JSON" % path)
    about = sorted({"workloads, %d x %s, sf %.2f" % (
        r["gpus"], r.get("device", "?"), r.get("sf", 0)) for r in runs})
    return wl_figures(runs), "; ".join(about)


def read(path):
    """-> (kind, figures, what ran)"""
    if os.path.isdir(path):
        return ("workloads",) + read_workloads(path)
    with open(path) as fh:
        head = fh.read(4096).lstrip()
    if head.startswith("{"):
        return ("workloads",) + read_workloads(path)
    return ("perftest",) + read_perftest(path)


def fmt(x):
    return "%.3f" % x if abs(x) < 10 else "%.2f" % x


def compare(base, new, band, check_all, out):
    """Print one line per figure of BASE; return how many checked figures
    dropped, are missing from NEW, and came from a wrong answer."""
    count = {"DROP": 0, "MISSING": 0, "NOT VERIFIED": 0}
    width = max([len(k) for k in base] + [6])
    print("%-*s %10s %10s %8s  %s" % (width, "figure", "base", "new",
                                      "change", "unit"), file=out)
    for key in base:
        b = base[key]
        checked = b.own or check_all
        n = new.get(key)
        if n is None:
            note = "MISSING" if checked else "missing (baseline)"
            shown = (fmt(b.value), "-", "-")
        else:
            change = (n.value / b.value - 1) if b.value else 0.0
            worse = -change if b.higher else change
            shown = (fmt(b.value), fmt(n.value), "%+7.1f%%" % (100 * change))
            note = ""
            if n.unverified and checked:
                note = "NOT VERIFIED"
            elif worse > band:
                note = "DROP" if checked else "baseline worse"
            elif -worse > band:
                note = "better"
        if note in count:
            count[note] += 1
        print(("%-*s %10s %10s %8s  %-4s  %s" % (
            (width, key) + shown + (b.unit, note))).rstrip(), file=out)
    return count


def main(argv):
    ap = argparse.ArgumentParser(
        description="Flag the figures of NEW that dropped below BASE by "
                    "more than a noise band (see the top of this file).")
    ap.add_argument("base", help="the reference result")
    ap.add_argument("new", help="the result to check")
    ap.add_argument("--band", type=float, default=0.10,
                    help="noise band, a fraction of BASE (default 0.10)")
    ap.add_argument("--all", action="store_true",
                    help="flag the baselines' drops too")
    args = ap.parse_args(argv[1:])
    if not 0 <= args.band < 1:
        print("compare.py: --band %s: not a fraction from 0 to 1"
              % args.band, file=sys.stderr)
        return 2
    try:
        bkind, base, babout = read(args.base)
        nkind, new, nabout = read(args.new)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("compare.py: %s" % e, file=sys.stderr)
        return 2
    if bkind != nkind:
        print("compare.py: %s is %s output, %s is %s output" % (
            args.base, bkind, args.new, nkind), file=sys.stderr)
        return 2
    if bkind == "workloads" and babout != nabout:
        # another GPU count or data size gives other figures, not a drop
        print("compare.py: not the same workload: %s against %s" % (
            babout, nabout), file=sys.stderr)
        return 2
    if not set(base) & set(new):
        print("compare.py: no figure in common", file=sys.stderr)
        return 2
    print("base: %s (%s)" % (args.base, babout))
    print("new:  %s (%s)" % (args.new, nabout))
    count = compare(base, new, args.band, args.all, sys.stdout)
    print("compare: %d figures, %d dropped by more than %g %%, %d missing, "
          "%d not verified" % (len(base), count["DROP"], 100 * args.band,
                               count["MISSING"], count["NOT VERIFIED"]))
    return 1 if sum(count.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
