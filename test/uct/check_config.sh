#!/usr/bin/env bash
# Bad UCX_CUDA_MGI_* values are refused by UCX's parser with a message that
# names the variable and the expected syntax; good values are taken.
. "$(dirname "$0")/../check/common.sh"

refused() {  # VAR VALUE EXPECTED-TEXT
    local out
    out=$(env "UCX_CUDA_MGI_$1=$2" "$UCX_INFO" -c 2>&1)
    if echo "$out" | grep -q "Invalid value for $1: '$2'.*$3"; then
        pass "UCX_CUDA_MGI_$1=$2 refused: $(echo "$out" | grep -o "Invalid value for $1.*" | head -1)"
    else
        fail "UCX_CUDA_MGI_$1=$2 was not refused with a message"
    fi
    if echo "$out" | grep -q "^UCX_CUDA_MGI_$1="; then
        fail "UCX_CUDA_MGI_$1=$2: a configuration was still produced"
    fi
}

taken() {  # VAR VALUE PRINTED
    local out
    out=$(env "UCX_CUDA_MGI_$1=$2" "$UCX_INFO" -c 2>&1)
    if echo "$out" | grep -q "^UCX_CUDA_MGI_$1=$3\$"; then
        pass "UCX_CUDA_MGI_$1=$2 taken (shows as $3)"
    else
        fail "UCX_CUDA_MGI_$1=$2 not shown as $3: $(echo "$out" | grep "UCX_CUDA_MGI_$1" | head -1)"
    fi
}

refused MAX_POLL xyz "unsigned integer"
refused MAX_STREAMS x4 "unsigned integer"
refused MAX_OUTSTANDING many "unsigned integer"
refused MAX_SHORT 12q "memory units"
refused MAX_BCOPY lots "memory units"
refused BW fast "bandwidth"
refused LAT soon "time value"
refused PATHS direct,nvlink "comma-separated list of: \[direct|host|gpu\]"
refused MULTIPATH_THRESH big "memory units"
refused CHUNK_SIZE 1q "memory units"
refused STAGE_BUFS many "unsigned integer"
refused HOST_BW fast "bandwidth"
refused BATCH often "<y|n>"

taken MAX_SHORT 32k 32K
taken MAX_BCOPY 1m 1M
taken MAX_POLL 4 4
taken BATCH y y
taken BW 100GBs 100.00GBps
taken LAT 2us 2.00us
taken PATHS host,gpu host,gpu
taken MULTIPATH_THRESH 32m 32M
taken RELAY_GPUS 2,3 2,3
taken TOPO_FILE /etc/mgi.topo /etc/mgi.topo

finish
