/**
 * mgi_workloads' runs: a distributed variant's iterations (shuffle the
 * table or tables, the operator, the checks, the slowest rank's times),
 * the single-GPU GroupBy / Join, and the report (a line per measurement,
 * the JSON after every variant).
 */
#include "mgi_wl_int.h"

double wl_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double wl_event_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;

    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

/* -------------------------------------------------------------- report */

mgi_wl_report_t wl_report;     /* filled on rank 0 */

/* JSON after every variant, so a later failure keeps what was measured */
void wl_save(wl_rank_t *w)
{
    if ((w->me == 0) && (w->opts->json != NULL)) {
        wl_report.nccl_version = (w->nccl.lib != NULL) ? w->nccl.version : 0;
        mgi_wl_report_json(&wl_report, w->opts->json);
    }
}

/* ------------------------------------------------------------ the runs */

/* max of each time over ranks; verified only if every rank verified */
static int wl_gather(wl_rank_t *w, const wl_times_t *mine, int my_ok,
                     wl_times_t *max, int *all_ok)
{
    struct { wl_times_t t; int ok; } me, all[MGI_WL_MAX_RANKS];
    int r;

    memset(&me, 0, sizeof(me));
    me.t  = *mine;
    me.ok = my_ok;
    WL_CHECK(mgi_wl_allgather(w->boot, &me, sizeof(me), all));
    memset(max, 0, sizeof(*max));
    *all_ok = 1;
    for (r = 0; r < w->G; ++r) {
        max->partition_ms = std::max(max->partition_ms, all[r].t.partition_ms);
        max->transfer_ms  = std::max(max->transfer_ms, all[r].t.transfer_ms);
        max->compute_ms   = std::max(max->compute_ms, all[r].t.compute_ms);
        max->total_ms     = std::max(max->total_ms, all[r].t.total_ms);
        *all_ok          &= all[r].ok;
    }
    return 0;
}

/* The answer of an operator fused into the MGI shuffle: GroupBy's groups
 * from its table, the Join's matches as the probe summed them */
static int wl_fused_result(wl_rank_t *w, unsigned long long acc[2])
{
    return (w->opts->op == WL_OP_GROUPBY) ? wl_groupby_answer(w, acc) :
                                            wl_acc_get(w, acc);
}

/* One iteration of a distributed variant: shuffle the table(s), compute. */
static int wl_iteration(wl_rank_t *w, const wl_variant_t *v, wl_times_t *t,
                        int verify, int *ok)
{
    wl_op_t op = w->opts->op;
    int join   = (op == WL_OP_JOIN);
    unsigned long long acc[2];
    /* a join's build side first: a fused probe needs the table built */
    wl_table_t *tabs[2] = {join ? &w->o : &w->l, &w->l};
    double t0, t1;
    int k;

    memset(t, 0, sizeof(*t));
    w->l.fused = w->o.fused = 0;
    WL_CHECK(mgi_wl_barrier(w->boot));
    t0 = wl_now_ms();
    for (k = 0; k < (join ? 2 : 1); ++k) {
        if (v->shuffle != NULL) {
            WL_CHECK(v->shuffle(w, tabs[k], t));
            continue;
        }
        WL_CUDA(cudaEventRecord(w->ev[0], w->stream));
        WL_CHECK(wl_partition(w, tabs[k]));
        WL_CUDA(cudaEventRecord(w->ev[1], w->stream));
        WL_CUDA(cudaEventSynchronize(w->ev[1]));
        t->partition_ms += wl_event_ms(w->ev[0], w->ev[1]);
        t1 = wl_now_ms();
        WL_CHECK(v->transfer(w, tabs[k]));
        t->transfer_ms += wl_now_ms() - t1;
    }
    WL_CUDA(cudaEventRecord(w->ev[2], w->stream));
    if (w->l.fused) {
        WL_CHECK(wl_fused_result(w, acc));
    } else if (op == WL_OP_GROUPBY) {
        WL_CHECK(wl_groupby(w, w->l.recv, w->l.recv_off[w->G], acc));
    } else if (join) {
        WL_CHECK(wl_join(w, w->o.recv, w->o.recv_off[w->G], w->l.recv,
                         w->l.recv_off[w->G], acc));
    }
    WL_CUDA(cudaEventRecord(w->ev[3], w->stream));
    WL_CUDA(cudaEventSynchronize(w->ev[3]));
    t->compute_ms = wl_event_ms(w->ev[2], w->ev[3]);
    t->total_ms   = wl_now_ms() - t0;
    if (!verify) {
        return 0;
    }
    WL_CHECK(wl_verify_recv(w, &w->l, 0, ok));
    if (join) {
        WL_CHECK(wl_verify_recv(w, &w->o, 1, ok));
        wl_verify_acc(w, "join matches", acc, w->ref.matches[w->me],
                      w->ref.join_sum[w->me], ok);
    } else if (op == WL_OP_GROUPBY) {
        wl_verify_acc(w, "groups", acc, w->ref.groups[w->me],
                      w->ref.group_sum[w->me], ok);
    }
    return 0;
}

static double wl_cross_bytes(const wl_rank_t *w)
{
    double b = 0;
    int s, d;

    for (s = 0; s < w->G; ++s) {
        for (d = 0; d < w->G; ++d) {
            if (s != d) {
                b += (double)w->ref.l_count[s][d];
                if (w->opts->op == WL_OP_JOIN) {
                    b += (double)w->ref.o_count[s][d];
                }
            }
        }
    }
    return b * sizeof(mgi_wl_tuple_t);
}

static double wl_input_bytes(const wl_rank_t *w)
{
    double b = 0;
    int s, d;

    for (s = 0; s < w->G; ++s) {
        for (d = 0; d < w->G; ++d) {
            b += (double)w->ref.l_count[s][d];
            if (w->opts->op == WL_OP_JOIN) {
                b += (double)w->ref.o_count[s][d];
            }
        }
    }
    return b * sizeof(mgi_wl_tuple_t);
}

int wl_run_variant(wl_rank_t *w, const wl_variant_t *v)
{
    const wl_opts_t *o = w->opts;
    mgi_wl_result_t res;
    wl_times_t t, tmax;
    int i, ok, all_ok, init_ok, inits[MGI_WL_MAX_RANKS], r;

    memset(&res, 0, sizeof(res));
    snprintf(res.op, sizeof(res.op), "%s", wl_op_names[o->op]);
    snprintf(res.variant, sizeof(res.variant), "%s", v->name);
    init_ok = (v->init(w) == 0);
    WL_CHECK(mgi_wl_allgather(w->boot, &init_ok, sizeof(init_ok), inits));
    for (r = 0; r < w->G; ++r) {
        if (!inits[r]) {
            if (w->me == 0) {
                mgi_wl_report_absent(&wl_report, v->name,
                                     "setup failed on a rank (see stderr)",
                                     stdout);
            }
            v->fini(w, 0);
            return 0;
        }
    }
    all_ok = 1;
    for (i = 0; i < o->warmup + o->iters; ++i) {
        ok = 1;
        /* every iteration is checked: a variant that is right once and
         * wrong later is wrong */
        WL_CHECK(wl_iteration(w, v, &t, 1, &ok));
        WL_CHECK(wl_gather(w, &t, ok, &tmax, &r));
        all_ok &= r;
        if (i >= o->warmup) {
            res.t[res.iters++] = tmax;
        }
    }
    v->fini(w, 1);
    res.verified    = all_ok;
    res.input_bytes = wl_input_bytes(w);
    res.cross_bytes = wl_cross_bytes(w);
    if (w->me == 0) {
        mgi_wl_report_add(&wl_report, &res, stdout);
        wl_save(w);
    }
    return all_ok ? 0 : 1;
}

/* GroupBy / Join of the whole data set on this GPU alone: data generated
 * in place (not timed), then the operator, timed, every iteration checked
 * against the reference totals.  Returns -1 on a CUDA error. */
static int wl_single_compute(wl_rank_t *w, mgi_wl_result_t *res,
                             mgi_wl_tuple_t **l, mgi_wl_tuple_t **ord)
{
    const wl_opts_t *o = w->opts;
    uint64_t nl = 0, no = 0, want_n = 0, want_sum = 0;
    unsigned long long acc[2];
    wl_times_t t;
    int i, d, ok = 1;

    WL_CHECK(wl_gen_lineitem(w, 0, w->spec.tpch.n_orders, l, &nl));
    if (o->op == WL_OP_JOIN) {
        WL_CHECK(wl_gen_orders(w, 0, w->spec.tpch.n_orders, ord, &no));
    }
    for (d = 0; d < w->G; ++d) {
        want_n   += (o->op == WL_OP_JOIN) ? w->ref.matches[d] :
                                            w->ref.groups[d];
        want_sum += (o->op == WL_OP_JOIN) ? w->ref.join_sum[d] :
                                            w->ref.group_sum[d];
    }
    for (i = 0; i < o->warmup + o->iters; ++i) {
        memset(&t, 0, sizeof(t));
        WL_CUDA(cudaEventRecord(w->ev[2], w->stream));
        if (o->op == WL_OP_JOIN) {
            WL_CHECK(wl_join(w, *ord, no, *l, nl, acc));
        } else {
            WL_CHECK(wl_groupby(w, *l, nl, acc));
        }
        WL_CUDA(cudaEventRecord(w->ev[3], w->stream));
        WL_CUDA(cudaEventSynchronize(w->ev[3]));
        t.compute_ms = wl_event_ms(w->ev[2], w->ev[3]);
        t.total_ms   = t.compute_ms;
        wl_verify_acc(w, "single", acc, want_n, want_sum, &ok);
        if (i >= o->warmup) {
            res->t[res->iters++] = t;
        }
    }
    res->verified    = ok;
    res->input_bytes = (double)(nl + no) * sizeof(mgi_wl_tuple_t);
    return 0;
}

/* Rank 0 runs the single-GPU variant while the others wait; a failure
 * (e.g. the whole data set does not fit one GPU) is reported, not fatal. */
int wl_run_single(wl_rank_t *w)
{
    mgi_wl_tuple_t *l = NULL, *ord = NULL;
    mgi_wl_result_t res;
    int rc = 0;

    memset(&res, 0, sizeof(res));
    snprintf(res.op, sizeof(res.op), "%s", wl_op_names[w->opts->op]);
    snprintf(res.variant, sizeof(res.variant), "single");
    if (w->me == 0) {
        if (wl_single_compute(w, &res, &l, &ord) == 0) {
            mgi_wl_report_add(&wl_report, &res, stdout);
            rc = res.verified ? 0 : 1;
        } else {
            mgi_wl_report_absent(&wl_report, "single",
                                 "failed on GPU 0 (see stderr)", stdout);
            cudaGetLastError();     /* not sticky: clear it */
        }
        cudaFree(l);
        cudaFree(ord);
        cudaFree(w->table);
        w->table      = NULL;
        w->table_size = 0;
    }
    WL_CHECK(mgi_wl_barrier(w->boot));
    return rc;
}
