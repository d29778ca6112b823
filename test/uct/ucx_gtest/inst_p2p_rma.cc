/* UCX's put/get tests (short, bcopy, zcopy) on cuda_mgi: see cuda_mgi_gtest.h */
#include "cuda_mgi_gtest.h"
#include <uct/test_p2p_rma.cc>

CUDA_MGI_INSTANTIATE_ALL(uct_p2p_rma_test)
CUDA_MGI_INSTANTIATE_ALL(test_p2p_rma_madvise)
