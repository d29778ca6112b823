#!/usr/bin/env bash
# run196: the final tree (a helper for the answers shared by every
# variant, the suite's new workloads steps): the GPU suite, then every
# variant of GroupBy and Join on one GPU, and the mgi variant's ops on
# the stand-in and one rank with the defaults
SUITE_S=380 bash abbase/r80b.sh suite '.'
for op in groupby join; do
  OP=$op VARIANT=all LIST1= LIST2=$'all BASE=1' bash abbase/r162.sh
done
L=$'def1 BASE=1\ndef2 BASE=1'
for op in exchange groupby join; do
  OP=$op LIST1="$L" LIST2="$L" bash abbase/r162.sh
done
