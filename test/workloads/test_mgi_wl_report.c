/**
 * Writes JSON files with mgi_workloads' report code (the same functions the
 * program calls), for test_plot.sh to parse and plot: exchange and patterns,
 * GroupBy and Join with a single-GPU result, a Zipf sweep, an absent
 * variant, a failed verification, and a string that needs escaping.
 *
 *   test_mgi_wl_report OUTDIR
 */
#include "mgi_wl_report.h"

#include <stdio.h>
#include <string.h>

static void fill(mgi_wl_result_t *r, const char *op, const char *variant,
                 double ms, double bytes, int verified)
{
    int i;

    memset(r, 0, sizeof(*r));
    snprintf(r->op, sizeof(r->op), "%s", op);
    snprintf(r->variant, sizeof(r->variant), "%s", variant);
    r->iters = 3;
    for (i = 0; i < 3; ++i) {
        r->t[i].partition_ms = 0.2 * ms;
        r->t[i].transfer_ms  = 0.6 * ms + i;
        r->t[i].compute_ms   = 0.2 * ms;
        r->t[i].total_ms     = ms + i;
    }
    r->input_bytes = bytes;
    r->cross_bytes = bytes / 2;
    r->verified    = verified;
}

static int write_run(const char *dir, const char *op, double zipf,
                     int nvariants, const char *const *variants,
                     const double *ms)
{
    static mgi_wl_report_t rep;
    mgi_wl_result_t r;
    char path[512];
    int i;

    memset(&rep, 0, sizeof(rep));
    snprintf(rep.op, sizeof(rep.op), "%s", op);
    rep.gpus     = 2;
    rep.sf       = 44.7;
    rep.seed     = 1;
    rep.n_orders = 67108864;
    rep.zipf     = zipf;
    snprintf(rep.device, sizeof(rep.device), "NVIDIA \"H200\" test");
    snprintf(rep.ucx_tls, sizeof(rep.ucx_tls), "sm,self,cuda_copy,cuda_ipc");
    rep.nccl_version = 22809;
    mgi_wl_report_absent(&rep, "mgi", "MGI channels have no GPU endpoints "
                         "yet (src/ucp_ext)", stdout);
    for (i = 0; i < nvariants; ++i) {
        fill(&r, op, variants[i], ms[i], 4294967296.0,
             strcmp(variants[i], "ucx_mgi") != 0 || zipf < 1.4);
        mgi_wl_report_add(&rep, &r, stdout);
    }
    if (zipf < 0) {
        snprintf(path, sizeof(path), "%s/%s.json", dir, op);
    } else {
        snprintf(path, sizeof(path), "%s/%s_zipf%.1f.json", dir, op, zipf);
    }
    return mgi_wl_report_json(&rep, path);
}

int main(int argc, char **argv)
{
    static const char *const base[] = {"nccl", "ucx", "ucx_mgi"};
    static const char *const ops[]  = {"nccl", "ucx", "single"};
    static const double ms3[]       = {12.0, 18.0, 11.0};
    static const double zipf[]      = {0.0, 0.5, 1.0, 1.5};
    const char *dir = (argc > 1) ? argv[1] : ".";
    double ms[3];
    int rc = 0, i;

    rc |= write_run(dir, "exchange", -1, 3, base, ms3);
    rc |= write_run(dir, "many2one", -1, 2, base, ms3);
    rc |= write_run(dir, "p2p", -1, 2, base, ms3);
    rc |= write_run(dir, "groupby", -1, 3, ops, ms3);
    rc |= write_run(dir, "join", -1, 3, ops, ms3);
    for (i = 0; i < 4; ++i) {
        ms[0] = 12 + 4 * zipf[i];
        ms[1] = 18 + 9 * zipf[i];
        ms[2] = 11 + 3 * zipf[i];
        rc |= write_run(dir, "exchange", zipf[i], 3, base, ms);
    }
    return rc ? 1 : 0;
}
