#!/usr/bin/env bash
# run520 (2 x H200, the machine of run510, warm): the harness's ops phase
# again, to check run510's Join. Called with the device tool as this one
# command line, bundle/ carried:
MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 bash bundle/run/workloads.sh /tmp/wl2 2 2 2>&1 | grep -E '^(exchange|groupby|join) ' | grep -E "^[a-z]+ +-" | cut -c1-300; cp /tmp/wl2/ratios.txt $OUT/ratios-ops-again.txt; tar czf $OUT/wl2.tgz -C /tmp wl2
