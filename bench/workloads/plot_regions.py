#!/usr/bin/env python3
"""Charts of the region workloads: PNG files from mgi_mgg's and
mgi_proact's printed lines.

    plot_regions.py OUTDIR FILE [FILE ...]

Each FILE holds the output of one or more runs (their `mgg variant=...`,
`proact alone ...` and `proact variant=...` lines; other lines are
skipped). A measurement seen in several runs is drawn as the median.
Writes into OUTDIR:
  mgg_<gpus>gpu.png     time per variant for each graph (scale) and
                        dimension seen, log scale
  proact_work<W>.png    time to the consumer's end against the tile size,
                        a line per variant, with the producer's compute
                        alone and the copy alone for that work
A measurement whose answer was wrong (checked=NO) is drawn hatched and
labelled so.
"""
import math
import os
import re
import statistics
import sys

MGG_ORDER = ["cache", "region", "proxy", "nccl", "uvm", "single"]
PROACT_ORDER = ["push", "bulk", "stores"]
FIELD = re.compile(r"(\w+)=(\S+)")


def fields(line):
    return dict(FIELD.findall(line))


def load(paths):
    """(mgg, proact, alone): measurements keyed by their configuration,
    each a list over the runs that had it ((ms, checked); alone: the
    producer's (compute_ms, copy_ms) by work)"""
    mgg, proact, alone = {}, {}, {}
    for path in paths:
        pending = None     # a run's alone line, before its variant lines
        with open(path) as f:
            for line in f:
                if line.startswith("mgg variant="):
                    f_ = fields(line)
                    key = (int(f_["gpus"]), int(f_["nv"]), int(f_["dim"]),
                           f_["variant"])
                    mgg.setdefault(key, []).append(
                        (float(f_["ms"]), f_.get("checked") == "yes"))
                elif line.startswith("proact alone"):
                    f_ = fields(line)
                    pending = (float(f_["compute_ms"]), float(f_["copy_ms"]))
                elif line.startswith("proact variant="):
                    f_ = fields(line)
                    work = int(f_["work"])
                    if pending is not None:
                        alone.setdefault(work, []).append(pending)
                        pending = None
                    key = (work, f_["variant"], int(f_["tile"]))
                    proact.setdefault(key, []).append(
                        (float(f_["ms"]), f_.get("checked") == "yes"))
    return mgg, proact, alone


def med(values):
    return statistics.median(v for v, _ in values), all(ok for _, ok in
                                                        values)


def finish(plt, fig, ax, what, ncol, out):
    """Title, legend, and the chart written to out (returned)"""
    ax.set_title(what + ": lower is faster")
    ax.legend(fontsize=8, ncol=ncol)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_mgg(plt, mgg, out_dir):
    written = []
    for gpus in sorted({k[0] for k in mgg}):
        graphs = sorted({(k[1], k[2]) for k in mgg if k[0] == gpus})
        seen = {k[3] for k in mgg if k[0] == gpus}
        variants = ([v for v in MGG_ORDER if v in seen] +
                    sorted(seen - set(MGG_ORDER)))
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(graphs)), 4.2))
        width = 0.8 / max(1, len(variants))
        for i, v in enumerate(variants):
            xs, ys, bad = [], [], []
            for g, (nv, dim) in enumerate(graphs):
                vals = mgg.get((gpus, nv, dim, v))
                if not vals:
                    continue
                ms, ok = med(vals)
                xs.append(g + (i - (len(variants) - 1) / 2) * width)
                ys.append(ms)
                bad.append(not ok)
            bars = ax.bar(xs, ys, width, label=v)
            for b, wrong in zip(bars, bad):
                if wrong:
                    b.set_hatch("//")
                    b.set_label(v + " (WRONG answer)")
        ax.set_xticks(range(len(graphs)))
        ax.set_xticklabels(["2^%d vertices\ndim %d" % (round(math.log2(nv)),
                                                        dim)
                            for nv, dim in graphs])
        ax.set_yscale("log")
        ax.set_ylabel("ms (median of runs), log scale")
        written.append(finish(plt, fig, ax, "MGG neighbour aggregation, "
                              "%d GPUs" % gpus, 2,
                              os.path.join(out_dir, "mgg_%dgpu.png" % gpus)))
    return written


def plot_proact(plt, proact, alone, out_dir):
    written = []
    for work in sorted({k[0] for k in proact}):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        seen = {k[1] for k in proact if k[0] == work}
        for v in ([v for v in PROACT_ORDER if v in seen] +
                  sorted(seen - set(PROACT_ORDER))):
            tiles = sorted(k[2] for k in proact if k[:2] == (work, v))
            pts = [med(proact[(work, v, t)]) for t in tiles]
            ax.plot([t / 1024 for t in tiles], [p[0] for p in pts],
                    marker="o", label=v)
            for t, (ms, ok) in zip(tiles, pts):
                if not ok:
                    ax.annotate("WRONG", (t / 1024, ms), color="red")
        if alone.get(work):
            compute = statistics.median(c for c, _ in alone[work])
            copy = statistics.median(c for _, c in alone[work])
            ax.axhline(compute, color="grey", linestyle="--",
                       label="producer's compute alone")
            ax.axhline(copy, color="grey", linestyle=":",
                       label="copy alone")
        ax.set_xscale("log", base=2)
        ticks = sorted({k[2] for k in proact if k[0] == work})
        ax.set_xticks([t / 1024 for t in ticks])
        ax.set_xticklabels(["%d KiB" % (t // 1024) if t < 1 << 20 else
                            "%d MiB" % (t >> 20) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("tile")
        ax.set_ylabel("ms to the consumer's end (median of runs)")
        written.append(finish(plt, fig, ax, "PROACT producer / consumer, "
                              "work %d" % work, 1,
                              os.path.join(out_dir,
                                           "proact_work%d.png" % work)))
    return written


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out_dir, paths = argv[1], argv[2:]
    for p in paths:
        if not os.path.isfile(p):
            sys.stderr.write("plot_regions.py: %s: no such file\n" % p)
            return 2
    mgg, proact, alone = load(paths)
    if not mgg and not proact:
        sys.stderr.write("plot_regions.py: no mgg or proact lines in %s\n"
                         % " ".join(paths))
        return 1
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out_dir, exist_ok=True)
    for out in plot_mgg(plt, mgg, out_dir) + plot_proact(plt, proact, alone,
                                                          out_dir):
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
