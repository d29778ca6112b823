#!/usr/bin/env bash
# UCX loads cuda_mgi by itself (no LD_PRELOAD, no UCX_MODULE_DIR): the module
# is installed where UCX looks, UCX opens it, its component answers, and its
# configuration shows in ucx_info.  With a GPU, ucx_info -d lists it.
. "$(dirname "$0")/../check/common.sh"

module=$UCX_PREFIX/lib/ucx/libuct_cuda_mgi.so.0
if [ -e "$module" ]; then pass "installed: $module"; else fail "not installed: $module"; fi

if missing=$(ldd "$module" 2>&1 | grep 'not found'); [ -z "$missing" ]; then
    pass "all libraries of the module resolve"
else
    fail "unresolved libraries: $missing"
fi

log=$(UCX_LOG_LEVEL=debug "$UCX_INFO" -d 2>&1)
if echo "$log" | grep -q "dlopen('[^']*/libuct_cuda_mgi.so.0'.*failed"; then
    fail "UCX could not open the module: $(echo "$log" | grep libuct_cuda_mgi | head -3)"
elif echo "$log" | grep -q "cuda_mgi"; then
    pass "UCX opened libuct_cuda_mgi.so.0 and queried the cuda_mgi component"
else
    fail "no trace of cuda_mgi in 'UCX_LOG_LEVEL=debug ucx_info -d'"
fi

if [ "$MGI_HAVE_DRIVER" = 1 ] && nvidia-smi -L >/dev/null 2>&1; then
    if "$UCX_INFO" -d | grep -q 'Transport: cuda_mgi'; then
        pass "ucx_info -d lists the cuda_mgi transport (GPU present)"
    else
        fail "GPU present but ucx_info -d does not list cuda_mgi"
    fi
else
    reason=$(echo "$log" | grep 'cuda_mgi: reporting no devices' | head -1 |
             sed 's/.*cuda_mgi: //')
    if [ -n "$reason" ]; then
        pass "no GPU: zero devices, and says why at debug level ($reason)"
    else
        fail "no GPU, but no debug message saying why cuda_mgi has no devices"
    fi
    if "$UCX_INFO" -d | grep -q 'Transport: cuda_mgi'; then
        fail "ucx_info -d lists cuda_mgi on a machine without a GPU"
    else
        pass "ucx_info -d lists no cuda_mgi device without a GPU"
    fi
fi

cfg=$("$UCX_INFO" -c -f 2>&1)
for var in MAX_POLL MAX_STREAMS MAX_OUTSTANDING MAX_SHORT MAX_BCOPY BW LAT \
           PATHS MULTIPATH_THRESH CHUNK_SIZE STAGE_BUFS HOST_BW RELAY_GPUS \
           TOPO_FILE; do
    if echo "$cfg" | grep -q "^UCX_CUDA_MGI_$var="; then
        pass "ucx_info -c shows UCX_CUDA_MGI_$var"
    else
        fail "ucx_info -c does not show UCX_CUDA_MGI_$var"
    fi
done
if echo "$cfg" | grep -B8 '^UCX_CUDA_MGI_MAX_SHORT=' | grep -q 'zero-copy threshold'; then
    pass "UCX_CUDA_MGI_MAX_SHORT carries its documentation"
else
    fail "UCX_CUDA_MGI_MAX_SHORT has no documentation in ucx_info -c -f"
fi

finish
