#!/usr/bin/env bash
# run199: the fused consumers taking four tuples a thread at once
# (mgi_dev_recv_block_each_n<4>, their slots loaded together): Join and
# GroupBy fused against not, alternating, stand-in and one rank, plain
# and at Zipf 1.5; then the GPU suite on the final tree
for op in join groupby; do
  L=$'nf1 MGI_WL_MGI_FUSE=0\nfu1 MGI_WL_MGI_FUSE=2\nnf2 MGI_WL_MGI_FUSE=0\nfu2 MGI_WL_MGI_FUSE=2'
  OP=$op LIST1="$L" LIST2="$L" bash abbase/r162.sh
  OP=$op ARGS="--zipf 1.5" LIST1=$'z0 MGI_WL_MGI_FUSE=0\nz2 MGI_WL_MGI_FUSE=2' LIST2=$'z0 MGI_WL_MGI_FUSE=0\nz2 MGI_WL_MGI_FUSE=2' bash abbase/r162.sh
done
SUITE_S=380 bash abbase/r80b.sh suite '.'
