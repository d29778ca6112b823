#!/usr/bin/env bash
# run181: channel ids reused (new suite steps), then the whole GPU suite,
# then the workloads on the stand-in with the create's phases logged
SUITE_S=300 bash abbase/r80b.sh suite '.'
grep -E "round [0-9]+ on channel|groupby rank .*: sent" /tmp/o/suite/groupby_2proc_channels.log | head -14
grep -E "round [0-9]+ on channel" /tmp/o/suite/groupby_1proc_2gpu_channels.log | head -6
LIST1="info UCX_LOG_LEVEL=info / b2 BASE=1" LIST2="info UCX_LOG_LEVEL=info / b2 BASE=1" bash abbase/r162.sh
grep -E "created in" ${OUT:-/tmp}/raw.txt | sed 's/.*\] *//' | cut -c1-250 | tail -12
