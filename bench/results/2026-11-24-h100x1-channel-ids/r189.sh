#!/usr/bin/env bash
# run189: after the second review's mend (one lane-segment classifier, the
# blob's length in one place, the out-of-ids message): GPU suite, then
# the workloads with their defaults on the stand-in
SUITE_S=300 bash abbase/r80b.sh suite '.'
L=$'def1 BASE=1\ndef2 BASE=1'
LIST1="$L" LIST2="$L" bash abbase/r162.sh
for op in groupby join; do OP=$op LIST1="def BASE=1" LIST2="def BASE=1" bash abbase/r162.sh; done
