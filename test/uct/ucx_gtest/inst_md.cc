/* UCX's memory domain tests on cuda_mgi's component: see cuda_mgi_gtest.h.
 * These are instantiated by component name, not transport name. */
#include "cuda_mgi_gtest.h"
#include <uct/test_md.h>

#undef _UCT_MD_INSTANTIATE_TEST_CASE
#define _UCT_MD_INSTANTIATE_TEST_CASE(_test_case, _cmpt_name)

#include <uct/test_md.cc>

#define CUDA_MGI_MD_INSTANTIATE(_test_case, _cmpt_name) \
    INSTANTIATE_TEST_SUITE_P(_cmpt_name, _test_case, \
        testing::ValuesIn(cuda_mgi_gtest_params( \
            _test_case::enum_mds(#_cmpt_name), \
            test_md_param{NULL, "no-device-here"})));

#define CUDA_MGI_MD_INSTANTIATE_ALL(_test_case) \
    CUDA_MGI_MD_INSTANTIATE(_test_case, cuda_mgi) \
    CUDA_MGI_MD_INSTANTIATE(_test_case, cuda_ipc) \
    CUDA_MGI_MD_INSTANTIATE(_test_case, posix) \
    CUDA_MGI_MD_INSTANTIATE(_test_case, cma)

CUDA_MGI_MD_INSTANTIATE_ALL(test_md)
CUDA_MGI_MD_INSTANTIATE_ALL(test_md_fork)
CUDA_MGI_MD_INSTANTIATE_ALL(test_md_memlock_limit)
CUDA_MGI_MD_INSTANTIATE_ALL(test_md_non_blocking)
CUDA_MGI_MD_INSTANTIATE_ALL(test_cuda)
