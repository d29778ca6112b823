/**
 * cuda_mgi GPU tests: the two-process harness.
 * See file LICENSE for terms.
 */

#include "pair.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <memory>
#include <thread>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace mgi_test {

void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " [pid %d]\n", getpid());
    fflush(stderr);
    _exit(1);
}

double now_sec()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void wait_fd(int fd, short events, const char *what)
{
    struct pollfd pfd = {fd, events, 0};
    int ret;

    do {
        ret = poll(&pfd, 1, (int)(MGI_TEST_TIMEOUT_SEC * 1000));
    } while ((ret < 0) && (errno == EINTR));
    MGI_CHECK(ret > 0, "peer socket: no %s within %.0f s (peer hung or died)",
              what, MGI_TEST_TIMEOUT_SEC);
}

void peer_link::send(const void *buf, size_t len)
{
    const char *p = static_cast<const char*>(buf);
    while (len > 0) {
        wait_fd(m_fd, POLLOUT, "room to send");
        ssize_t n = ::send(m_fd, p, len, MSG_NOSIGNAL);
        MGI_CHECK(n > 0 || errno == EINTR, "send to peer: %s",
                  strerror(errno));
        if (n > 0) {
            p   += n;
            len -= n;
        }
    }
}

void peer_link::recv(void *buf, size_t len)
{
    char *p = static_cast<char*>(buf);
    while (len > 0) {
        wait_fd(m_fd, POLLIN, "data");
        ssize_t n = ::recv(m_fd, p, len, 0);
        MGI_CHECK(n != 0, "peer closed the socket (it failed)");
        MGI_CHECK(n > 0 || errno == EINTR, "recv from peer: %s",
                  strerror(errno));
        if (n > 0) {
            p   += n;
            len -= n;
        }
    }
}

void peer_link::send_blob(const std::vector<uint8_t> &blob)
{
    send_val<uint64_t>(blob.size());
    send(blob.data(), blob.size());
}

std::vector<uint8_t> peer_link::recv_blob()
{
    std::vector<uint8_t> blob(recv_val<uint64_t>());
    recv(blob.data(), blob.size());
    return blob;
}

void peer_link::barrier()
{
    send_val<uint32_t>(0xb0b0b0b0u);
    MGI_CHECK(recv_val<uint32_t>() == 0xb0b0b0b0u, "barrier out of step");
}

/* fn(k, begin, end) for the chunks k of [0, len), on up to 16 threads of
 * this process where the buffer is large: a byte pattern of the 1 GiB
 * cases took seconds on one thread, most of the transport's all-sizes
 * cases' time (the threads start in the test's own process, after its
 * fork) */
static const size_t max_chunks = 16;

template <typename F>
static void for_chunks(size_t len, F fn)
{
    const size_t min_chunk = 16 * MiB;
    const unsigned hw      = std::thread::hardware_concurrency();
    const size_t n         = std::min<size_t>({(hw > 0) ? hw : 1, max_chunks,
                                               len / min_chunk + 1});
    const size_t per       = (len + n - 1) / n;
    std::vector<std::thread> threads;

    if (n == 1) {
        fn(0, 0, len);
        return;
    }
    for (size_t k = 1; k < n; ++k) {
        threads.emplace_back(fn, k, std::min(len, k * per),
                             std::min(len, (k + 1) * per));
    }
    fn(0, 0, std::min(len, per));
    for (auto &t : threads) {
        t.join();
    }
}

void fill_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
    for_chunks(len, [=](size_t, size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
            buf[i] = pattern_byte(seed, i);
        }
    });
}

void fill_device_pattern(void *dptr, size_t len, uint64_t seed)
{
    /* not value-initialised: fill_pattern writes every byte */
    std::unique_ptr<uint8_t[]> host(new uint8_t[len + 1]);

    fill_pattern(host.get(), len, seed);
    MGI_CUDA(cudaMemcpy(dptr, host.get(), len, cudaMemcpyHostToDevice));
    /* from pageable memory cudaMemcpy may return before the DMA to the
     * device is done (CUDA's API sync behaviour), and the transport's copy
     * on a stream of its own would then read the bytes before they are
     * there: a freshly allocated source sent its old zeros */
    MGI_CUDA(cudaDeviceSynchronize());
}

size_t find_wrong_byte(const uint8_t *buf, size_t len, uint64_t seed)
{
    std::vector<size_t> first(max_chunks, SIZE_MAX); /* each chunk's */

    for_chunks(len, [&](size_t k, size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) {
            if (buf[i] != pattern_byte(seed, i)) {
                first[k] = i;
                break;
            }
        }
    });
    return *std::min_element(first.begin(), first.end());
}

bool check_device_pattern(const void *dptr, size_t len, uint64_t seed,
                          const char *what)
{
    std::unique_ptr<uint8_t[]> host(new uint8_t[len + 1]);
    size_t i;

    MGI_CUDA(cudaMemcpy(host.get(), dptr, len, cudaMemcpyDeviceToHost));
    i = find_wrong_byte(host.get(), len, seed);
    if (i != SIZE_MAX) {
        fprintf(stderr, "%s: %zu bytes: first wrong byte at offset %zu: "
                "got 0x%02x, expected 0x%02x [pid %d]\n", what, len, i,
                host[i], pattern_byte(seed, i), getpid());
        return false;
    }
    return true;
}

int select_gpu(int rank)
{
    const char *need_env = getenv(MGI_TEST_NEEDS_GPUS);
    int need             = (need_env != NULL) ? atoi(need_env) : 1;
    int n                = 0;

    if ((cudaGetDeviceCount(&n) != cudaSuccess) || (n < 1)) {
        fprintf(stderr, "SKIPPED: no GPU visible\n");
        _exit(MGI_TEST_EXIT_SKIP);
    }
    if (n < need) {
        /* on one GPU every copy is a direct one: a case that forces
         * another path kind would pass without taking it */
        fprintf(stderr, "SKIPPED: %d GPU(s) visible, the case needs %d\n",
                n, need);
        _exit(MGI_TEST_EXIT_SKIP);
    }
    if ((n == 1) && (rank == 0)) {
        fprintf(stderr, "note: one GPU visible: both processes on GPU 0\n");
    }

    MGI_CUDA(cudaSetDevice(rank % n));
    MGI_CUDA(cudaFree(0));
    return rank % n;
}

int run_pair(const std::function<void(int, peer_link&)> &body,
             const std::vector<std::pair<std::string, std::string>> &env)
{
    int sv[2], status[2] = {-1, -1};
    pid_t pid[2];
    double deadline;

    fflush(stdout);
    fflush(stderr);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        return 1;
    }

    for (int rank = 0; rank < 2; ++rank) {
        pid[rank] = fork();
        if (pid[rank] == 0) {
            close(sv[1 - rank]);
            for (const auto &kv : env) {
                setenv(kv.first.c_str(), kv.second.c_str(), 1);
            }
            peer_link link(sv[rank]);
            body(rank, link);
            fflush(stdout);
            _exit(0);
        }
    }
    close(sv[0]);
    close(sv[1]);

    deadline = now_sec() + MGI_TEST_TIMEOUT_SEC * 2;
    for (int done = 0; done < 2;) {
        for (int rank = 0; rank < 2; ++rank) {
            if (status[rank] != -1) {
                continue;
            }
            int st;
            if (waitpid(pid[rank], &st, WNOHANG) == pid[rank]) {
                status[rank] = WIFEXITED(st) ? WEXITSTATUS(st) :
                                               128 + WTERMSIG(st);
                ++done;
            }
        }
        if (now_sec() > deadline) {
            fprintf(stderr, "test pair did not finish in %.0f s: killing it\n",
                    MGI_TEST_TIMEOUT_SEC * 2);
            for (int rank = 0; rank < 2; ++rank) {
                if (status[rank] == -1) {
                    kill(pid[rank], SIGKILL);
                    waitpid(pid[rank], NULL, 0);
                    status[rank] = 124;
                }
            }
            break;
        }
        usleep(1000);
    }

    if ((status[0] == MGI_TEST_EXIT_SKIP) || (status[1] == MGI_TEST_EXIT_SKIP)) {
        return MGI_TEST_EXIT_SKIP;
    }
    if ((status[0] != 0) || (status[1] != 0)) {
        fprintf(stderr, "children exited with %d and %d\n", status[0],
                status[1]);
        return 1;
    }
    return 0;
}

} // namespace mgi_test
