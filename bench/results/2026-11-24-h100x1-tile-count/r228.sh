#!/usr/bin/env bash
# run228: after the review's second mend (the profile's dead counting
# share removed): the GPU suite, and a profiled Exchange (one rank and the
# stand-in)
SUITE_S=400 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL"
OP=exchange LIST1='p MGI_WL_MGI_PROFILE=1' LIST2='p MGI_WL_MGI_PROFILE=1' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|profile rank 0: user|rror|FAIL" | sed 's/^exchange  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
