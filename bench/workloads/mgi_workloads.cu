/**
 * mgi_workloads: the paper's data-processing evaluation (§6.1-6.3, §6.6) as
 * one program.  One process per GPU (forked here), TPC-H-like data
 * generated on each GPU in place, and every variant run on the same data in
 * the same invocation:
 *
 *   nccl    partition kernel, then grouped ncclSend/ncclRecv (counts, data)
 *   ucx     partition kernel, then ucp_tag_send_nbx/recv_nbx per peer
 *           (transports from UCX_TLS, e.g. sm,self,cuda_copy,cuda_ipc)
 *   ucx_mgi the same with the transports set to sm,self,cuda_copy,cuda_mgi
 *           (or $MGI_WL_UCX_MGI_TLS)
 *   peer    no communication library: the partition kernel's second pass
 *           stores each tuple straight into its destination's receive
 *           buffer, another GPU's over NVLink or PCIe (CUDA IPC), so
 *           partition and transfer are one pass of the SMs; the bound of
 *           a fused shuffle on one host
 *   single  GroupBy / Join of the whole data set on GPU 0, no exchange
 *   mgi     MGI channels with GPU endpoints and the device API: one kernel
 *           per shuffle sends, receives and flushes (partition + transfer
 *           as one pipelined step; transports $MGI_WL_MGI_TLS, default
 *           sm,self,cuda_copy,cuda_mgi)
 *
 * Every run checks each variant's answer (per-source tuple counts and
 * checksums after the shuffle, groups and matches with their checksums)
 * against the CPU reference computed from the generator, prints one line
 * per measurement and writes JSON.
 *
 * Usage: mgi_workloads --op exchange|groupby|join|many2one|one2many|p2p|
 *                      gencheck  [--variant nccl,ucx,ucx_mgi,peer,mgi,single|all]
 *                      [--gpus G] [--sf SF | --gib GIB_PER_GPU] [--zipf T]
 *                      [--seed S] [--iters N] [--warmup N] [--json FILE]
 */
/*
 * This unit: the command line, the variant table and each rank's main.
 * The parts, each a unit with one job (their shared types and calls in
 * mgi_wl_int.h): mgi_wl_data.cu the data on each GPU and its tables,
 * mgi_wl_baselines.cu the partition kernel and the nccl, ucx, ucx_mgi and
 * peer variants, mgi_wl_operators.cu the GroupBy and Join kernels and the
 * checks of the answers, mgi_wl_mgi_kernel.cu the MGI shuffle kernel,
 * mgi_wl_mgi.cu the MGI variant's host side, mgi_wl_runs.cu the runs of a
 * variant, the single-GPU one and the report.
 */
#include "mgi_wl_int.h"

int wl_rank_id = -1;

/* the names of wl_op_t, in its order */
const char *wl_op_names[] = {"exchange", "groupby", "join",
                             "many2one", "one2many", "p2p",
                             "gencheck"};

/* ------------------------------------------------------ variant table */

/* The variants in the order they run (wl_variant_t in mgi_wl_int.h) */
static const wl_variant_t mgi_wl_variants[] = {
    {"nccl", wl_nccl_init, wl_nccl_fini, wl_nccl_transfer, NULL, NULL},
    {"ucx", wl_ucx_init, wl_ucx_fini, wl_ucx_transfer, NULL, NULL},
    {"ucx_mgi", wl_ucx_mgi_init, wl_ucx_fini, wl_ucx_transfer, NULL, NULL},
    {"peer", wl_peer_init, wl_peer_fini, NULL, wl_peer_shuffle, NULL},
    /* last: a failed MGI shuffle ends the run (its channel is in no state
     * to go on), and the baselines are measured by then */
    {"mgi", wl_mgi_init, wl_mgi_fini, NULL, wl_mgi_shuffle, NULL},
};

static int wl_variant_selected(const wl_opts_t *o, const char *name)
{
    char buf[256], *tok, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", o->variants);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if ((strcmp(tok, "all") == 0) || (strcmp(tok, name) == 0)) {
            return 1;
        }
    }
    return 0;
}

/* A crash report that names the caller: a call through a NULL function
 * pointer leaves UCX's backtrace nothing to unwind (the program counter is
 * 0), but the return address is still on the stack. */
static void wl_crash_symbol(const char *what, void *pc)
{
    Dl_info info;

    if ((pc != NULL) && dladdr(pc, &info) && (info.dli_fname != NULL)) {
        fprintf(stderr, "mgi_workloads rank %d:   %s %p = %s+0x%lx (%s)\n",
                wl_rank_id, what, pc,
                (info.dli_sname != NULL) ? info.dli_sname : "?",
                (unsigned long)((char*)pc - (char*)((info.dli_sname != NULL) ?
                                                    info.dli_saddr :
                                                    info.dli_fbase)),
                info.dli_fname);
    } else {
        fprintf(stderr, "mgi_workloads rank %d:   %s %p\n", wl_rank_id, what,
                pc);
    }
}

static void wl_crash_report(int sig, siginfo_t *si, void *ctx)
{
#if defined(__x86_64__)
    const ucontext_t *uc = (const ucontext_t*)ctx;
    void **sp = (void**)uc->uc_mcontext.gregs[REG_RSP];

    fprintf(stderr, "mgi_workloads rank %d: signal %d at address %p\n",
            wl_rank_id, sig, si->si_addr);
    wl_crash_symbol("pc", (void*)uc->uc_mcontext.gregs[REG_RIP]);
    wl_crash_symbol("return address on the stack", sp[0]);
#else
    (void)si;
    (void)ctx;
    fprintf(stderr, "mgi_workloads rank %d: signal %d\n", wl_rank_id, sig);
#endif
    signal(sig, SIG_DFL);
    raise(sig);
}

static int wl_rank_main(mgi_wl_boot_t *boot, void *arg)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = wl_crash_report;
    sa.sa_flags     = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    const wl_opts_t *o = (const wl_opts_t*)arg;
    wl_rank_t *w = new wl_rank_t();
    unsigned what = 0;
    char device[256] = "", line[600];
    cudaDeviceProp prop;
    int ndev = 0, failed = 0, i, rc;
    unsigned share;
    size_t k;
    double t0;

    wl_rank_id = boot->rank;
    w->boot    = boot;
    w->opts    = o;
    w->me      = boot->rank;
    w->G       = boot->size;
    WL_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        fprintf(stderr, "mgi_workloads: no GPU visible\n");
        return 1;
    }
    if (wl_env_uint(w, "MGI_WL_SHARE_GPUS", 0, 1, &share) != 0) {
        return 1;
    }
    if ((ndev < w->G) && !share) {
        fprintf(stderr, "mgi_workloads: %d GPUs asked, %d visible "
                "(MGI_WL_SHARE_GPUS=1 runs rank r on GPU r %% %d)\n", w->G,
                ndev, ndev);
        return 1;
    }
    /* ranks sharing a GPU: a check of the path between processes where
     * fewer GPUs are at hand (under MPS they run side by side) */
    w->shared = (ndev < w->G);
    w->dev    = w->me % ndev;
    w->on_dev = (w->G - w->dev + ndev - 1) / ndev; /* r % ndev == dev */
    WL_CUDA(cudaSetDevice(w->dev));
    WL_CUDA(cudaGetDeviceProperties(&prop, w->dev));
    snprintf(device, sizeof(device), "%s", prop.name);
    WL_CUDA(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
    for (i = 0; i < 4; ++i) {
        WL_CUDA(cudaEventCreate(&w->ev[i]));
    }
    WL_CUDA(cudaMalloc((void**)&w->d_count, 32 * sizeof(*w->d_count)));
    WL_CUDA(cudaMalloc((void**)&w->d_acc, 2 * sizeof(*w->d_acc)));

    memset(&w->spec, 0, sizeof(w->spec));
    mgi_tpch_params_init(&w->spec.tpch, o->seed, o->sf);
    w->spec.gpus    = w->G;
    w->spec.pattern = (o->op == WL_OP_MANY2ONE) ? MGI_WL_PATTERN_MANY2ONE :
                      (o->op == WL_OP_ONE2MANY) ? MGI_WL_PATTERN_ONE2MANY :
                      (o->op == WL_OP_P2P) ? MGI_WL_PATTERN_P2P :
                                             MGI_WL_PATTERN_EXCHANGE;
    if (o->zipf >= 0) {
        w->zipf_host = new mgi_tpch_zipf_t;
        if (mgi_tpch_zipf_init(w->zipf_host, w->spec.tpch.n_orders,
                               o->zipf) != 0) {
            fprintf(stderr, "mgi_workloads: bad Zipf theta %g\n", o->zipf);
            return 1;
        }
        WL_CHECK(mgi_tpch_gpu_zipf_upload(w->zipf_host, &w->zipf_dev));
        w->spec.zipf = w->zipf_host;
    }
    snprintf(wl_report.op, sizeof(wl_report.op), "%s", wl_op_names[o->op]);
    wl_report.gpus     = w->G;
    wl_report.sf       = w->spec.tpch.sf;
    wl_report.seed     = o->seed;
    wl_report.n_orders = w->spec.tpch.n_orders;
    wl_report.zipf     = o->zipf;
    snprintf(wl_report.device, sizeof(wl_report.device), "%s", device);
    snprintf(wl_report.ucx_tls, sizeof(wl_report.ucx_tls), "%s",
             (getenv("UCX_TLS") != NULL) ? getenv("UCX_TLS") : "");
    mgi_wl_mgi_settings(wl_report.mgi_settings,
                        sizeof(wl_report.mgi_settings));
    if (o->op == WL_OP_GENCHECK) {
        return wl_gencheck(w);
    }

    /* data in place on each GPU, then the reference on the host */
    t0 = wl_now_ms();
    WL_CHECK(wl_table_setup(w, &w->l, 0));
    if (o->op == WL_OP_JOIN) {
        WL_CHECK(wl_table_setup(w, &w->o, 1));
    }
    what = MGI_WL_REF_EXCHANGE |
           ((o->op == WL_OP_JOIN) ? MGI_WL_REF_ORDERS | MGI_WL_REF_JOIN : 0) |
           ((o->op == WL_OP_GROUPBY) ? MGI_WL_REF_GROUPBY : 0);
    if (mgi_wl_ref_compute(&w->spec, what, &w->ref) != 0) {
        fprintf(stderr, "mgi_workloads: reference failed\n");
        return 1;
    }
    WL_CHECK(mgi_wl_barrier(boot));
    if (w->me == 0) {
        printf("# %s on %d x %s: sf %.3f, %llu orders, lineitem tuples "
               "%.3f GB/GPU (rank 0), zipf %s, setup + reference %.1f s\n",
               wl_op_names[o->op], w->G, device, w->spec.tpch.sf,
               (unsigned long long)w->spec.tpch.n_orders,
               w->l.n_in * 16.0 / 1e9, (o->zipf < 0) ? "off" : "on",
               (wl_now_ms() - t0) / 1e3);
        printf("# %s\n", mgi_wl_mgi_settings_line(wl_report.mgi_settings,
                                                   line, sizeof(line)));
        fflush(stdout);
    }

    for (k = 0; k < sizeof(mgi_wl_variants) / sizeof(mgi_wl_variants[0]);
         ++k) {
        const wl_variant_t *v = &mgi_wl_variants[k];
        if (!wl_variant_selected(o, v->name)) {
            continue;
        }
        if ((v->transfer == NULL) && (v->shuffle == NULL)) {
            if (w->me == 0) {
                mgi_wl_report_absent(&wl_report, v->name, v->absent, stdout);
            }
            continue;
        }
        rc = wl_run_variant(w, v);
        if (rc < 0) {
            /* an error mid-variant leaves the ranks out of step: end the
             * run (the hub stops the others; the JSON has what was done) */
            return 1;
        }
        failed |= rc;
    }
    if (wl_variant_selected(o, "single") &&
        ((o->op == WL_OP_GROUPBY) || (o->op == WL_OP_JOIN))) {
        wl_table_free(&w->l);
        wl_table_free(&w->o);
        rc = wl_run_single(w);
        if (rc < 0) {
            return 1;
        }
        failed |= rc;
    }
    if ((w->me == 0) && (o->json != NULL)) {
        wl_report.nccl_version = (w->nccl.lib != NULL) ? w->nccl.version : 0;
        failed |= (mgi_wl_report_json(&wl_report, o->json) != 0);
    }
    return failed;
}

/* ---------------------------------------------------------------- main */

static void wl_usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s --op exchange|groupby|join|many2one|one2many|p2p|"
            "gencheck\n"
            "          [--variant nccl,ucx,ucx_mgi,peer,mgi,single|all] [--gpus G]\n"
            "          [--sf SF | --gib LINEITEM_GIB_PER_GPU] [--zipf THETA]\n"
            "          [--seed S] [--iters N] [--warmup N] [--json FILE]\n",
            argv0);
}

/* Option opt's value v as a number from lo to hi (whole when `whole`):
 * 0, or -1 with a line that names the option and the value. */
static int wl_arg_num(const char *opt, const char *v, double lo, double hi,
                      int whole, double *out)
{
    char *end;
    double x;

    errno = 0;
    x     = strtod(v, &end);
    if ((end == v) || (*end != '\0') || (errno != 0) || !(x >= lo) ||
        !(x <= hi) || (whole && (x != (double)(long long)x))) {
        fprintf(stderr, "mgi_workloads: %s %s: not a%s number from %g to "
                "%g\n", opt, v, whole ? " whole" : "", lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* Every name of a --variant list is a variant's, or "all". */
static int wl_variants_known(const char *list)
{
    char buf[256], *tok, *save = NULL;
    size_t k;

    snprintf(buf, sizeof(buf), "%s", list);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        for (k = 0; k < sizeof(mgi_wl_variants) / sizeof(mgi_wl_variants[0]);
             ++k) {
            if (strcmp(tok, mgi_wl_variants[k].name) == 0) {
                break;
            }
        }
        if ((strcmp(tok, "all") != 0) &&
            (k == sizeof(mgi_wl_variants) / sizeof(mgi_wl_variants[0]))) {
            fprintf(stderr, "mgi_workloads: --variant %s: no variant '%s'\n",
                    list, tok);
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    wl_opts_t o;
    double x = 0;
    int i, k, bad = 0;

    memset(&o, 0, sizeof(o));
    o.op     = WL_OP_EXCHANGE;
    snprintf(o.variants, sizeof(o.variants), "all");
    o.gpus   = 2;
    o.sf     = 1.0;
    o.zipf   = -1;
    o.seed   = 20260101;
    o.iters  = 5;
    o.warmup = 1;
    for (i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if ((v == NULL) && (strcmp(a, "--help") != 0)) {
            wl_usage(argv[0]);
            return 2;
        }
        if (strcmp(a, "--op") == 0) {
            for (k = 0; k <= WL_OP_GENCHECK; ++k) {
                if (strcmp(v, wl_op_names[k]) == 0) {
                    break;
                }
            }
            if (k > WL_OP_GENCHECK) {
                wl_usage(argv[0]);
                return 2;
            }
            o.op = (wl_op_t)k;
        } else if (strcmp(a, "--variant") == 0) {
            snprintf(o.variants, sizeof(o.variants), "%s", v);
            bad |= !wl_variants_known(v);
        } else if (strcmp(a, "--gpus") == 0) {
            bad |= wl_arg_num(a, v, 1, MGI_WL_MAX_GPUS, 1, &x) != 0;
            o.gpus = (int)x;
        } else if (strcmp(a, "--sf") == 0) {
            bad |= wl_arg_num(a, v, 1e-6, 1e6, 0, &o.sf) != 0;
        } else if (strcmp(a, "--gib") == 0) {
            bad |= wl_arg_num(a, v, 1e-6, 1e4, 0, &o.gib) != 0;
        } else if (strcmp(a, "--zipf") == 0) {
            bad |= wl_arg_num(a, v, 0, 10, 0, &o.zipf) != 0;
        } else if (strcmp(a, "--seed") == 0) {
            bad |= wl_arg_num(a, v, 0, 9007199254740992.0, 1, &x) != 0;
            o.seed = (unsigned long long)x;
        } else if (strcmp(a, "--iters") == 0) {
            bad |= wl_arg_num(a, v, 1, 63, 1, &x) != 0;
            o.iters = (int)x;
        } else if (strcmp(a, "--warmup") == 0) {
            bad |= wl_arg_num(a, v, 0, 63, 1, &x) != 0;
            o.warmup = (int)x;
        } else if (strcmp(a, "--json") == 0) {
            o.json = v;
        } else {
            wl_usage(argv[0]);
            return 2;
        }
        ++i;
    }
    if (bad || (o.gpus < 1) || (o.gpus > MGI_WL_MAX_GPUS) || (o.iters < 1) ||
        (o.iters + o.warmup > 64) || (o.warmup < 0) || !(o.sf > 0) ||
        (o.zipf > 10)) {
        wl_usage(argv[0]);
        return 2;
    }
    if (((o.op == WL_OP_P2P) || (o.op == WL_OP_MANY2ONE)) && (o.gpus < 2)) {
        /* rank 0 is the one sender (p2p) or the one receiver (many2one):
         * with one GPU nothing would cross */
        fprintf(stderr, "%s: --op %s needs --gpus 2 or more\n", argv[0],
                wl_op_names[o.op]);
        return 2;
    }
    if (o.gib > 0) {
        /* 16-byte lineitem tuples, 6M lineitems per SF (4 per order) */
        o.sf = o.gib * 1073741824.0 * o.gpus / 16.0 /
               (4.0 * MGI_TPCH_ORDERS_PER_SF);
    }
    /* multicast stays off on shared GPU hosts */
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    if (wl_variant_selected(&o, "mgi")) {
        /* MGI's sorter is a persistent kernel: a kernel loaded lazily while
         * it runs may wait for it forever (ranks inherit this) */
        setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    }
    return mgi_wl_boot_run(o.gpus, wl_rank_main, &o);
}
