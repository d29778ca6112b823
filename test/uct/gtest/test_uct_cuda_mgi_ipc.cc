/**
 * cuda_mgi GPU tests of its own IPC: the handle kinds (cudaMalloc memory,
 * cuMemCreate memory shared by file descriptor, pool memory that cannot be
 * shared) and the mapping cache's rule for memory freed and allocated
 * again at the same address.  Every byte that arrives is checked.
 * See file LICENSE for terms.
 */

#include "pair.h"
#include "uct_side.h"

#include <sys/prctl.h>
#include <unistd.h>

using namespace mgi_test;

namespace {

/* rank 0 puts a pattern into rank 1's buffer at an odd offset and gets
 * another back, each size checked byte for byte */
void put_get_sizes(int rank, peer_link &link, uct_side &side,
                   const std::vector<size_t> &sizes, uint64_t seed0)
{
    uint8_t *dbuf = (uint8_t*)side.buf();

    for (size_t len : sizes) {
        uint64_t seed = seed0 + len;

        if (rank == 0) {
            fill_device_pattern(dbuf + 3, len, seed);
        } else {
            fill_device_pattern(dbuf, len + 16, 7 + seed);
        }
        link.barrier();
        if (rank == 0) {
            uct_completion_t comp = make_comp(1);
            side.zcopy(true, dbuf + 3, len, side.remote_buf() + 5, &comp);
            side.wait(&comp, "put_zcopy");
            side.flush();
        }
        link.barrier();
        if (rank == 1) {
            MGI_CHECK(check_device_pattern(dbuf + 5, len, seed, "put"),
                      "put of %zu bytes delivered wrong bytes", len);
            fill_device_pattern(dbuf + 9, len, 3 * seed);
        }
        link.barrier();
        if (rank == 0) {
            uct_completion_t comp = make_comp(1);
            side.zcopy(false, dbuf + 1, len, side.remote_buf() + 9, &comp);
            side.wait(&comp, "get_zcopy");
            side.flush();
            MGI_CHECK(check_device_pattern(dbuf + 1, len, 3 * seed, "get"),
                      "get of %zu bytes delivered wrong bytes", len);
        }
        link.barrier();
    }
}

const std::vector<size_t> ipc_sizes = {1, 4096 + 1, 1 * MiB + 5,
                                       16 * MiB + 3, 64 * MiB};

} // namespace


/* cuMemCreate memory travels as a POSIX file descriptor that the peer
 * takes with pidfd_getfd; where the kernel's Yama module restricts that to
 * related processes, the exporter allows it (prctl PR_SET_PTRACER), as the
 * manual tells users to */
TEST(uct_cuda_mgi_ipc, vmm_fd_put_get) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        MGI_CHECK(prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0 ||
                  errno == EINVAL, "prctl(PR_SET_PTRACER): %m");
        uct_side side(rank, link, 64 * MiB + 64, mem_kind::vmm_fd);
        put_get_sizes(rank, link, side, ipc_sizes, 100);
        if (rank == 0) {
            printf("  cuMemCreate memory (file descriptor handle): %zu "
                   "sizes, put and get byte-exact\n", ipc_sizes.size());
        }
    });
}


/* Memory a peer freed and allocated again at the same address has another
 * buffer id: the mapping of the old allocation must not serve it.  Without
 * that rule a put lands in the old, still mapped memory and the new
 * buffer never sees it. */
static void reallocated(mem_kind kind)
{
    MGI_RUN_PAIR([kind](int rank, peer_link &link) {
        if (kind == mem_kind::vmm_fd) {
            prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
        }
        uct_side side(rank, link, 4 * MiB, kind);
        const std::vector<size_t> sizes = {4096, 1 * MiB + 7};
        unsigned same = 0;

        put_get_sizes(rank, link, side, sizes, 1);
        for (int round = 0; round < 4; ++round) {
            same += side.renew_buffer(link);
            put_get_sizes(rank, link, side, sizes, 10 + round);
        }
        /* rank 1's buffer is the target: say how often its address came
         * back, so a run shows the stale-mapping case was exercised */
        if (rank == 1) {
            link.send_val<unsigned>(same);
        } else {
            same = link.recv_val<unsigned>();
            printf("  %s: 4 times freed and allocated again, %u of them at "
                   "the same address; every put and get byte-exact\n",
                   mem_kind_name(kind), same);
            MGI_CHECK(same > 0, "the allocator never gave the same address "
                      "back: the case was not exercised");
        }
    });
}

TEST(uct_cuda_mgi_ipc, reallocated_cuda_malloc) {
    reallocated(mem_kind::cuda_malloc);
}

/* Pool memory of cudaMallocAsync exports no handle: its key is
 * unreachable, so UCX takes another transport for it */
TEST(uct_cuda_mgi_ipc, pool_memory_is_unreachable) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        uct_side side(rank, link, 1 * MiB, mem_kind::pool);
        MGI_CHECK(side.unpack_status() == UCS_ERR_UNREACHABLE,
                  "the peer's cudaMallocAsync memory unpacked with %s, "
                  "expected unreachable",
                  ucs_status_string(side.unpack_status()));
        if (rank == 0) {
            printf("  cudaMallocAsync memory: unreachable, as expected\n");
        }
    });
}

TEST(uct_cuda_mgi_ipc, reallocated_vmm_fd) {
    reallocated(mem_kind::vmm_fd);
}
