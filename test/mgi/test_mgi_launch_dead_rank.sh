#!/bin/sh
# A rank killed before it connects: mgi_launch ends the others within its
# grace period (10 s), instead of their waiting for it until their
# bootstrap timeout (60 s).  Then a healthy job of three ranks through
# mgi_launch, whose job token reaches every rank.
bindir=$(pwd)
start=$(date +%s)
"$bindir/mgi_launch" -n 3 -t 100 -- sh -c \
    'if [ "$MGI_RANK" = 2 ]; then kill -9 $$; fi; exec "$0" rank' \
    "$bindir/test_mgi_bootstrap"
rc=$?
took=$(( $(date +%s) - start ))
echo "dead rank: mgi_launch exit $rc after $took s"
fail=0
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, not 1"; fail=1; }
[ $took -lt 30 ] || { echo "FAIL: took $took s (bound 30 s)"; fail=1; }
"$bindir/mgi_launch" -n 3 -t 60 -- "$bindir/test_mgi_bootstrap" rank
rc=$?
echo "healthy job: mgi_launch exit $rc"
[ $rc -eq 0 ] || { echo "FAIL: healthy job exit $rc"; fail=1; }
exit $fail
