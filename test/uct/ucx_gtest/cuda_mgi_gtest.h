/*
 * UCX's generic UCT tests, instantiated for cuda_mgi.
 *
 * Each inst_*.cc file includes one test source of a configured UCX tree
 * (test/gtest/uct/...; build.sh puts the tree on the include path) and
 * instantiates its test cases with CUDA_MGI_INSTANTIATE:
 *
 *   cuda_mgi     the transport under test
 *   cuda_ipc     UCX's own CUDA IPC transport: the reference on a GPU node
 *   self, posix  host-memory transports: controls that run on any machine
 *   cma          another one, with put/get zcopy as cuda_mgi has
 *
 * UCX's own lists of transports (UCT_TEST_TLS, expanded by
 * UCT_INSTANTIATE_TEST_CASE and its kin) are switched off while its sources
 * are included, so a file instantiates exactly what it names.
 */
#ifndef CUDA_MGI_GTEST_H_
#define CUDA_MGI_GTEST_H_

#include <uct/uct_test.h>
#include <uct/uct_p2p_test.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>


/* Every UCX list macro expands to this one per transport */
#undef _UCT_INSTANTIATE_TEST_CASE
#define _UCT_INSTANTIATE_TEST_CASE(_test_case, _tl_name)


/*
 * The parameters of an instance: what the fixture found (no devices: no
 * tests, as in UCX's suite).  Only to show the names an instance would get
 * on a machine without its devices: with CUDA_MGI_GTEST_LIST_ALL set,
 * --gtest_list_tests shows such an instance with a placeholder parameter
 * that has no device.  Tests never run with it: it exists only while gtest
 * lists and runs nothing.
 */
template <typename T>
std::vector<T> cuda_mgi_gtest_params(std::vector<T> found, const T &placeholder)
{
    if (found.empty() && testing::GTEST_FLAG(list_tests) &&
        (getenv("CUDA_MGI_GTEST_LIST_ALL") != NULL)) {
        found.push_back(placeholder);
    }
    return found;
}

static inline const resource *cuda_mgi_gtest_placeholder(const char *tl_name)
{
    static std::map<std::string, resource> placeholders;
    resource &rsc = placeholders[tl_name];

    rsc.tl_name  = tl_name;
    rsc.dev_name = "no-device-here";
    return &rsc;
}

/* One instance of a uct_test-derived test case for one transport: its
 * resources of that transport name */
#define CUDA_MGI_INSTANTIATE(_test_case, _tl_name) \
    INSTANTIATE_TEST_SUITE_P(_tl_name, _test_case, \
        testing::ValuesIn(cuda_mgi_gtest_params( \
            _test_case::enum_resources(#_tl_name), \
            cuda_mgi_gtest_placeholder(#_tl_name))));

/* The instances every generic test case gets: the transport under test, the
 * reference, and the host-memory controls */
#define CUDA_MGI_INSTANTIATE_ALL(_test_case) \
    CUDA_MGI_INSTANTIATE_NO_SELF(_test_case) \
    CUDA_MGI_INSTANTIATE(_test_case, self)

/* Test cases UCX runs on every transport but self (they need two ifaces) */
#define CUDA_MGI_INSTANTIATE_NO_SELF(_test_case) \
    CUDA_MGI_INSTANTIATE(_test_case, cuda_mgi) \
    CUDA_MGI_INSTANTIATE(_test_case, cuda_ipc) \
    CUDA_MGI_INSTANTIATE(_test_case, posix) \
    CUDA_MGI_INSTANTIATE(_test_case, cma)


/*
 * cuda_mgi moves GPU memory between processes by CUDA IPC, as cuda_ipc
 * does, and UCX's tests give cuda_ipc a treatment of its own: p2p RMA
 * sends from GPU memory, not host memory (uct_p2p_rma_test::test_xfer);
 * is_reachable expects "same process" for two ifaces of one process
 * (test_uct_iface); is_connected gives the receiver another pid to tell
 * endpoints apart (test_uct_ep).  Where the included sources ask for
 * cuda_ipc, an instance of cuda_mgi answers yes as well.
 *
 * Only the sources included after this header see these macros: the
 * declarations in uct_test.h and UCX's own uct_test.cc are untouched.
 */
static inline std::string
cuda_mgi_gtest_tl_alias(const resource *rsc, const std::string &tl_name)
{
    if ((tl_name == "cuda_ipc") && (rsc->tl_name == "cuda_mgi")) {
        return rsc->tl_name;
    }
    return tl_name;
}

#define has_transport(_tl_name) \
    uct_test::has_transport(cuda_mgi_gtest_tl_alias(GetParam(), (_tl_name)))
#define has_cuda_ipc() \
    has_transport("cuda_ipc")

#endif
