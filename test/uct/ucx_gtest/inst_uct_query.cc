/* UCX's performance estimate query test on cuda_mgi: see cuda_mgi_gtest.h */
#include "cuda_mgi_gtest.h"
#include <uct/v2/test_uct_query.cc>

CUDA_MGI_INSTANTIATE_ALL(test_uct_query)
