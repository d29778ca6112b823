/**
 * What every variant of the workloads must produce, and the CPU reference
 * that computes it from the generator alone.
 *
 * Tuples are 16 bytes, {key, val}: lineitem gives (orderkey or, with a Zipf
 * option, zkey; extendedprice), orders gives (orderkey; custkey).  Answers
 * are order-independent sums of 64-bit hashes (wrapping), so any
 * partitioning, transfer order or hash-table layout gives the same numbers:
 *   exchange  per (source, destination): tuples and sum of tuple hashes
 *   groupby   per destination: groups and sum of hash(key, sum(val))
 *   join      per destination: matches and sum of hash(l.key, l.val, o.val)
 */
#ifndef MGI_WL_REF_H_
#define MGI_WL_REF_H_

#include "mgi_tpch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MGI_WL_MAX_GPUS 16

/* 16-byte aligned: a GPU thread loads or stores a tuple in one 16-byte
 * access, every variant's kernels alike (two 8-byte stores of a warp each
 * write every other 8 bytes of the sectors they touch) */
typedef struct __attribute__((aligned(16))) mgi_wl_tuple {
    int64_t key;
    int64_t val;
} mgi_wl_tuple_t;

/* Who sends what to whom (paper §6.1, §6.3) */
typedef enum {
    MGI_WL_PATTERN_EXCHANGE = 0, /* all to all by key % G (many-to-many) */
    MGI_WL_PATTERN_MANY2ONE,     /* ranks > 0 hold data, send keys with
                                    key % G == 0 (1/G) to rank 0, keep the
                                    rest; rank 0 holds none */
    MGI_WL_PATTERN_ONE2MANY,     /* rank 0 alone has data, sends by key % G */
    MGI_WL_PATTERN_P2P,          /* rank 0 alone has data, sends all to 1 */
    MGI_WL_PATTERN_LAST
} mgi_wl_pattern_t;

MGI_TPCH_HD uint64_t mgi_wl_tuple_hash(int64_t key, int64_t val)
{
    return mgi_tpch_mix64((uint64_t)key * 0x9e3779b97f4a7c15ull ^
                          mgi_tpch_mix64((uint64_t)val));
}

MGI_TPCH_HD uint64_t mgi_wl_group_hash(int64_t key, int64_t sum)
{
    return mgi_tpch_mix64((uint64_t)key ^
                          mgi_tpch_mix64((uint64_t)sum + 0x5bd1e995ull));
}

MGI_TPCH_HD uint64_t mgi_wl_join_hash(int64_t key, int64_t lval, int64_t oval)
{
    return mgi_tpch_mix64((uint64_t)key ^ mgi_tpch_mix64((uint64_t)lval) ^
                          mgi_tpch_mix64((uint64_t)oval + 0x2545f491ull));
}

/* Destination of a tuple with `key` held by rank `src` (G >= 1). */
MGI_TPCH_HD int mgi_wl_dest(mgi_wl_pattern_t pat, int64_t key, int src,
                            int G)
{
    int d = (int)((uint64_t)key % (uint64_t)G);

    switch (pat) {
    case MGI_WL_PATTERN_MANY2ONE:
        return (d == 0) ? 0 : src;
    case MGI_WL_PATTERN_P2P:
        return (G > 1) ? 1 : 0;
    default:
        return d;
    }
}

/* Does rank `r` hold input for this pattern?  (Data of slice r of G.) */
MGI_TPCH_HD int mgi_wl_has_input(mgi_wl_pattern_t pat, int r)
{
    switch (pat) {
    case MGI_WL_PATTERN_MANY2ONE:
        return r != 0;
    case MGI_WL_PATTERN_ONE2MANY:
    case MGI_WL_PATTERN_P2P:
        return r == 0;
    default:
        return 1;
    }
}

/* The workload: data, GPUs, pattern */
typedef struct mgi_wl_spec {
    mgi_tpch_params_t      tpch;
    const mgi_tpch_zipf_t *zipf;    /* NULL: lineitem key is orderkey */
    int                    gpus;
    mgi_wl_pattern_t       pattern;
} mgi_wl_spec_t;

typedef struct mgi_wl_answer {
    int      gpus;
    /* lineitem and orders shuffles: [src][dst] */
    uint64_t l_count[MGI_WL_MAX_GPUS][MGI_WL_MAX_GPUS];
    uint64_t l_sum[MGI_WL_MAX_GPUS][MGI_WL_MAX_GPUS];
    uint64_t o_count[MGI_WL_MAX_GPUS][MGI_WL_MAX_GPUS];
    uint64_t o_sum[MGI_WL_MAX_GPUS][MGI_WL_MAX_GPUS];
    /* per destination */
    uint64_t groups[MGI_WL_MAX_GPUS];
    uint64_t group_sum[MGI_WL_MAX_GPUS];
    uint64_t matches[MGI_WL_MAX_GPUS];
    uint64_t join_sum[MGI_WL_MAX_GPUS];
} mgi_wl_answer_t;

enum {
    MGI_WL_REF_EXCHANGE = 1u << 0,  /* l_count/l_sum */
    MGI_WL_REF_ORDERS   = 1u << 1,  /* o_count/o_sum */
    MGI_WL_REF_GROUPBY  = 1u << 2,
    MGI_WL_REF_JOIN     = 1u << 3
};

/* Compute the parts of the answer named in `what` from the generator
 * (OpenMP-parallel when built with it).  Returns 0, or -1 on bad input or
 * no memory. */
int mgi_wl_ref_compute(const mgi_wl_spec_t *spec, unsigned what,
                       mgi_wl_answer_t *ans);

/* Fill tuples of lineitem (orders) rows from generated columns. */
void mgi_wl_ref_lineitem_tuple(const mgi_wl_spec_t *spec, uint64_t order,
                               unsigned line, mgi_wl_tuple_t *t);
void mgi_wl_ref_orders_tuple(const mgi_wl_spec_t *spec, uint64_t order,
                             mgi_wl_tuple_t *t);

/* Order index of an orderkey (inverse of mgi_tpch_orderkey). */
MGI_TPCH_HD uint64_t mgi_wl_order_of_key(int64_t key)
{
    uint64_t k = (uint64_t)key - 1;

    return (k / 32) * 8 + k % 32;
}

#ifdef __cplusplus
}
#endif

#endif
