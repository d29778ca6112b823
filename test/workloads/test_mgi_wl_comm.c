/**
 * CPU test of the workload program's host communication: the fork launcher
 * and its allgather, the UCX-only all-to-all (host memory, any UCX_TLS), the
 * way a failing rank ends the run, and loading NCCL with dlopen.
 *
 *   test_mgi_wl_comm exchange NRANKS [TLS]  every byte of 3 rounds checked
 *   test_mgi_wl_comm fail NRANKS         rank 1 fails: the run must end, rc 1
 *   test_mgi_wl_comm tlcheck NRANKS "TLS|MISSING"   a cuda transport that
 *                                        UCX did not load is reported
 *   test_mgi_wl_comm sleep NRANKS FILE   ranks write their pids, then sleep
 *   test_mgi_wl_comm nccl                $MGI_NCCL_LIB (or libnccl.so.2)
 */
#include "mgi_wl_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(_cond) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "rank %d: check failed: %s (%s:%d)\n", \
                    b->rank, #_cond, __FILE__, __LINE__); \
            return 1; \
        } \
    } while (0)

/* bytes rank s sends rank d in round k: zero for some pairs, eager and
 * rendezvous sizes for others */
static uint64_t block_len(int s, int d, int k)
{
    static const uint64_t sizes[] = {0, 1, 24, 4096, 65536 + 8,
                                     (1u << 20) + 16, 3u << 20};
    return sizes[(s * 3 + d * 5 + k) % 7];
}

static unsigned char pattern(int s, int d, int k, uint64_t i)
{
    return (unsigned char)(s * 31 + d * 7 + k * 3 + i * 13 + (i >> 9));
}

static int exchange_main(mgi_wl_boot_t *b, void *arg)
{
    int n = b->size, me = b->rank, r, k;
    uint64_t send_off[MGI_WL_MAX_RANKS + 1], recv_off[MGI_WL_MAX_RANKS + 1];
    uint64_t counts[MGI_WL_MAX_RANKS], got[MGI_WL_MAX_RANKS], i;
    int all[MGI_WL_MAX_RANKS];
    unsigned char *send, *recv;
    mgi_wl_ucx_t u;

    CHECK(mgi_wl_allgather(b, &me, sizeof(me), all) == 0);
    for (r = 0; r < n; ++r) {
        CHECK(all[r] == r);
    }
    CHECK(mgi_wl_barrier(b) == 0);
    CHECK(mgi_wl_ucx_init(&u, b, (const char*)arg) == 0);
    for (k = 0; k < 3; ++k) {
        send_off[0] = 0;
        for (r = 0; r < n; ++r) {
            counts[r]       = block_len(me, r, k);
            send_off[r + 1] = send_off[r] + counts[r];
        }
        CHECK(mgi_wl_ucx_alltoall_u64(&u, counts, got) == 0);
        recv_off[0] = 0;
        for (r = 0; r < n; ++r) {
            CHECK(got[r] == block_len(r, me, k));
            recv_off[r + 1] = recv_off[r] + got[r];
        }
        send = malloc(send_off[n] + 1);
        recv = malloc(recv_off[n] + 1);
        CHECK((send != NULL) && (recv != NULL));
        for (r = 0; r < n; ++r) {
            for (i = 0; i < counts[r]; ++i) {
                send[send_off[r] + i] = pattern(me, r, k, i);
            }
        }
        memset(recv, 0xee, recv_off[n]);
        CHECK(mgi_wl_ucx_alltoallv(&u, send, send_off, recv, recv_off) == 0);
        memcpy(recv + recv_off[me], send + send_off[me], counts[me]);
        for (r = 0; r < n; ++r) {
            for (i = 0; i < got[r]; ++i) {
                if (recv[recv_off[r] + i] != pattern(r, me, k, i)) {
                    fprintf(stderr, "rank %d round %d: byte %llu from %d "
                            "wrong\n", me, k, (unsigned long long)i, r);
                    return 1;
                }
            }
        }
        free(send);
        free(recv);
    }
    mgi_wl_ucx_cleanup(&u, 1);
    printf("rank %d/%d: 3 rounds of all-to-all checked\n", me, n);
    return 0;
}

/* arg: "TLS|EXPECTED" where EXPECTED is the transport that must be
 * reported missing, or empty for none */
static int tlcheck_main(mgi_wl_boot_t *b, void *arg)
{
    char tls[256], buf[64], *bar;
    const char *missing;
    mgi_wl_ucx_t u;

    snprintf(tls, sizeof(tls), "%s", (const char*)arg);
    bar  = strchr(tls, '|');
    CHECK(bar != NULL);
    *bar = '\0';
    CHECK(mgi_wl_ucx_init(&u, b, tls) == 0);
    missing = mgi_wl_ucx_missing_tl(&u, tls, buf, sizeof(buf));
    printf("rank %d: %s: missing %s\n", b->rank, tls,
           (missing != NULL) ? missing : "none");
    CHECK((bar[1] == '\0') ? (missing == NULL) :
          ((missing != NULL) && (strcmp(missing, bar + 1) == 0)));
    mgi_wl_ucx_cleanup(&u, 1);
    return 0;
}

/* arg: a file each rank appends "launcher-pid rank-pid" to; then it waits
 * to be killed */
static int sleep_main(mgi_wl_boot_t *b, void *arg)
{
    FILE *f = fopen((const char*)arg, "a");

    CHECK(f != NULL);
    fprintf(f, "%d %d\n", (int)getppid(), (int)getpid());
    fclose(f);
    sleep(60);
    return 0;
}

static int fail_main(mgi_wl_boot_t *b, void *arg)
{
    char buf[MGI_WL_MAX_RANKS];

    (void)arg;
    if (b->rank == 1) {
        return 1;               /* leaves before the collective */
    }
    /* the others must be woken, not hang */
    return (mgi_wl_allgather(b, "x", 1, buf) == 0) ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *mode = (argc > 1) ? argv[1] : "exchange";
    int n = (argc > 2) ? atoi(argv[2]) : 3, rc;
    mgi_wl_nccl_t nccl;

    if (strcmp(mode, "exchange") == 0) {
        /* argv[3]: transports through ucp_config_modify, else UCX_TLS */
        rc = mgi_wl_boot_run(n, exchange_main,
                             (argc > 3) ? (void*)argv[3] : NULL);
        printf("exchange %d ranks: %s\n", n, rc ? "FAIL" : "ok");
        return rc;
    }
    if (strcmp(mode, "tlcheck") == 0) {
        return mgi_wl_boot_run(n, tlcheck_main,
                               (argc > 3) ? argv[3] : (char*)"sm,self|");
    }
    if ((strcmp(mode, "sleep") == 0) && (argc > 3)) {
        return mgi_wl_boot_run(n, sleep_main, argv[3]);
    }
    if (strcmp(mode, "fail") == 0) {
        rc = mgi_wl_boot_run(n, fail_main, NULL);
        printf("failing rank ends the run: %s\n", rc ? "ok" : "FAIL");
        return rc ? 0 : 1;
    }
    if (strcmp(mode, "nccl") == 0) {
        if (mgi_wl_nccl_load(&nccl) != 0) {
            return 1;
        }
        printf("NCCL %d from %s\n", nccl.version, nccl.path);
        return (nccl.version >= 20000) ? 0 : 1;
    }
    fprintf(stderr, "usage: %s exchange|fail|tlcheck [N] [ARG] | nccl\n",
            argv[0]);
    return 2;
}
