/* UCX's flush and cancel tests on cuda_mgi: see cuda_mgi_gtest.h */
#include "cuda_mgi_gtest.h"
#include <uct/test_flush.cc>

CUDA_MGI_INSTANTIATE_ALL(uct_flush_test)
CUDA_MGI_INSTANTIATE_ALL(uct_cancel_test)
