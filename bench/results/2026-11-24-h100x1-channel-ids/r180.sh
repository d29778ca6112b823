#!/usr/bin/env bash
# run180: where a channel create's time goes (info log of every create)
LIST1="info UCX_LOG_LEVEL=info" LIST2="info UCX_LOG_LEVEL=info" bash abbase/r162.sh
R=${OUT:-/tmp}/raw.txt
grep -E "created in|TMP ch" $R | sed 's/.*\] *//' | cut -c1-250 | tail -60
