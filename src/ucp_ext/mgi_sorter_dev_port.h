/**
 * MGI sorter of a GPU endpoint, device side: its limits and the block
 * it is written for, CUDA's or a few host threads that emulate one
 * (test_mgi_sorter), with the clocks, the copies' loads in flight, the
 * bulk copies (TMA) and the lane jobs' sizes.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_PORT_H_
#define MGI_SORTER_DEV_PORT_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

#define MGI_GPU_MAX_ROUTES      256    /* sort rings of one GPU endpoint */
#define MGI_GPU_MAX_EMIT        4096   /* messages placed in one pass */
#define MGI_GPU_MAX_PENDING     16     /* flushes in flight per block */
#define MGI_GPU_MAX_SORTERS     64     /* sorter blocks */
#define MGI_GPU_SLOT_NONE       (-1)
#define MGI_GPU_SLOT_LOOPBACK   (-2)
#define MGI_GPU_SLOT_OUT        (-3)   /* a dst beyond the table */
#define MGI_GPU_NO_DST          0xffffu
#define MGI_GPU_STOP_POLL       32     /* rounds between stop-flag reads */
#define MGI_GPU_DST_CACHE       16     /* route lookups cached per walk */
#define MGI_GPU_RUN_MSG         512    /* largest message of a parallel
                                          walk (mgi_gpu_walk_run) */

#if defined(__CUDACC__)
#  define MGI_SDEV             __device__ static
#  define MGI_SDEV_INLINE      __device__ static inline
#  define MGI_TID              threadIdx.x
#  define MGI_NTH              blockDim.x
#  define MGI_BID              blockIdx.x
#  define MGI_NBLK             gridDim.x
#  define MGI_SYNC()           __syncthreads()
#  define MGI_SYNCWARP()       __syncwarp()
#  define MGI_FENCE()          __threadfence()
#  define MGI_FENCE_SYSTEM()   __threadfence_system()
#  define MGI_ATOMIC_ADD(_p, _v) atomicAdd((_p), (_v))
#  define MGI_ATOMIC_CAS(_p, _e, _v) atomicCAS((_p), (_e), (_v))
#  define MGI_ATOMIC_EXCH(_p, _v) atomicExch((_p), (_v))
#  define MGI_ATOMIC_MIN(_p, _v) atomicMin((_p), (_v))
#  define MGI_WARP             32u
typedef uint4 mgi_v16_t;
/* L2 only: a ring slot held another generation before */
#  define MGI_LD16(_src)       __ldcg((const uint4*)(_src))
#else
/* host emulation: a block is mgi_emu_nth host threads (thread-local
 * mgi_emu_tid) meeting at mgi_emu_sync(); the test sets them up */
extern unsigned mgi_emu_bid, mgi_emu_nblk, mgi_emu_nth;
extern thread_local unsigned mgi_emu_tid;
void mgi_emu_sync(void);
#  if defined(MGI_SORTER_SELFCHECK)
#    include <stdio.h>
#    include <stdlib.h>
/* the test's counter of passes that found a target full */
extern unsigned long mgi_selfcheck_blocked;
#  endif
#  define MGI_SDEV             static
#  define MGI_SDEV_INLINE      static inline
#  define MGI_TID              mgi_emu_tid
#  define MGI_NTH              mgi_emu_nth
#  define MGI_BID              mgi_emu_bid
#  define MGI_NBLK             mgi_emu_nblk
#  define MGI_SYNC()           mgi_emu_sync()
#  define MGI_SYNCWARP()       ((void)0) /* a thread is its warp */
#  define MGI_FENCE()          __atomic_thread_fence(__ATOMIC_SEQ_CST)
#  define MGI_FENCE_SYSTEM()   __atomic_thread_fence(__ATOMIC_SEQ_CST)
#  define MGI_ATOMIC_ADD(_p, _v) \
    __atomic_fetch_add((_p), (_v), __ATOMIC_ACQ_REL)
static inline uint32_t mgi_emu_cas(uint32_t *p, uint32_t e, uint32_t v)
{
    __atomic_compare_exchange_n(p, &e, v, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return e; /* the old value */
}
#  define MGI_ATOMIC_CAS(_p, _e, _v) mgi_emu_cas((_p), (_e), (_v))
#  define MGI_ATOMIC_EXCH(_p, _v) \
    __atomic_exchange_n((_p), (_v), __ATOMIC_ACQ_REL)
static inline void mgi_emu_min(int *p, int v)
{
    int old = __atomic_load_n(p, __ATOMIC_ACQUIRE);

    while ((v < old) &&
           !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
    }
}
#  define MGI_ATOMIC_MIN(_p, _v) mgi_emu_min((_p), (_v))
#  define MGI_WARP             1u   /* an emulated thread is its own warp */
typedef struct {
    uint64_t lo, hi;
} mgi_v16_t;
static inline mgi_v16_t mgi_emu_ld16(const void *p)
{
    mgi_v16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}
#  define MGI_LD16(_src)       mgi_emu_ld16(_src)
#endif
#define MGI_ST16(_dst, _v)     (*(mgi_v16_t*)(_dst) = (_v))
#if defined(__CUDACC__)
/* The SM's clock, read where it stands: a compiler barrier, so memory
 * operations are not moved across it and the info log's split of a pass
 * is the code's. clock64() is not one. */
MGI_SDEV_INLINE unsigned long long mgi_clock(void)
{
    unsigned long long c;

    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c) :: "memory");
    return c;
}

/* The GPU's global timer (ns): times between SMs, whose clocks differ */
MGI_SDEV_INLINE unsigned long long mgi_gtime(void)
{
    unsigned long long t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
    return t;
}
#  define MGI_CLOCK()          mgi_clock()
#  define MGI_GTIME()          mgi_gtime()
#else
#  define MGI_CLOCK()          0ull  /* emulation: no cycle counts */
#  define MGI_GTIME()          0ull
#endif

/* Loads each thread keeps in flight in the block copies: one block moves
 * data at (bytes in flight / memory latency), so 16 bytes per thread at a
 * time would cap a 256-thread block near 4 GB/s. */
#ifndef MGI_GPU_COPY_ILP
#  define MGI_GPU_COPY_ILP      8
#endif

/* Copies of whole segments and of a pass's segment into shared memory go
 * through the bulk-copy (TMA) unit on Hopper and later (sm_90): thread 0
 * issues them in MGI_GPU_TMA_BARS chunks, each completing on its own
 * mbarrier, so a whole segment is in flight at once; the block's threads
 * copying 16-byte lines kept 32 KB in flight and moved a 128 KiB segment
 * in about 16 k cycles. Build with -DMGI_GPU_NO_TMA for the thread copies. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && \
    !defined(MGI_GPU_NO_TMA)
#  define MGI_GPU_TMA           1
#else
#  define MGI_GPU_TMA           0
#endif
#define MGI_GPU_TMA_BARS        8

#define MGI_GPU_MAX_WARPS       32     /* 1024 threads */
#define MGI_GPU_DTAB            128    /* dst hash of a run: 2 x targets */
#ifndef MGI_GPU_LANE_JOBS
#  define MGI_GPU_LANE_JOBS     128    /* whole moves in flight per lane
                                        * (-D for trials: 256 measured no
                                        * faster between two GPUs) */
#endif
#define MGI_GPU_HELP_JOBS       8      /* whole moves a block copies a round */
#define MGI_GPU_CLAIM_TRIES     4      /* looks of a claim that lost its
                                        * compare-and-swap to another block
                                        * before it gives up for the round */
#define MGI_GPU_ISSUE_RUNS      8      /* runs of whole lane segments between
                                        * EOF segments a lane step issues */
#define MGI_GPU_FINAL_HINTS     128    /* final rings a block keeps a
                                        * reservation hint for (by index) */

#endif
