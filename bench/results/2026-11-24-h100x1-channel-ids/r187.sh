#!/usr/bin/env bash
# run187: the final tree (8339cd8): GPU suite, then the workloads with
# their defaults on the stand-in
SUITE_S=300 bash abbase/r80b.sh suite '.'
L=$'def1 BASE=1\ndef2 BASE=1'
LIST1="$L" LIST2="$L" bash abbase/r162.sh
for op in groupby join; do OP=$op LIST1="def BASE=1" LIST2="def BASE=1" bash abbase/r162.sh; done
