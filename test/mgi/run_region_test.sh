#!/bin/sh
# Run one cases/*.rg multi-process region test: key=value words np (ranks),
# tls (UCX_TLS), args (mgi_region_test arguments), timeout (seconds for the
# whole run); compile=1: the region device header compiled with nvcc
# (region_device_compile_check.cu) instead.
case_file=$1
np=2; tls=sm,self; args=; timeout=90; compile=
. "$case_file"
here=$(dirname "$0")
bindir=$(pwd)

if [ -n "$compile" ]; then
    if [ ! -x "$NVCC" ]; then
        echo "SKIP: no nvcc"; exit 77
    fi
    out=$(mktemp -d)
    echo "$NVCC -arch=sm_90 -c region_device_compile_check.cu"
    "$NVCC" -arch=sm_90 -std=c++17 -I"$MGI_SRCDIR" $UCX_CPPFLAGS \
        -c "$here/region_device_compile_check.cu" -o "$out/dev.o"
    rc=$?
    rm -rf "$out"
    exit $rc
fi

export UCX_TLS=$tls
echo "UCX_TLS=$UCX_TLS np=$np args=$args"
start=$(date +%s)
"$bindir/mgi_launch" -n "$np" -t "$timeout" -- "$bindir/mgi_region_test" $args
rc=$?
echo "run time: $(( $(date +%s) - start )) s, exit $rc"
exit $rc
