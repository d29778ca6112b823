/* UCX's zcopy completion test on cuda_mgi: see cuda_mgi_gtest.h */
#include "cuda_mgi_gtest.h"
#include <uct/test_zcopy_comp.cc>

CUDA_MGI_INSTANTIATE_NO_SELF(test_zcopy_comp)
