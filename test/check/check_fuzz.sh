#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ (topology files, the bootstrap's hello)
# under ASan and UBSan, each for MGI_FUZZ_SECONDS (15) on a copy of its
# corpus: no crash, leak, undefined behaviour or broken round trip.
# `make fuzz` runs them longer.
MGI_FUZZ_BUILD=${MGI_FUZZ_BUILD:-$PWD/fuzz-build} \
    exec "$MGI_TOP/fuzz/fuzz.sh" check "${MGI_FUZZ_SECONDS:-15}"
