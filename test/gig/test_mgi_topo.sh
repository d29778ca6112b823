#!/bin/sh
#
# mgi_topo's commands and options on synthetic topologies and files.
#
top_builddir=${top_builddir:-../..}
topo="$top_builddir/src/tools/mgi_topo/mgi_topo"
here=$(dirname "$0")
dir=$(mktemp -d /tmp/mgi_topo_test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0

ok() {      # name, command...
    name=$1; shift
    if "$@" > "$dir/out" 2>&1; then echo "PASS: $name"; else
        echo "FAIL: $name"; cat "$dir/out"; fail=1; fi
}
bad() {     # name, command... (must fail)
    name=$1; shift
    if "$@" > "$dir/out" 2>&1; then
        echo "FAIL: $name succeeded"; cat "$dir/out"; fail=1
    else echo "PASS: $name"; fi
}
has() {     # name, pattern (in the last output)
    if grep -q -- "$2" "$dir/out"; then echo "PASS: $1"; else
        echo "FAIL: $1 (no '$2')"; cat "$dir/out"; fail=1; fi
}

ok  "list" "$topo" --list
has "list names dgx1" "^dgx1 "
has "list names cluster:N" "^cluster:<N>"
ok  "graph" "$topo" --synthetic dgx-a100 graph
has "graph counts" "15 vertices (8 GPU, 2 CPU, 1 NVSwitch, 4 PCIe"
ok  "paths by ordinal" "$topo" --synthetic hgx-h200 paths 0 1
has "paths output" "gpu0 -> gpu1: 2 path(s), 533.00 GB/s"
ok  "paths by sets" "$topo" --synthetic h100-mesh4 paths 0,1 2,3
has "paths sets" "gpu1 -> gpu3: 4 path(s)"
ok  "paths by name" "$topo" --synthetic multi-rdma paths s0.gpu0 s1.gpu1
has "network path" "network"
ok  "fwd all" "$topo" --synthetic dgx1 fwd all all
has "fwd tables" "forwarding table of gpu7"
ok  "nics" "$topo" --topo "$here/2x8x4.topo" nics
has "nics: GPU 5 of host 1 by its switch's NIC" "^s1gpu5 .*server 1: NIC s1nic2$"
has "nics: GPU 0 of host 0" "^s0gpu0 .*server 0: NIC s0nic0$"
ok  "dot" "$topo" --synthetic dgx1 dot
has "dot digraph" "^digraph gig"
ok  "write" "$topo" --synthetic dgx1 --write "$dir/dgx1.topo" graph
ok  "read back" "$topo" --topo "$dir/dgx1.topo" paths 0 5
has "read back paths" "gpu0 -> gpu5: .* 162.50 GB/s"
UCX_CUDA_MGI_TOPO_FILE="$dir/dgx1.topo" ok "env file" "$topo" graph
has "env file used" "origin\|GIG 'synthetic dgx1'"
bad "unknown synthetic" "$topo" --synthetic dgx-9000
bad "unknown vertex" "$topo" --synthetic dgx1 paths gpu0 gpu9
bad "missing file" "$topo" --topo "$dir/none.topo"
printf 'gig-topology 1\nvertex a gpu\n' > "$dir/bad.topo"
bad "malformed file" "$topo" --topo "$dir/bad.topo"
has "malformed file message" "bad.topo:2: vertex 'a': missing server"
bad "bad command" "$topo" --synthetic dgx1 frobnicate
bad "bad calibrate size" "$topo" --calibrate=0
exit $fail
