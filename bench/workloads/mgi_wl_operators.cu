/**
 * mgi_workloads' operators on the GPU: GroupBy (aggregate into the hash
 * table, then its groups) and Join (build, probe), the checksum of
 * received tuples, and the checks of a shuffle's and an operator's answer
 * against the CPU reference.
 */
#include "mgi_wl_int.h"
#include "mgi_wl_dev.cuh"

/* ------------------------------------------------------------- kernels */

unsigned wl_grid(uint64_t n, unsigned per_block)
{
    uint64_t g = (n + per_block - 1) / per_block;

    return (unsigned)std::max<uint64_t>(1, std::min<uint64_t>(g, 1u << 20));
}

/* Sum of tuple hashes of in[0..n) into acc[0] (and n into acc[1]) */
static __global__ void wl_checksum(const mgi_wl_tuple_t *in, uint64_t n,
                                   unsigned long long *acc)
{
    unsigned long long s = 0;
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        s += mgi_wl_tuple_hash(in[i].key, in[i].val);
    }
    wl_warp_add(acc, s, NULL);
}

static __global__ void wl_groupby_insert(const mgi_wl_tuple_t *in, uint64_t n,
                                         wl_slot_t *tab, uint64_t mask)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        (void)wl_group_add(tab, mask, in[i].key, in[i].val);
    }
}

/* groups into acc[1], sum of group hashes into acc[0] */
static __global__ void wl_groupby_result(const wl_slot_t *tab, uint64_t size,
                                         unsigned long long *acc)
{
    unsigned long long s = 0, c = 0;
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < size;
         i += (uint64_t)gridDim.x * blockDim.x) {
        if (tab[i].key != 0) {
            s += mgi_wl_group_hash((int64_t)tab[i].key, (int64_t)tab[i].val);
            ++c;
        }
    }
    wl_warp_add(acc, s, &c);
}

/* build side keys are unique (orderkey) */
static __global__ void wl_join_build(const mgi_wl_tuple_t *in, uint64_t n,
                                     wl_slot_t *tab, uint64_t mask)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        (void)wl_join_put(tab, mask, in[i].key, in[i].val);
    }
}

/* matches into acc[1], sum of join hashes into acc[0] */
static __global__ void wl_join_probe(const mgi_wl_tuple_t *in, uint64_t n,
                                     const wl_slot_t *tab, uint64_t mask,
                                     unsigned long long *acc)
{
    unsigned long long s = 0, c = 0;
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        wl_join_find(tab, mask, in[i].key, in[i].val, &s, &c);
    }
    wl_warp_add(acc, s, &c);
}

/* ------------------------------------------------------------- compute */

/* acc[2] from w->d_acc once the stream got there */
int wl_acc_get(wl_rank_t *w, unsigned long long acc[2])
{
    WL_CUDA(cudaMemcpyAsync(acc, w->d_acc, 2 * sizeof(*acc),
                            cudaMemcpyDeviceToHost, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    return 0;
}

/* GroupBy's answer from its filled table into acc */
int wl_groupby_answer(wl_rank_t *w, unsigned long long acc[2])
{
    WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc), w->stream));
    wl_groupby_result<<<WL_REDUCE_BLOCKS, WL_BLOCK, 0, w->stream>>>(
            w->table, w->table_size, w->d_acc);
    WL_CUDA(cudaGetLastError());
    return wl_acc_get(w, acc);
}

int wl_groupby(wl_rank_t *w, const mgi_wl_tuple_t *in, uint64_t n,
               unsigned long long acc[2])
{
    /* groups: at most the tuples, and at most the orders (every key, Zipf
     * or not, is some order's orderkey) */
    WL_CHECK(wl_table_reserve(w, std::min<uint64_t>(n,
                                                    w->spec.tpch.n_orders)));
    WL_CUDA(cudaMemsetAsync(w->table, 0, w->table_size * sizeof(wl_slot_t),
                            w->stream));
    wl_groupby_insert<<<wl_grid(n, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            in, n, w->table, w->table_size - 1);
    WL_CUDA(cudaGetLastError());
    return wl_groupby_answer(w, acc);
}

int wl_join(wl_rank_t *w, const mgi_wl_tuple_t *orders, uint64_t no,
            const mgi_wl_tuple_t *lines, uint64_t nl,
            unsigned long long acc[2])
{
    WL_CHECK(wl_table_reserve(w, no));
    WL_CUDA(cudaMemsetAsync(w->table, 0, w->table_size * sizeof(wl_slot_t),
                            w->stream));
    WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc), w->stream));
    wl_join_build<<<wl_grid(no, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            orders, no, w->table, w->table_size - 1);
    WL_CUDA(cudaGetLastError());
    wl_join_probe<<<wl_grid(nl, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            lines, nl, w->table, w->table_size - 1, w->d_acc);
    WL_CUDA(cudaGetLastError());
    return wl_acc_get(w, acc);
}

/* ------------------------------------------------------- verification */

/* Per-source checksums of t->recv against the reference. */
int wl_verify_recv(wl_rank_t *w, wl_table_t *t, int orders, int *ok)
{
    unsigned long long acc[2];
    uint64_t n, want_n, want_sum;
    int s, first, last;

    /* per source where the layout says, else this destination's total */
    for (s = 0; s < (t->by_source ? w->G : 1); ++s) {
        first    = t->by_source ? s : 0;
        last     = t->by_source ? s : w->G - 1;
        n        = t->recv_off[t->by_source ? s + 1 : w->G] -
                   t->recv_off[first];
        want_n   = 0;
        want_sum = 0;
        for (int src = first; src <= last; ++src) {
            want_n   += orders ? w->ref.o_count[src][w->me] :
                                 w->ref.l_count[src][w->me];
            want_sum += orders ? w->ref.o_sum[src][w->me] :
                                 w->ref.l_sum[src][w->me];
        }
        if (t->fused) {
            /* nothing in recv: the consumer summed what it took */
            acc[0] = t->fused_sum;
        } else {
            WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc),
                                    w->stream));
            if (n > 0) {
                wl_checksum<<<wl_grid(n, WL_BLOCK * 8), WL_BLOCK, 0,
                              w->stream>>>(t->recv + t->recv_off[first], n,
                                           w->d_acc);
                WL_CUDA(cudaGetLastError());
            }
            WL_CHECK(wl_acc_get(w, acc));
        }
        if ((n != want_n) || (acc[0] != want_sum)) {
            fprintf(stderr, "mgi_workloads rank %d: %s from %s %d: %llu "
                    "tuples sum %016llx, expected %llu sum %016llx\n",
                    w->me, orders ? "orders" : "lineitem",
                    t->by_source ? "rank" : "all ranks, first", first,
                    (unsigned long long)n, acc[0],
                    (unsigned long long)want_n,
                    (unsigned long long)want_sum);
            *ok = 0;
        }
    }
    /* what this rank sent must be what the reference says too */
    for (s = 0; s < w->G; ++s) {
        n      = t->send_off[s + 1] - t->send_off[s];
        want_n = orders ? w->ref.o_count[w->me][s] : w->ref.l_count[w->me][s];
        if (n != want_n) {
            fprintf(stderr, "mgi_workloads rank %d: sent %llu tuples to %d, "
                    "expected %llu\n", w->me, (unsigned long long)n, s,
                    (unsigned long long)want_n);
            *ok = 0;
        }
    }
    return 0;
}

void wl_verify_acc(wl_rank_t *w, const char *what,
                   const unsigned long long acc[2], uint64_t want_n,
                   uint64_t want_sum, int *ok)
{
    if ((acc[1] != want_n) || (acc[0] != want_sum)) {
        fprintf(stderr, "mgi_workloads rank %d: %s: %llu, sum %016llx; "
                "expected %llu, sum %016llx\n", w->me, what, acc[1], acc[0],
                (unsigned long long)want_n, (unsigned long long)want_sum);
        *ok = 0;
    }
}
