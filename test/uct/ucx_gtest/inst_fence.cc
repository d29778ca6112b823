/* UCX's fence tests on cuda_mgi (they need atomics: skipped without them):
 * see cuda_mgi_gtest.h */
#include "cuda_mgi_gtest.h"
#include <uct/test_fence.cc>

CUDA_MGI_INSTANTIATE_ALL(uct_fence_test)
