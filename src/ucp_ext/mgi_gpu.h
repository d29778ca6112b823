/**
 * Host state of GPU endpoints shared by the files of libmgi's CUDA host
 * code, private to them: an endpoint's streams, tables and pools
 * (mgi_gpu_ep_t, ep->gpu), a channel's state at a GPU endpoint
 * (mgi_gpu_ch_t, ch->gpu[]), and the calls each file offers the ones
 * above it. From the bottom:
 *  - mgi_gpu_rt.cu: the GPU runtime: device memory (freed or deferred
 *    while the sorter runs), the control stream's table writes, mapped
 *    host memory, kept device memory (pools), peer access, CUDA IPC;
 *  - mgi_gpu_direct.cu: channels' direct rings and landing buffers;
 *  - mgi_sorter.cu: the sorter kernel and its endpoint and channel
 *    tables.
 * C++ (nvcc) only.
 */
#ifndef MGI_GPU_H_
#define MGI_GPU_H_

#include "mgi_int.h"

#include <cuda_runtime.h>
#include <pthread.h>

/* The sorter's device structures (mgi_sorter_dev_types.h), by name: the
 * host state holds pointers to them. */
typedef struct mgi_gpu_dep       mgi_gpu_dep_t;
typedef struct mgi_gpu_status    mgi_gpu_status_t;
typedef struct mgi_gpu_dch       mgi_gpu_dch_t;
typedef struct mgi_gpu_block     mgi_gpu_block_t;
typedef struct mgi_gpu_lane_jobs mgi_gpu_lane_jobs_t;

/* A final ring of a deleted channel, kept for the next channel: device
 * memory is not given back while the sorter runs (cudaFree would wait for
 * it), and a channel's final rings cost a cudaMalloc each. */
typedef struct mgi_gpu_pooled {
    void     *ring;
    uint32_t mark;                  /* free once the sorter quiesced this
                                     * request (mgi_gpu_quiesced) */
} mgi_gpu_pooled_t;

/* Direct rings of a deleted channel kept for the next one of its size. */
typedef struct mgi_gpu_dpool {
    void    *mem;
    size_t  len;
    uint8_t ipc[64];            /* its CUDA IPC handle */
} mgi_gpu_dpool_t;

#define MGI_GPU_DHDR_RINGS 512    /* direct-ring headers a delete reads
                                     * at once (mgi_gpu_ep_t.dhdr) */

/* Such kept device memory of an endpoint (under its pool_lock). */
typedef struct mgi_gpu_mpool {
    mgi_gpu_dpool_t *e;
    unsigned        n, cap;
} mgi_gpu_mpool_t;

/* Host state of a GPU endpoint (ep->gpu). */
typedef struct mgi_gpu_ep {
    int              device;
    cudaStream_t     ctl;           /* table updates */
    cudaStream_t     stream;        /* the sorter kernel */
    cudaEvent_t      ctl_done;      /* recorded on ctl by each wait */
    cudaEvent_t      sorter_done;   /* recorded after the sorter's launch */
    mgi_gpu_dep_t    *dep;          /* device */
    mgi_gpu_status_t *status;       /* mapped host memory */
    mgi_ring_t       **stage;       /* device array of stage rings */
    mgi_gpu_dch_t    **chs;
    mgi_gpu_block_t  *blk;
    mgi_gpu_lane_jobs_t *ljobs;     /* [nlanes] */
    unsigned         nblocks, nthreads, nlanes;
    size_t           smem;
    int              running;
    uint32_t         qseq;          /* the latest quiesce request
                                     * (mgi_gpu_quiesce_request) */
    mgi_gpu_dch_t    **dch_slot;    /* [max_channels]: each channel id's
                                     * device blob, allocated at the id's
                                     * first channel and kept for its next
                                     * ones (an id is reused only once the
                                     * sorter went past its last channel) */
    void             **deferred;    /* device memory to free once stopped */
    unsigned         ndeferred, deferred_cap;
    mgi_gpu_pooled_t *pool;         /* final rings of deleted channels */
    unsigned         npool, pool_cap;
    pthread_mutex_t  pool_lock;     /* channels come and go in any thread */
    /* direct rings of deleted channels (MGI_DIRECT_RINGS), for the next
     * channel of the same size: no allocation, no new CUDA IPC handle (so
     * other processes' mappings of it are reused), only the ring headers
     * zeroed; freed once the sorter stopped */
    mgi_gpu_mpool_t  dpool;
    /* sources' records (mgi_gpu_ch_t.dout) of deleted channels, for the
     * next of their size (no cudaMalloc at a create; ipc unused) */
    mgi_gpu_mpool_t  opool;
    /* pinned host memory a delete copies the direct rings' headers into,
     * MGI_GPU_DHDR_RINGS at a time (a strided copy into pageable memory
     * took 0.04-0.39 ms) */
    mgi_dring_t      *dhdr;
    pthread_mutex_t  dhdr_lock;     /* deletes in several threads */
    unsigned long    finals_reused, finals_new; /* for the info log */
} mgi_gpu_ep_t;

/* Host state of a channel at a GPU endpoint (ch->gpu[ep->index]). */
typedef struct mgi_gpu_ch {
    mgi_gpu_dch_t *dch;             /* device blob */
    mgi_ring_t    **final;          /* host copy of the device pointers */
    unsigned      nfinal;
    int           unpublished;      /* mgi_gpu_ch_unpublish took it from
                                     * the sorter's table, and asked: */
    uint32_t      unpub_mark;
    /* direct rings (MGI_DIRECT_RINGS=1, mgi_gpu_ch_direct_in / _out) */
    int           direct;
    uint32_t      dcap;             /* tuples a ring holds */
    size_t        dstride;          /* bytes from a ring to the next */
    uint32_t      dfirst;           /* a source: its first ring */
    unsigned      nin;              /* a destination: rings into it */
    void          *din;             /* ... in this GPU's memory, then */
    uint32_t      *dcur;            /* [nblocks] consumers' cursors */
    size_t        din_len;          /* bytes of both */
    size_t        dout_len;         /* bytes of dout */
    uint8_t       din_ipc[64];      /* its CUDA IPC handle */
    void          *dout;            /* a source: dbase[ndst], then
                                     * dprod[ndst * nblocks *
                                     * MGI_DRING_PROD_WORDS], then (land)
                                     * dland[ndst], dland_cap[ndst] */
    uint64_t      dland_off;        /* every destination's mgi_dland_t:
                                     * after its rings */
    int           land;             /* a source: a destination of it has
                                     * a landing buffer it can reach */
    int           land_in;          /* a destination: it has one */
} mgi_gpu_ch_t;

/* Run on the endpoint's device, give the caller's device back after. */
typedef struct mgi_gpu_dev_guard {
    int prev;
} mgi_gpu_dev_guard_t;

static inline mgi_gpu_ep_t *mgi_gpu_ep(mgi_ep_t *ep)
{
    return (mgi_gpu_ep_t*)ep->gpu;
}

/* A source's records in device memory (mgi_gpu_ch_t.dout), in 8-byte
 * words: dbase[ndst], dprod[ndst * nblocks * MGI_DRING_PROD_WORDS],
 * dland[ndst], dland_cap[ndst]; where each starts, and the total. */
enum { MGI_DOUT_BASE, MGI_DOUT_PROD, MGI_DOUT_LAND, MGI_DOUT_CAP,
       MGI_DOUT_WORDS };

/* The driver's cuMemGetAddressRange, found once (the runtime has no
 * call for an allocation's base). */
typedef int (*mgi_mem_range_fn_t)(unsigned long long *base, size_t *size,
                                  unsigned long long p);

/* ------------------------------------------- runtime (mgi_gpu_rt.cu) */

ucs_status_t mgi_gpu_enter(mgi_ep_t *ep, mgi_gpu_dev_guard_t *g);
void         mgi_gpu_leave(mgi_gpu_dev_guard_t *g);
ucs_status_t mgi_gpu_poke_nb(mgi_ep_t *ep, void *dev, const void *src,
                             size_t len);
ucs_status_t mgi_gpu_event_wait(mgi_ep_t *ep, cudaEvent_t ev,
                                const char *what);
ucs_status_t mgi_gpu_ctl_sync(mgi_ep_t *ep);
ucs_status_t mgi_gpu_poke(mgi_ep_t *ep, void *dev, const void *src,
                          size_t len);
void        *mgi_gpu_dev_alloc(mgi_ep_t *ep, size_t len);
void        *mgi_gpu_dev_zalloc(mgi_ep_t *ep, size_t len);
void         mgi_gpu_dev_free(mgi_ep_t *ep, void *p);
void        *mgi_gpu_host_dev_ptr(mgi_ep_t *ep, void *host);
void         mgi_gpu_pool_keep(mgi_ep_t *ep, mgi_gpu_mpool_t *pool,
                               void *mem, size_t len, const uint8_t *ipc);
void        *mgi_gpu_pool_take(mgi_ep_t *ep, mgi_gpu_mpool_t *pool,
                               size_t len, uint8_t *ipc);
void         mgi_gpu_pool_drop(mgi_gpu_mpool_t *pool);
ucs_status_t mgi_gpu_peer_reach(mgi_ep_t *ep, const void *p,
                                mgi_ep_id_t hop);
int          mgi_gpu_peer_atomics(mgi_ep_t *ep, const void *p);
mgi_mem_range_fn_t mgi_gpu_mem_range_fn(void);

/* ------------------------------ direct rings (mgi_gpu_direct.cu) */

void         mgi_gpu_dout_layout(unsigned ndst, unsigned nblocks,
                                 size_t at[MGI_DOUT_WORDS + 1]);
ucs_status_t mgi_gpu_ch_direct_done(mgi_ep_t *ep, mgi_channel_t *ch,
                                    const mgi_gpu_ch_t *gc);
void         mgi_gpu_dpool_put(mgi_ep_t *ep, mgi_gpu_ch_t *gc);
void         mgi_gpu_opool_put(mgi_ep_t *ep, void *p, size_t len);

#endif
