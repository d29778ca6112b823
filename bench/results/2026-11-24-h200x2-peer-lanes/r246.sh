#!/usr/bin/env bash
# run246: the final tree (the review's mend): the whole GPU suite on one H100
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT"
