/* UCX's pending queue tests on cuda_mgi (they send active messages: skipped
 * without them): see cuda_mgi_gtest.h */
#include "cuda_mgi_gtest.h"
#include <uct/test_pending.cc>

CUDA_MGI_INSTANTIATE_NO_SELF(test_uct_pending)
