#!/usr/bin/env python3
"""Layers call only downward.

Reads the symbols of the built objects (nm) of libmgi, the transport and
the planner, and fails on a call from a file to a function of a file in a
higher layer that is not in KNOWN below.  KNOWN lists the upward calls the
code has today, to be removed one by one (a removed one must leave the
list: the check fails on a stale entry too, so the list stays true).

Usage: check_layers.py [BUILDDIR]    (the built tree; default
                                      $MGI_BUILDDIR, which make check sets)
Exit: 0 pass, 1 an upward call not in KNOWN or a stale KNOWN entry,
      77 the objects are not built.
"""
import glob
import os
import subprocess
import sys

# Each component's files, lowest layer first.  A file may call files of its
# own layer or below.
LAYERS = {
    "libmgi (src/ucp_ext)": [
        ["mgi_util", "mgi_config",     # the settings: read by the context
         "mgi_route_deps"],             # cycles of relays' waits
        ["mgi_bootstrap"],
        ["mgi_peers"],
        ["mgi_gpu_rt"],                 # CUDA memory, pools, IPC, peer access
        ["mgi_route"],
        ["mgi_ucp"],                    # the UCP contexts' settings
        ["mgi_rail"],                   # an endpoint's own NIC
        ["mgi_gpu_direct"],             # direct rings, landing buffers
        ["mgi_sorter"],                 # the GPU sorter and its tables
        ["mgi_sorter_host"],
        ["mgi_mover_cuda"],             # the mover's copies in the process
        ["mgi_mover"],
        ["mgi_endpoint"],
        ["mgi_ch_delete"],              # a channel's delete and free
        ["mgi_channel", "mgi_ch_data",  # the two peer APIs: a channel's
         "mgi_region"],                 # create and data calls, regions
        ["mgi_launch"],                 # launch helpers: ask a channel
        ["mgi_context"],
    ],
    "cuda_mgi (src/uct/cuda_mgi)": [
        ["gig"],                        # the planner, all its files
        ["cuda_mgi_config"],            # the settings' range checks
        ["cuda_mgi_ipc"],
        ["cuda_mgi_md"],
        ["cuda_mgi_share", "cuda_mgi_plan"],
        ["cuda_mgi_stripe"],
        ["cuda_mgi_iface"],
        ["cuda_mgi_ep"],
    ],
}

# An interface names its endpoints' functions in its operations table, as
# every UCX transport does (uct_iface_ops_t): a table, not a call.
OPS_TABLE = {("cuda_mgi_iface", "cuda_mgi_ep")}

# Upward calls that exist today (from, to, symbol): debt to remove.
KNOWN = set()   # none left


def file_of(obj):
    name = os.path.basename(obj)
    for prefix in ("libmgi_la-", "libuct_cuda_mgi_la-", "libgig_la-"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    name = name.split(".")[0]
    return "gig" if name.startswith("gig_") else name


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBR":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used


def main():
    top = (sys.argv[1] if len(sys.argv) > 1 else
           os.environ.get("MGI_BUILDDIR", "."))
    objs = (glob.glob(os.path.join(top, "src/ucp_ext/.libs/*.o")) +
            glob.glob(os.path.join(top, "src/uct/cuda_mgi/.libs/*.o")) +
            glob.glob(os.path.join(top, "src/uct/cuda_mgi/gig/.libs/*.o")))
    if not objs:
        print("SKIP: no built objects under %s (build the tree first)" % top)
        return 77
    level, comp = {}, {}
    for cname, layers in LAYERS.items():
        for i, files in enumerate(layers):
            for f in files:
                level[f], comp[f] = i, cname
    owner, uses = {}, {}
    for obj in objs:
        f = file_of(obj)
        if f not in level:
            print("FAIL: %s (%s) is in no layer: add it to LAYERS in %s"
                  % (f, obj, sys.argv[0]))
            return 1
        d, u = symbols(obj)
        for s in d:
            owner[s] = f
        uses.setdefault(f, set()).update(u)
    found, bad = set(), []
    for f, used in sorted(uses.items()):
        for s in sorted(used):
            g = owner.get(s)
            if (g is None or g == f or comp[g] != comp[f] or
                    level[g] <= level[f] or (f, g) in OPS_TABLE):
                continue
            found.add((f, g, s))
            if (f, g, s) not in KNOWN:
                bad.append("%s calls %s of %s, a higher layer" % (f, s, g))
    stale = sorted(k for k in KNOWN - found if k[0] in uses)
    for line in bad:
        print("FAIL: " + line)
    for k in stale:
        print("FAIL: KNOWN lists %s -> %s (%s), which is gone: remove it"
              % k)
    print("%s: %d objects, %d known upward calls left, %d new, %d stale"
          % ("FAIL" if bad or stale else "PASS", len(objs), len(found),
             len(bad), len(stale)))
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
