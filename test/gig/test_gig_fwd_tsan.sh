#!/bin/sh
#
# The forwarding tables read first by several threads at once
# (gig_fwd.first_reads_from_threads_after_the_plan) under ThreadSanitizer,
# gig_fwd.c instrumented. A race that TSan reports fails the test (exit
# 66). UCX's memory hooks (libucm, loaded with libucs) patch madvise and
# mmap, which TSan's own interceptors meet at thread start: off here.
#
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"
export UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no UCX_MEM_EVENTS=no
exec ./test_gig_fwd_tsan --gtest_filter='gig_fwd.*'
