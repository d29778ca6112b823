#!/usr/bin/env bash
# run207: one rank's Exchange, the receive split (calls that found nothing
# against those that took tuples, rounds a call)
I=MGI_WL_MGI_PROFILE=1
LIST1= LIST2=$'prof '$I$'\nprof2 '$I bash abbase/r162.sh
