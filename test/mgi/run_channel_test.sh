#!/bin/sh
# Run one cases/*.ch multi-process channel test. The file holds key=value
# words: np (ranks), tls (UCX_TLS), args (mgi_channel_test arguments),
# timeout (seconds for the whole run), oob (ranks forked with the test's
# socketpair OOB allgather instead of mgi_launch), compile (device header
# compile-only check with nvcc, and a host run of its host-and-device
# arithmetic), topo (a topology file of topo/ for UCX_CUDA_MGI_TOPO_FILE:
# the channels follow its GIG plan).
case_file=$1
np=2; tls=sm,self; args=; timeout=90; oob=; compile=; topo=
. "$case_file"
here=$(dirname "$0")
if [ -n "$topo" ]; then
    export UCX_CUDA_MGI_TOPO_FILE="$here/topo/$topo"
    echo "UCX_CUDA_MGI_TOPO_FILE=$UCX_CUDA_MGI_TOPO_FILE"
fi
bindir=$(pwd)

if [ -n "$compile" ]; then
    if [ ! -x "$NVCC" ]; then
        echo "SKIP: no nvcc"; exit 77
    fi
    out=$(mktemp -d)
    echo "$NVCC -arch=sm_90 -c device_compile_check.cu"
    "$NVCC" -arch=sm_90 -std=c++17 -I"$MGI_SRCDIR" $UCX_CPPFLAGS \
        -c "$here/device_compile_check.cu" -o "$out/dev.o"
    rc=$?
    if [ $rc -eq 0 ]; then
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
if [ -n "$oob" ]; then
    # the test forks its ranks itself; bound it with timeout(1)
    timeout -k 5 "$timeout" "$bindir/mgi_channel_test" --oob "$oob" $args
    rc=$?
    [ $rc -eq 124 ] && echo "TIMEOUT: hung after $timeout s"
else
    "$bindir/mgi_launch" -n "$np" -t "$timeout" -- \
        "$bindir/mgi_channel_test" $args
    rc=$?
fi
echo "run time: $(( $(date +%s) - start )) s, exit $rc"
exit $rc
