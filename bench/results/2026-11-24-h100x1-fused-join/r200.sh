#!/usr/bin/env bash
# run200: the final tree: GPU suite, then the mgi variant's ops with the
# defaults on the stand-in and one rank
SUITE_S=380 bash abbase/r80b.sh suite '.'
L=$'def1 BASE=1\ndef2 BASE=1'
for op in exchange groupby join; do
  OP=$op LIST1="$L" LIST2="$L" bash abbase/r162.sh
done
