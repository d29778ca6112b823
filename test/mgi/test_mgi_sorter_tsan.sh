#!/bin/sh
#
# The sorter's device code, emulated on CPU threads, under ThreadSanitizer:
# the cases of up to 8 threads a block (those of 32 take minutes under
# TSan). A race that TSan reports fails the test (exit 66), as a failed
# case does.
#
# TSan does not model atomic_thread_fence (-Wtsan): where only a fence
# orders plain stores before another thread's reads, it could report a
# race that is none; these cases report none.
#
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
exec ./test_mgi_sorter_tsan \
    --gtest_filter='-*32_threads*:*mirrors_synced_from_block_one*:*owner_helps_none_one_block_lane_ctl*'
