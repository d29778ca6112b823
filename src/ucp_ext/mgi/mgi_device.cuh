/**
 * MGI device API (paper §3.1): Send, Flush and Recv called from kernels,
 * non-blocking, at thread, warp and block level, over the same ring
 * protocol as the host (mgi/mgi_ring.h).
 *
 *   send  returns bytes accepted, or 0 when the block's stage ring is full;
 *         destination: explicit dst wins, else schema + partition key
 *         choose key % |DstEps|, else broadcast.
 *   flush (block level) appends EOF to the block's stage ring and waits
 *         until the sorter/mover report the block's tuples delivered;
 *         returns a status, mgi_dev_status_t (mgi_dev_ch.h).
 *   recv  returns bytes, 0 when nothing is ready, or MGI_DEV_EOF once every
 *         source flushed and the block's final ring is drained.
 * A count is >= 0 and a status other than MGI_DEV_OK < 0, so a call that
 * counts answers either in one int.
 *
 * _warp variants are called by all 32 lanes together, _block variants by
 * all threads of the block; they reserve once and write their tuples
 * side by side (coalesced). mgi_dev_send_block_tile sends a block's tile
 * of tuples from memory with one reservation for up to a stage segment.
 *
 * The host fills an mgi_dev_ch_t for a GPU endpoint with
 * mgi_ch_device_handle() (mgi.h); pass it to kernels by value and take its
 * address. Flush counts one EOF per stage ring: launch the kernel with
 * `blocks` blocks (mgi_ep_params_t) and let every block flush once.
 *
 * Stage groups (MGI_STAGE_GROUPS): a user block has h->ngroups stage
 * rings, and a tuple for the channel's destination number i goes to ring
 * i % ngroups (broadcasts, and a warp send whose lanes differ, to ring 0).
 * With a group per destination every stage segment holds one destination,
 * and the sorter moves it whole instead of walking its messages. A flush
 * appends its EOF to each of the block's rings. Tuples of one block for
 * one destination keep their order.
 */
#ifndef MGI_DEVICE_CUH_
#define MGI_DEVICE_CUH_

#include "mgi_ring.h"
#include "mgi_dev_ch.h"

#define MGI_DEV_DST_AUTO  (-1)
/* Tile sends only (mgi_dev_send_block_tile_map): a function of the
 * caller's names each tuple's destination number */
#define MGI_DEV_DST_MAP   (-2)
#define MGI_DEV_RECV_ILP  8         /* loads per thread in flight */
#ifndef MGI_DEV_DRING_V16
#  define MGI_DEV_DRING_V16 1   /* 0: direct-ring tile sends store in
                                 * 8-byte words only */
#endif

/* Stage rings per user block, as the device calls use them. */
__device__ static inline unsigned mgi_dev_ngroups(const mgi_dev_ch_t *h)
{
    return (h->ngroups <= 1) ? 1u :
           min(h->ngroups, (uint32_t)MGI_STAGE_GROUPS_MAX);
}

/* This block's stage ring of group g. */
__device__ static inline mgi_ring_t *mgi_dev_stage_of(const mgi_dev_ch_t *h,
                                                      unsigned g)
{
    return h->stage[g * h->nblocks + blockIdx.x % h->nblocks];
}

__device__ static inline mgi_ring_t *mgi_dev_stage(const mgi_dev_ch_t *h)
{
    return mgi_dev_stage_of(h, 0);
}

/* The API's parts, in this order: each uses those before it. */
#include "mgi_device_report.cuh"     /* deadlines, reports to the host */
#include "mgi_device_send.cuh"       /* thread and warp sends */
#include "mgi_device_dring.cuh"      /* direct rings */
#include "mgi_device_send_block.cuh" /* block sends */
#include "mgi_device_tile_plan.cuh"  /* tile slots, fits, reservations */
#include "mgi_device_tile.cuh"       /* tile sends */
#include "mgi_device_flush.cuh"      /* EOF and flush */
#include "mgi_device_recv.cuh"       /* receives */

/* ------------------------------------------------ one call per operation
 * The level a call is made at is a template argument: each entry point
 * below compiles to the variant of that level (the calls named by their
 * level, mgi_dev_send_warp, mgi_dev_recv_block, ..., which stay), with
 * nothing added; a level the operation does not have fails to compile.
 * NCCL's device API picks its cooperation at compile time the same way.
 *
 *   operation                                      THREAD  WARP  BLOCK
 *   mgi_dev_send<L>(h, tuple, len, dst)              x       x     x
 *   mgi_dev_send_tile<L>(h, tuples, n, dst [, counts]),
 *     _tile_of<L, TS [, SLOTS]>, _tile_map<L, TS>                   x
 *   mgi_dev_recv<L>(h, buf, cap)                     x             x
 *   mgi_dev_recv_to<L>(h, cap, place),
 *     mgi_dev_recv_each<L>(h, max, f)                               x
 *   mgi_dev_flush<L>(h, spin_limit),
 *     mgi_dev_flush_nb<L>(h, &state)                                x
 *
 * Each answers what its variant answers: a send a count (0: nothing
 * taken), a receive a count or MGI_DEV_EOF, mgi_dev_flush a status. */
typedef enum {
    MGI_DEV_THREAD,     /* one thread calls */
    MGI_DEV_WARP,       /* all 32 lanes of a warp call together */
    MGI_DEV_BLOCK       /* every thread of the block calls */
} mgi_dev_level_t;

template <mgi_dev_level_t L>
__device__ static __forceinline__ int mgi_dev_send(const mgi_dev_ch_t *h,
                                                   const void *tuple,
                                                   unsigned len, int dst)
{
    if constexpr (L == MGI_DEV_THREAD) {
        return mgi_dev_send(h, tuple, len, dst);
    } else if constexpr (L == MGI_DEV_WARP) {
        return mgi_dev_send_warp(h, tuple, len, dst);
    } else {
        return mgi_dev_send_block(h, tuple, len, dst);
    }
}

template <mgi_dev_level_t L>
__device__ static __forceinline__ unsigned
mgi_dev_send_tile(const mgi_dev_ch_t *h, const void *tuples, unsigned n,
                  int dst, uint32_t *counts = NULL)
{
    static_assert(L == MGI_DEV_BLOCK, "a tile is sent by the whole block");
    return mgi_dev_send_block_tile(h, tuples, n, dst, counts);
}

template <mgi_dev_level_t L, unsigned TS, unsigned SLOTS = MGI_DEV_TILE_ANY>
__device__ static __forceinline__ unsigned
mgi_dev_send_tile_of(const mgi_dev_ch_t *h, const void *tuples, unsigned n,
                     int dst, uint32_t *counts = NULL)
{
    static_assert(L == MGI_DEV_BLOCK, "a tile is sent by the whole block");
    return mgi_dev_send_block_tile_of<TS, SLOTS>(h, tuples, n, dst, counts);
}

template <mgi_dev_level_t L, unsigned TS, typename F>
__device__ static __forceinline__ unsigned
mgi_dev_send_tile_map(const mgi_dev_ch_t *h, const void *tuples, unsigned n,
                      F dst_of, uint32_t *counts = NULL)
{
    static_assert(L == MGI_DEV_BLOCK, "a tile is sent by the whole block");
    return mgi_dev_send_block_tile_map<TS>(h, tuples, n, dst_of, counts);
}

template <mgi_dev_level_t L>
__device__ static __forceinline__ int mgi_dev_recv(const mgi_dev_ch_t *h,
                                                   void *buf, unsigned cap)
{
    static_assert(L != MGI_DEV_WARP,
                  "no warp-level receive: receive at thread or block level");
    if constexpr (L == MGI_DEV_THREAD) {
        return mgi_dev_recv(h, buf, cap);
    } else {
        return mgi_dev_recv_block(h, buf, cap);
    }
}

template <mgi_dev_level_t L, typename P>
__device__ static __forceinline__ int mgi_dev_recv_to(const mgi_dev_ch_t *h,
                                                      unsigned cap, P place)
{
    static_assert(L == MGI_DEV_BLOCK, "a placed receive is the block's");
    return mgi_dev_recv_block_to(h, cap, place);
}

template <mgi_dev_level_t L, typename F>
__device__ static __forceinline__ int
mgi_dev_recv_each(const mgi_dev_ch_t *h, unsigned max_bytes, F f)
{
    static_assert(L == MGI_DEV_BLOCK, "an in-place receive is the block's");
    return mgi_dev_recv_block_each(h, max_bytes, f);
}

template <mgi_dev_level_t L>
__device__ static __forceinline__ mgi_dev_status_t
mgi_dev_flush(const mgi_dev_ch_t *h, unsigned long long spin_limit)
{
    static_assert(L == MGI_DEV_BLOCK, "a flush is the block's");
    return mgi_dev_flush(h, spin_limit);
}

template <mgi_dev_level_t L>
__device__ static __forceinline__ int mgi_dev_flush_nb(const mgi_dev_ch_t *h,
                                                       uint32_t *state)
{
    static_assert(L == MGI_DEV_BLOCK, "a flush is the block's");
    return mgi_dev_flush_nb(h, state);
}

#endif
