/**
 * Device helpers of mgi_workloads' kernels, shared by the units that
 * launch them (the partition kernel, GroupBy and Join, the MGI shuffle
 * kernel with its fused consumers): the warp's count into a shared
 * histogram, the warp's sum into global accumulators, and the hash
 * table's insert, aggregate and probe.  Static: each unit compiles its own
 * copy, so no unit needs relocatable device code.
 */
#ifndef MGI_WL_DEV_CUH
#define MGI_WL_DEV_CUH

#include "mgi_wl_int.h"

/*
 * Count `dst` in the block's shared histogram, one shared atomic per group
 * of lanes with the same destination (with few destinations, a per-thread
 * atomic would serialize most of the warp on one address).  Every lane of
 * the warp calls it; dst < 0 counts nothing.  Returns the lane's position
 * among the block's tuples for dst.
 */
static __device__ __forceinline__ unsigned wl_warp_count(unsigned int *hist,
                                                         int dst)
{
    unsigned lane  = threadIdx.x % 32;
    unsigned peers = __match_any_sync(0xffffffffu, dst);
    int leader     = __ffs(peers) - 1;
    unsigned base  = 0;

    if ((dst >= 0) && ((int)lane == leader)) {
        base = atomicAdd(&hist[dst], (unsigned)__popc(peers));
    }
    base = __shfl_sync(0xffffffffu, base, leader);
    return base + __popc(peers & ((1u << lane) - 1));
}

/* Warp: add every lane's s (and c, where given) into acc[0] (acc[1]) with
 * one atomic per warp. All 32 lanes call it. */
static __device__ void wl_warp_add(unsigned long long *acc,
                                   unsigned long long s,
                                   const unsigned long long *c)
{
    unsigned long long n = (c != NULL) ? *c : 0;
    int o;

    for (o = 16; o > 0; o /= 2) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        n += __shfl_down_sync(0xffffffffu, n, o);
    }
    if ((threadIdx.x % 32) == 0) {
        atomicAdd(&acc[0], s);
        if (c != NULL) {
            atomicAdd(&acc[1], n);
        }
    }
}

static __device__ __forceinline__ uint64_t wl_slot_of(int64_t key,
                                                      uint64_t mask)
{
    return mgi_tpch_mix64((uint64_t)key) & mask;
}

/* GroupBy: v into key's group (keys >= 1; 0 marks an empty slot).
 * Returns 0 if no slot was left for a new group. */
static __device__ __forceinline__ int wl_group_add_one(wl_slot_t *tab,
                                                       uint64_t mask,
                                                       int64_t k,
                                                       unsigned long long v)
{
    const unsigned long long key = (unsigned long long)k;
    unsigned long long prev;
    uint64_t h = wl_slot_of(k, mask), tries;

    for (tries = 0; tries <= mask; ++tries, h = (h + 1) & mask) {
        prev = tab[h].key;
        if (prev == 0) {
            prev = atomicCAS(&tab[h].key, 0ull, key);
        }
        if ((prev == 0) || (prev == key)) {
            atomicAdd(&tab[h].val, v);
            return 1;
        }
    }
    return 0;
}

/* Sum of v over the lanes of `lanes` (each of them calls it with the same
 * lanes), modulo 2^64: 3 warp reductions of 24-bit pieces (32 of them
 * fit in 32 bits; the hardware reduction adds 32-bit words only). */
static __device__ __forceinline__ unsigned long long
wl_lanes_sum64(unsigned lanes, unsigned long long v)
{
    const unsigned p = 0xffffffu;

    return (unsigned long long)__reduce_add_sync(lanes, (unsigned)v & p) +
           ((unsigned long long)__reduce_add_sync(lanes,
                                    (unsigned)(v >> 24) & p) << 24) +
           ((unsigned long long)__reduce_add_sync(lanes,
                                    (unsigned)(v >> 48)) << 48);
}

/* GroupBy: wl_group_add_one, the lanes of the warp here now with the same
 * key adding up their values first, so that a group takes one atomic a
 * warp, not one a tuple.  A skewed key's hot groups had taken every
 * variant's inserts to 81.8 ms at Zipf 1.5 and 19.7-20.6 at 1.0, all on
 * a few addresses; with the sum 7.6 and 10.4-10.7 ms, uniform 4.62-4.67
 * against 4.51-4.53 (2 x H200).  Returns 0 if no slot was left for a new
 * group. */
static __device__ __forceinline__ int wl_group_add(wl_slot_t *tab,
                                                   uint64_t mask, int64_t k,
                                                   int64_t v)
{
    const unsigned lanes = __match_any_sync(__activemask(),
                                            (unsigned long long)k);
    const unsigned me    = 1u << (threadIdx.x & 31u);
    unsigned long long s = (unsigned long long)v;

    if (lanes != me) {
        s = wl_lanes_sum64(lanes, s);
        if ((lanes & (me - 1u)) != 0) {
            return 1;   /* a lower lane adds the group's sum */
        }
    }
    return wl_group_add_one(tab, mask, k, s);
}

/* Join build: key -> val (build keys are unique: orderkey).  Returns 0 if
 * no slot was left. */
static __device__ __forceinline__ int wl_join_put(wl_slot_t *tab,
                                                  uint64_t mask, int64_t k,
                                                  int64_t v)
{
    uint64_t h = wl_slot_of(k, mask), tries;

    for (tries = 0; tries <= mask; ++tries, h = (h + 1) & mask) {
        if (atomicCAS(&tab[h].key, 0ull, (unsigned long long)k) == 0) {
            tab[h].val = (unsigned long long)v;
            return 1;
        }
    }
    return 0;
}

/* Join probe: a match of key adds its join hash to *s and one to *c */
static __device__ __forceinline__ void wl_join_find(const wl_slot_t *tab,
                                                    uint64_t mask, int64_t k,
                                                    int64_t v,
                                                    unsigned long long *s,
                                                    unsigned long long *c)
{
    unsigned long long key;
    uint64_t h = wl_slot_of(k, mask), tries;

    for (tries = 0; tries <= mask; ++tries, h = (h + 1) & mask) {
        key = tab[h].key;
        if (key == (unsigned long long)k) {
            *s += mgi_wl_join_hash(k, v, (int64_t)tab[h].val);
            *c += 1;
            return;
        }
        if (key == 0) {
            return;
        }
    }
}

#endif
