#!/usr/bin/env bash
# run153: after the review's refactor (tile reservation helpers): A/B
# against f52755f (abbase/f527), then the GPU suite
export BS="abbase/f527 bundle/bin"
RS="1 2" SS=64 KS=4 bash abbase/r141.sh ab
RS="1 2" OPS="exchange groupby" bash abbase/r141.sh wl
PS=1 RS=1 VS=MGI_STAGE_GROUPS=2 LL=warn bash abbase/r144.sh
