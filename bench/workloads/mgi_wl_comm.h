/**
 * Host-side communication of the workload program, free of CUDA calls so it
 * is tested on the CPU:
 *   - a fork launcher with an allgather hub over UNIX socket pairs (one
 *     process per GPU, no MPI, no ports),
 *   - the UCX-only exchange: ucp_tag_send_nbx / ucp_tag_recv_nbx of each
 *     destination's contiguous partition (UCX detects CUDA memory),
 *   - NCCL loaded at run time with dlopen (the GPU machine's copy lives in
 *     a Python package; it is found there, never carried).
 */
#ifndef MGI_WL_COMM_H_
#define MGI_WL_COMM_H_

#include <stddef.h>
#include <stdint.h>

#include <nccl.h>
#include <ucp/api/ucp.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MGI_WL_MAX_RANKS 64

typedef struct mgi_wl_boot {
    int      rank;
    int      size;
    int      fd;       /* this rank's end of the socket pair to the hub */
} mgi_wl_boot_t;

typedef int (*mgi_wl_rank_main_t)(mgi_wl_boot_t *boot, void *arg);

/* Fork `size` ranks that each run rank_main and exit with its return
 * value; the calling process serves their allgathers until all exit.
 * Returns 0 when every rank returned 0, else 1 (a rank that dies makes the
 * hub kill the others).  Call before any CUDA call in this process. */
int mgi_wl_boot_run(int size, mgi_wl_rank_main_t rank_main, void *arg);

/* Every rank contributes len bytes; recv gets size * len bytes in rank
 * order.  Collective; returns 0 or -1. */
int mgi_wl_allgather(mgi_wl_boot_t *b, const void *send, size_t len,
                     void *recv);
int mgi_wl_barrier(mgi_wl_boot_t *b);

/* ------------------------------------------------------------------ UCX */

typedef struct mgi_wl_ucx {
    mgi_wl_boot_t *boot;
    ucp_context_h  context;
    ucp_worker_h   worker;
    ucp_ep_h       eps[MGI_WL_MAX_RANKS];   /* NULL for self */
    uint32_t       round;                   /* tags of one exchange */
} mgi_wl_ucx_t;

/* Context (tag feature), one worker, endpoints to every other rank.
 * tls: NULL for UCX_TLS from the environment, else the transports to use
 * (as UCX_TLS would name them).  Collective. */
int mgi_wl_ucx_init(mgi_wl_ucx_t *u, mgi_wl_boot_t *boot, const char *tls);
/* sync: barrier with the other ranks first (all must call it); 0 when
 * only some ranks clean up (a failed setup). */
void mgi_wl_ucx_cleanup(mgi_wl_ucx_t *u, int sync);

/* UCX skips transports it cannot load with only a warning, so a run that
 * asked for cuda_ipc or cuda_mgi could silently measure something else.
 * Returns the first name in the comma-separated `tls` that starts with
 * "cuda" and is not among the context's resources (into buf), or NULL when
 * all are there. */
const char *mgi_wl_ucx_missing_tl(mgi_wl_ucx_t *u, const char *tls,
                                  char *buf, size_t len);

/* All-to-all of variable-size blocks: block d of send is
 * [send_off[d], send_off[d+1]) bytes, block s of recv is
 * [recv_off[s], recv_off[s+1]).  The block to self is not sent (the
 * caller copies it).  Returns 0 or -1 on a UCX error or a size mismatch. */
int mgi_wl_ucx_alltoallv(mgi_wl_ucx_t *u, const void *send,
                         const uint64_t *send_off, void *recv,
                         const uint64_t *recv_off);

/* All-to-all of one uint64 per pair (counts), self included. */
int mgi_wl_ucx_alltoall_u64(mgi_wl_ucx_t *u, const uint64_t *send,
                            uint64_t *recv);

/* ----------------------------------------------------------------- NCCL */

/* The NCCL calls the program makes, resolved from a dlopen'ed library
 * (types from the toolkit's nccl.h; the library is found at run time). */
typedef struct mgi_wl_nccl {
    void         *lib;
    char          path[512];
    int           version;
    ncclResult_t (*GetVersion)(int *version);
    ncclResult_t (*GetUniqueId)(ncclUniqueId *id);
    ncclResult_t (*CommInitRank)(ncclComm_t *comm, int nranks,
                                 ncclUniqueId id, int rank);
    ncclResult_t (*CommDestroy)(ncclComm_t comm);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
    ncclResult_t (*Send)(const void *buf, size_t count, ncclDataType_t type,
                         int peer, ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*Recv)(void *buf, size_t count, ncclDataType_t type,
                         int peer, ncclComm_t comm, cudaStream_t stream);
    const char  *(*GetErrorString)(ncclResult_t result);
} mgi_wl_nccl_t;

/* Load NCCL: $MGI_NCCL_LIB if set, else "libnccl.so.2" on the loader's
 * path.  Returns 0, or -1 with a message on stderr. */
int mgi_wl_nccl_load(mgi_wl_nccl_t *n);

#ifdef __cplusplus
}
#endif

#endif
