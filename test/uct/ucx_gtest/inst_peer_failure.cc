/* UCX's peer failure and endpoint check tests on cuda_mgi: see
 * cuda_mgi_gtest.h.  Not instantiated: test_uct_keepalive (posix internals)
 * and test_uct_peer_failure_rma_zcopy (a put/get with no rkey at all, which
 * only cma accepts). */
#include "cuda_mgi_gtest.h"
#include <uct/test_peer_failure.cc>

CUDA_MGI_INSTANTIATE_ALL(test_uct_peer_failure)
CUDA_MGI_INSTANTIATE_ALL(test_uct_peer_failure_multiple)
CUDA_MGI_INSTANTIATE_NO_SELF(test_uct_ep_check_async)
CUDA_MGI_INSTANTIATE_NO_SELF(test_uct_peer_failure_keepalive)
