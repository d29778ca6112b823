/**
 * cuda_mgi GPU tests: two processes, one GPU each, talking over a socket.
 *
 * The test process itself never touches CUDA: it forks two children, which
 * initialize CUDA after the fork, and waits for both with a deadline.
 * See file LICENSE for terms.
 */

#ifndef MGI_TEST_PAIR_H
#define MGI_TEST_PAIR_H

#include <cuda_runtime.h>
#include <ucs/type/status.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

/* Exit code of a child that found too few GPUs: the test is skipped */
#define MGI_TEST_EXIT_SKIP 77

/* Every wait in the tests ends by then, with a message */
#define MGI_TEST_TIMEOUT_SEC 300.0

namespace mgi_test {

[[noreturn]] void die(const char *fmt, ...)
        __attribute__((format(printf, 1, 2)));

#define MGI_CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, \
                    #_cond); \
            mgi_test::die(__VA_ARGS__); \
        } \
    } while (0)

/* A UCS call that must succeed */
#define MGI_UCS(_call) \
    do { \
        ucs_status_t _s = (_call); \
        MGI_CHECK(_s == UCS_OK, "%s: %s", #_call, ucs_status_string(_s)); \
    } while (0)

#define MGI_CUDA(_call) \
    do { \
        cudaError_t _e = (_call); \
        MGI_CHECK(_e == cudaSuccess, "%s: %s", #_call, cudaGetErrorString(_e)); \
    } while (0)

const size_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

double now_sec();

/* One end of the socket between the two children */
class peer_link {
public:
    explicit peer_link(int fd) : m_fd(fd) {}
    void send(const void *buf, size_t len);
    void recv(void *buf, size_t len);
    void send_blob(const std::vector<uint8_t> &blob);
    std::vector<uint8_t> recv_blob();
    void barrier();
    template <typename T> void send_val(const T &v) { send(&v, sizeof(v)); }
    template <typename T> T recv_val() { T v; recv(&v, sizeof(v)); return v; }
private:
    int m_fd;
};

/* Deterministic bytes: message `seed`, byte `i` */
static inline uint8_t pattern_byte(uint64_t seed, size_t i)
{
    uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (uint8_t)(x ^ (i >> 8));
}

void fill_pattern(uint8_t *buf, size_t len, uint64_t seed);

/* The offset of buf's first byte that is not the pattern; SIZE_MAX: none */
size_t find_wrong_byte(const uint8_t *buf, size_t len, uint64_t seed);

/* Copy a device range back and compare it with the pattern; on mismatch
 * print the first differing offset and return false. */
bool check_device_pattern(const void *dptr, size_t len, uint64_t seed,
                          const char *what);

void fill_device_pattern(void *dptr, size_t len, uint64_t seed);

/* Run body(rank, link) in two children, with env set in both; returns the
 * children's verdict: 0 both passed, MGI_TEST_EXIT_SKIP skipped, else fail. */
int run_pair(const std::function<void(int, peer_link&)> &body,
             const std::vector<std::pair<std::string, std::string>> &env = {});

/* Environment variable of a case that needs more than one GPU (the number),
 * passed to the children with the case's env */
#define MGI_TEST_NEEDS_GPUS "MGI_TEST_NEEDS_GPUS"

/* Select GPU rank % n in a child (one GPU: both processes share it); exits
 * MGI_TEST_EXIT_SKIP, saying why, if no GPU or fewer than the case's
 * MGI_TEST_NEEDS_GPUS are visible. */
int select_gpu(int rank);

} // namespace mgi_test

#define MGI_RUN_PAIR(_body, ...) \
    do { \
        int _rc = mgi_test::run_pair(_body, ##__VA_ARGS__); \
        if (_rc == MGI_TEST_EXIT_SKIP) { \
            GTEST_SKIP() << "SKIPPED: too few GPUs (the children said why)"; \
        } \
        ASSERT_EQ(0, _rc) << "a child process failed (see its output above)"; \
    } while (0)

#endif
