/**
 * mgi_workloads' data: this rank's lineitem and orders slices generated on
 * its GPU in place and packed as {key, val} tuples, the tables a shuffle
 * moves (input, partition, receive room) and the hash table GroupBy and
 * Join share; and gencheck, the GPU generator against the host one, byte
 * for byte.
 */
#include "mgi_wl_int.h"

static __global__ void wl_pack_lineitem(const int64_t *key,
                                        const int64_t *val, uint64_t n,
                                        mgi_wl_tuple_t *out)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        out[i].key = key[i];
        out[i].val = val[i];
    }
}

static __global__ void wl_pack_orders(const int64_t *key, const int32_t *val,
                                      uint64_t n, mgi_wl_tuple_t *out)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        out[i].key = key[i];
        out[i].val = val[i];
    }
}

/* ----------------------------------------------------- data generation */

/* Generate this rank's lineitem slice (orders [b, e)) as tuples. */
int wl_gen_lineitem(wl_rank_t *w, uint64_t b, uint64_t e,
                    mgi_wl_tuple_t **out, uint64_t *n)
{
    mgi_tpch_lineitem_t c;
    uint64_t *offsets = NULL;
    int64_t *key = NULL, *val = NULL;

    WL_CHECK(mgi_tpch_gpu_lineitem_offsets(&w->spec.tpch, b, e, &offsets, n,
                                           w->stream));
    WL_CUDA(cudaMalloc((void**)&key, (*n + 1) * sizeof(int64_t)));
    WL_CUDA(cudaMalloc((void**)&val, (*n + 1) * sizeof(int64_t)));
    WL_CUDA(cudaMalloc((void**)out, (*n + 1) * sizeof(mgi_wl_tuple_t)));
    memset(&c, 0, sizeof(c));
    if (w->spec.zipf != NULL) {
        c.zkey = key;
    } else {
        c.orderkey = key;
    }
    c.extendedprice = val;
    WL_CHECK(mgi_tpch_gpu_lineitem_gen(&w->spec.tpch, w->zipf_dev, b, e,
                                       offsets, &c, w->stream));
    wl_pack_lineitem<<<wl_grid(*n, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            key, val, *n, *out);
    WL_CUDA(cudaGetLastError());
    WL_CUDA(cudaStreamSynchronize(w->stream));
    cudaFree(offsets);
    cudaFree(key);
    cudaFree(val);
    return 0;
}

int wl_gen_orders(wl_rank_t *w, uint64_t b, uint64_t e,
                  mgi_wl_tuple_t **out, uint64_t *n)
{
    mgi_tpch_orders_t c;
    int64_t *key = NULL;
    int32_t *val = NULL;

    *n = e - b;
    WL_CUDA(cudaMalloc((void**)&key, (*n + 1) * sizeof(int64_t)));
    WL_CUDA(cudaMalloc((void**)&val, (*n + 1) * sizeof(int32_t)));
    WL_CUDA(cudaMalloc((void**)out, (*n + 1) * sizeof(mgi_wl_tuple_t)));
    c.orderkey  = key;
    c.custkey   = val;
    c.orderdate = NULL;
    WL_CHECK(mgi_tpch_gpu_orders_gen(&w->spec.tpch, b, e, &c, w->stream));
    wl_pack_orders<<<wl_grid(*n, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            key, val, *n, *out);
    WL_CUDA(cudaGetLastError());
    WL_CUDA(cudaStreamSynchronize(w->stream));
    cudaFree(key);
    cudaFree(val);
    return 0;
}

/* Input of this rank and room to receive: the receive capacity is every
 * rank's input (any skew fits). */
int wl_table_setup(wl_rank_t *w, wl_table_t *t, int orders)
{
    uint64_t b, e, all[MGI_WL_MAX_RANKS];
    int r;

    memset(t, 0, sizeof(*t));
    mgi_tpch_slice(w->spec.tpch.n_orders, w->me, w->G, &b, &e);
    if (!mgi_wl_has_input(w->spec.pattern, w->me)) {
        e = b;
    }
    if (orders) {
        WL_CHECK(wl_gen_orders(w, b, e, &t->in, &t->n_in));
    } else {
        WL_CHECK(wl_gen_lineitem(w, b, e, &t->in, &t->n_in));
    }
    WL_CHECK(mgi_wl_allgather(w->boot, &t->n_in, sizeof(t->n_in), all));
    for (r = 0; r < w->G; ++r) {
        t->cap += all[r];
    }
    WL_CUDA(cudaMalloc((void**)&t->part,
                       (t->n_in + 1) * sizeof(mgi_wl_tuple_t)));
    WL_CUDA(cudaMalloc((void**)&t->recv,
                       (t->cap + 1) * sizeof(mgi_wl_tuple_t)));
    return 0;
}

void wl_table_free(wl_table_t *t)
{
    cudaFree(t->in);
    cudaFree(t->part);
    cudaFree(t->recv);
    memset(t, 0, sizeof(*t));
}

int wl_table_reserve(wl_rank_t *w, uint64_t keys)
{
    uint64_t size = 1024;

    while (size < 2 * keys) {
        size *= 2;
    }
    if (size <= w->table_size) {
        return 0;
    }
    cudaFree(w->table);
    w->table = NULL;
    WL_CUDA(cudaMalloc((void**)&w->table, size * sizeof(wl_slot_t)));
    w->table_size = size;
    return 0;
}

/* GPU generator against the host generator, byte for byte, this rank's
 * slice, all columns. */
int wl_gencheck(wl_rank_t *w)
{
    uint64_t b, e, n, *offsets = NULL;
    mgi_tpch_lineitem_t dc, hc;
    mgi_tpch_orders_t dor, hor;
    int ok = 1, all[MGI_WL_MAX_RANKS], r;
    std::vector<char> h, g;
    size_t k;

    mgi_tpch_slice(w->spec.tpch.n_orders, w->me, w->G, &b, &e);
    WL_CHECK(mgi_tpch_gpu_lineitem_offsets(&w->spec.tpch, b, e, &offsets, &n,
                                           w->stream));
    if (n != mgi_tpch_lineitem_count(&w->spec.tpch, b, e)) {
        fprintf(stderr, "gencheck rank %d: GPU counts %llu lineitems\n",
                w->me, (unsigned long long)n);
        ok = 0;
    }
    /* columns back to back: 8+8+4+1+4+8+4+4 = 41 bytes a row */
    const size_t widths[] = {8, 8, 4, 1, 4, 8, 4, 4};
    size_t off[9] = {0};
    for (k = 0; k < 8; ++k) {
        /* every column 8-byte aligned: the GPU faults on misaligned stores */
        off[k + 1] = off[k] + (widths[k] * (n + 1) + 7) / 8 * 8;
    }
    h.assign(off[8], 0);
    g.assign(off[8], 1);
    char *d = NULL;
    WL_CUDA(cudaMalloc((void**)&d, off[8]));
    WL_CUDA(cudaMemset(d, 0, off[8]));
#define WL_COLS(_c, _base) \
    _c.orderkey      = (int64_t*)(_base + off[0]); \
    _c.zkey          = (w->spec.zipf != NULL) ? \
                       (int64_t*)(_base + off[1]) : NULL; \
    _c.partkey       = (int32_t*)(_base + off[2]); \
    _c.linenumber    = (int8_t*)(_base + off[3]); \
    _c.quantity      = (int32_t*)(_base + off[4]); \
    _c.extendedprice = (int64_t*)(_base + off[5]); \
    _c.discount      = (int32_t*)(_base + off[6]); \
    _c.tax           = (int32_t*)(_base + off[7]);
    WL_COLS(dc, d);
    WL_COLS(hc, h.data());
#undef WL_COLS
    WL_CHECK(mgi_tpch_gpu_lineitem_gen(&w->spec.tpch, w->zipf_dev, b, e,
                                       offsets, &dc, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    WL_CUDA(cudaMemcpy(g.data(), d, off[8], cudaMemcpyDeviceToHost));
    mgi_tpch_lineitem_gen(&w->spec.tpch, w->spec.zipf, b, e, &hc);
    if (h != g) {
        fprintf(stderr, "gencheck rank %d: lineitem bytes differ\n", w->me);
        ok = 0;
    }
    cudaFree(d);
    cudaFree(offsets);
    /* orders */
    size_t no = e - b, ob = no * (8 + 4 + 4);
    std::vector<char> ho(ob, 0), go(ob, 1);
    WL_CUDA(cudaMalloc((void**)&d, ob + 1));
    dor.orderkey  = (int64_t*)d;
    dor.custkey   = (int32_t*)(d + no * 8);
    dor.orderdate = (int32_t*)(d + no * 12);
    hor.orderkey  = (int64_t*)ho.data();
    hor.custkey   = (int32_t*)(ho.data() + no * 8);
    hor.orderdate = (int32_t*)(ho.data() + no * 12);
    WL_CHECK(mgi_tpch_gpu_orders_gen(&w->spec.tpch, b, e, &dor, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    WL_CUDA(cudaMemcpy(go.data(), d, ob, cudaMemcpyDeviceToHost));
    mgi_tpch_orders_gen(&w->spec.tpch, b, e, &hor);
    if (ho != go) {
        fprintf(stderr, "gencheck rank %d: orders bytes differ\n", w->me);
        ok = 0;
    }
    cudaFree(d);
    WL_CHECK(mgi_wl_allgather(w->boot, &ok, sizeof(ok), all));
    for (r = 0; r < w->G; ++r) {
        ok &= all[r];
    }
    if (w->me == 0) {
        printf("gencheck  gpus=%d sf=%.3f zipf=%s rows=%llu(rank0) "
               "gpu_equals_host=%s\n", w->G, w->spec.tpch.sf,
               (w->spec.zipf != NULL) ? "on" : "off", (unsigned long long)n,
               ok ? "ok" : "FAILED");
    }
    return ok ? 0 : 1;
}
