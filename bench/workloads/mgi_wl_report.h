/**
 * Results of mgi_workloads: one line per measurement on stdout and a JSON
 * file (read by plot.py).  Host C, tested on the CPU with plot.py.
 */
#ifndef MGI_WL_REPORT_H_
#define MGI_WL_REPORT_H_

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MGI_WL_MAX_ITERS    64
#define MGI_WL_MAX_RESULTS  16

typedef struct mgi_wl_times {
    double partition_ms;
    double transfer_ms;
    double compute_ms;
    double total_ms;
} mgi_wl_times_t;

typedef struct mgi_wl_result {
    char           op[16];
    char           variant[16];
    int            iters;
    mgi_wl_times_t t[MGI_WL_MAX_ITERS];   /* max over ranks, per iteration */
    double         input_bytes;   /* every rank's input tuples, all tables */
    double         cross_bytes;   /* bytes that left their GPU */
    int            verified;
} mgi_wl_result_t;

typedef struct mgi_wl_report {
    char            op[16];
    int             gpus;
    double          sf;
    uint64_t        seed;
    uint64_t        n_orders;
    double          zipf;         /* < 0: none */
    char            device[128];
    int             nccl_version; /* 0: NCCL not loaded */
    char            ucx_tls[128];
    char            mgi_settings[512]; /* libmgi's MGI_* variables set
                                          (mgi_wl_mgi_settings), "" none */
    int             nresults;
    mgi_wl_result_t results[MGI_WL_MAX_RESULTS];
    int             nabsent;
    char            absent_variant[MGI_WL_MAX_RESULTS][16];
    char            absent_why[MGI_WL_MAX_RESULTS][160];
} mgi_wl_report_t;

double mgi_wl_result_median(const mgi_wl_result_t *r, int field);
enum { MGI_WL_PARTITION, MGI_WL_TRANSFER, MGI_WL_COMPUTE, MGI_WL_TOTAL };

/* Append a result (copied) and print its line to `out`. */
void mgi_wl_report_add(mgi_wl_report_t *rep, const mgi_wl_result_t *r,
                       FILE *out);
/* Record and print that a variant did not run, and why. */
void mgi_wl_report_absent(mgi_wl_report_t *rep, const char *variant,
                          const char *why, FILE *out);
/* libmgi's MGI_* variables set in this process's environment, as
 * "NAME=VALUE ..." into buf ("" when none; the harness's own MGI_WL_*
 * and MGI_NCCL_LIB are not libmgi's), and a line for the tables:
 * "libmgi settings: none (its defaults)" or "libmgi settings: ...". */
void mgi_wl_mgi_settings(char *buf, size_t len);
const char *mgi_wl_mgi_settings_line(const char *settings, char *line,
                                     size_t len);
/* Write the JSON; returns 0 or -1. */
int mgi_wl_report_json(const mgi_wl_report_t *rep, const char *path);

#ifdef __cplusplus
}
#endif

#endif
