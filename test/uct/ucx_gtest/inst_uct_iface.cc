/* UCX's interface tests on cuda_mgi: see cuda_mgi_gtest.h */
#include "cuda_mgi_gtest.h"
#include <uct/test_uct_iface.cc>

CUDA_MGI_INSTANTIATE_ALL(test_uct_iface)
