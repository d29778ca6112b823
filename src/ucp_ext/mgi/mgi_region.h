/**
 * MGI regions: one-sided access to memory that every rank of a context
 * registered (OpenSHMEM / NVSHMEM style, after MGG's in-kernel remote
 * gets and PROACT's pushes of ready regions). See docs/regions.md.
 *
 * A region is registered collectively: every rank of the context calls
 * mgi_region_register in the same order, each with its own part (host or
 * device memory, of any length, 0 included). Rank r's part is then
 * reachable by every rank at offsets 0 .. len_r - 1:
 *   - from the host, with mgi_region_put / get / put_signal, over UCP RMA
 *     on the context's worker and endpoints (any memory UCP can reach:
 *     host memory over sm / tcp, device memory over cuda_mgi / cuda_ipc /
 *     RDMA);
 *   - from kernels, with the device handle (mgi_region_device.cuh): a part
 *     of a GPU of this host with a peer path is loaded and stored directly
 *     (CUDA IPC between processes, peer access), any other part through
 *     the region's proxy, a host thread that carries the kernel's requests
 *     out with UCP RMA. The same calls either way.
 *
 * Signals are 64-bit words inside a region, 8-byte aligned. put_signal
 * stores its data and then the word: a rank that sees the word's new value
 * (wait_signal / test_signal) sees the data.
 *
 * Host data calls are non-blocking: a put's source and a get's destination
 * belong to the library until mgi_region_quiet returns. Every wait is
 * bounded by the context's timeout_ms (UCS_ERR_TIMED_OUT, said).
 */
#ifndef MGI_REGION_H_
#define MGI_REGION_H_

#include "mgi.h"
#include "mgi_region_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mgi_region *mgi_region_h;

#define MGI_REGION_F_NO_PROXY 1u  /* mgi_region_params_t.flags: no proxy
                                     queue or thread even where a kernel
                                     could not reach a rank directly
                                     (host calls only there) */
#define MGI_REGION_F_PROXY_ONLY 2u /* kernels reach every other rank
                                     through the proxy, mapped or not (as
                                     across hosts): to compare the two
                                     paths on one host */

typedef struct mgi_region_params {
    void     *addr;        /* this rank's part: host or device memory
                              (cudaMalloc, of the current device); NULL
                              with length 0 */
    size_t   length;       /* bytes, 0: this rank offers nothing */
    unsigned flags;        /* MGI_REGION_F_* */
} mgi_region_params_t;

/* Collective over every rank of the context (its bootstrap allgather).
 * The same call order at every rank. UCS_ERR_INVALID_PARAM, said, for a
 * NULL address with a length or memory UCP cannot register. */
ucs_status_t mgi_region_register(mgi_context_h ctx,
                                 const mgi_region_params_t *params,
                                 mgi_region_h *reg_p);
/* Collective: waits (bounded) for this rank's outstanding calls, then for
 * every rank to arrive, so that no rank still accesses a part that goes. */
ucs_status_t mgi_region_deregister(mgi_region_h reg);

/* Bytes of rank `rank`'s part (0 for a rank out of range). */
size_t       mgi_region_length(mgi_region_h reg, int rank);
/* This rank's part, as registered. */
void        *mgi_region_local(mgi_region_h reg);
/* 1 where a kernel of this rank reaches rank `rank`'s part by loads and
 * stores, 0 where its requests go through the proxy. */
int          mgi_region_direct(mgi_region_h reg, int rank);

/* Rank `rank`'s part as mapped for this rank's GPU (its own part, or
 * another GPU's reached by peer access: a pointer for cudaMemcpyAsync and
 * kernels of this GPU), NULL where not mapped. */
void        *mgi_region_peer_ptr(mgi_region_h reg, int rank);

/* Store len bytes at src into rank `peer`'s part at offset `off`. */
ucs_status_t mgi_region_put(mgi_region_h reg, int peer, size_t off,
                            const void *src, size_t len);
/* Load len bytes of rank `peer`'s part at offset `off` into dst. */
ucs_status_t mgi_region_get(mgi_region_h reg, int peer, size_t off,
                            void *dst, size_t len);
/* mgi_region_put, then `value` into the 64-bit word at `sig_off` of the
 * same part, after the data landed there. Waits (bounded) for the data;
 * the signal itself completes at mgi_region_quiet. */
ucs_status_t mgi_region_put_signal(mgi_region_h reg, int peer, size_t off,
                                   const void *src, size_t len,
                                   size_t sig_off, uint64_t value);
/* Every put, get and signal this rank started on the region is complete
 * at its target (bounded): the host calls', and the requests its kernels
 * or threads had posted to the region's proxy by then. */
ucs_status_t mgi_region_quiet(mgi_region_h reg);
/* Puts to a rank started after the fence land after those started before
 * it (here: their completion, as mgi_region_quiet). */
ucs_status_t mgi_region_fence(mgi_region_h reg);

/* This rank's signal word at `sig_off`: UCS_OK once (word cmp value)
 * holds (MGI_REGION_CMP_*), UCS_INPROGRESS while not (test), and
 * UCS_ERR_TIMED_OUT, said, when a wait passed timeout_ms (0: the
 * context's). *word_p (may be NULL) gets the word last read. */
ucs_status_t mgi_region_test_signal(mgi_region_h reg, size_t sig_off,
                                    int cmp, uint64_t value,
                                    uint64_t *word_p);
ucs_status_t mgi_region_wait_signal(mgi_region_h reg, size_t sig_off,
                                    int cmp, uint64_t value,
                                    unsigned timeout_ms, uint64_t *word_p);

/* The handle of the region for the calls of mgi_region_device.cuh (starts
 * the region's proxy thread where it has a proxy). For a part on a GPU:
 * kernels on that GPU. For a part in host memory: host threads of this
 * process, which reach this rank's part directly and the others through
 * the proxy (the device calls' code, run on the CPU). Valid until
 * mgi_region_deregister. */
ucs_status_t mgi_region_device_handle(mgi_region_h reg,
                                      mgi_dev_region_t *h);

#ifdef __cplusplus
}
#endif

#endif
