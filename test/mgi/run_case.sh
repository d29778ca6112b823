#!/bin/sh
# Run one multi-process test case: cases/*.ch runs mgi_channel_test,
# cases/*.rg mgi_region_test. The file holds key=value words: np (ranks),
# tls (UCX_TLS), args (the test program's arguments), timeout (seconds for
# the whole run), oob (ranks forked with the test's socketpair OOB
# allgather instead of mgi_launch; channels), compile (the device header
# compiled with nvcc instead: device_compile_check.cu, with a host run of
# its host-and-device arithmetic, or region_device_compile_check.cu), topo
# (a topology file of topo/ for UCX_CUDA_MGI_TOPO_FILE: the channels
# follow its GIG plan).
case_file=$1
np=2; tls=sm,self; args=; timeout=90; oob=; compile=; topo=
. "$case_file"
here=$(dirname "$0")
bindir=$(pwd)
case $case_file in
    *.rg) prog=mgi_region_test; dev_check=region_device_compile_check.cu ;;
    *)    prog=mgi_channel_test; dev_check=device_compile_check.cu ;;
esac
if [ -n "$topo" ]; then
    export UCX_CUDA_MGI_TOPO_FILE="$here/topo/$topo"
    echo "UCX_CUDA_MGI_TOPO_FILE=$UCX_CUDA_MGI_TOPO_FILE"
    # libmgi reads it as a UCX setting: UCX must not call it unused, also
    # where no cuda_mgi interface opens (no GPU)
    export UCX_WARN_UNUSED_ENV_VARS=y
fi

if [ -n "$compile" ]; then
    if [ ! -x "$NVCC" ]; then
        echo "SKIP: no nvcc"; exit 77
    fi
    out=$(mktemp -d)
    # PTX of one architecture: every template and call of the header
    # compiled; machine code (ptxas, three quarters of the time) is made
    # where the GPU programs are built, which use the same header
    echo "$NVCC -arch=compute_90 -c $dev_check"
    "$NVCC" -arch=compute_90 -std=c++17 -I"$MGI_SRCDIR" $UCX_CPPFLAGS \
        -c "$here/$dev_check" -o "$out/dev.o"
    rc=$?
    if [ $rc -eq 0 ] && [ $prog = mgi_channel_test ]; then
        # the header's host-and-device arithmetic, run on the host
        echo "$NVCC device_host_check.cu && ./device_host_check"
        "$NVCC" -std=c++17 -I"$MGI_SRCDIR" $UCX_CPPFLAGS \
            "$here/device_host_check.cu" -o "$out/host_check" &&
            "$out/host_check"
        rc=$?
    fi
    rm -rf "$out"
    exit $rc
fi

export UCX_TLS=$tls
echo "UCX_TLS=$UCX_TLS np=$np args=$args"
start=$(date +%s)
out=$(mktemp)
if [ -n "$oob" ]; then
    # the test forks its ranks itself; bound it with timeout(1)
    timeout -k 5 "$timeout" "$bindir/$prog" --oob "$oob" $args > "$out" 2>&1
    rc=$?
    cat "$out"
    [ $rc -eq 124 ] && echo "TIMEOUT: hung after $timeout s"
else
    "$bindir/mgi_launch" -n "$np" -t "$timeout" -- "$bindir/$prog" $args \
        > "$out" 2>&1
    rc=$?
    cat "$out"
fi
if [ $rc -eq 0 ] && [ -n "$topo" ] &&
   grep "unused environment variable" "$out" |
       grep -q "UCX_CUDA_MGI_TOPO_FILE"; then
    echo "FAIL: UCX called UCX_CUDA_MGI_TOPO_FILE unused"
    rc=1
fi
rm -f "$out"
echo "run time: $(( $(date +%s) - start )) s, exit $rc"
exit $rc
