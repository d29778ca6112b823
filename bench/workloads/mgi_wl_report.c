/**
 * Lines and JSON of mgi_workloads.
 */
#include "mgi_wl_report.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int mgi_wl_cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

double mgi_wl_result_median(const mgi_wl_result_t *r, int field)
{
    double v[MGI_WL_MAX_ITERS];
    int i, n = r->iters;

    if (n <= 0) {
        return 0.0;
    }
    for (i = 0; i < n; ++i) {
        v[i] = (field == MGI_WL_PARTITION) ? r->t[i].partition_ms :
               (field == MGI_WL_TRANSFER) ? r->t[i].transfer_ms :
               (field == MGI_WL_COMPUTE) ? r->t[i].compute_ms :
                                           r->t[i].total_ms;
    }
    qsort(v, n, sizeof(v[0]), mgi_wl_cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double mgi_wl_gbps(double bytes, double ms)
{
    return bytes / 1e6 / ((ms > 1e-9) ? ms : 1e-9);
}

void mgi_wl_report_add(mgi_wl_report_t *rep, const mgi_wl_result_t *r,
                       FILE *out)
{
    double tot = mgi_wl_result_median(r, MGI_WL_TOTAL);
    char zipf[32] = "off";

    if (rep->nresults < MGI_WL_MAX_RESULTS) {
        rep->results[rep->nresults++] = *r;
    }
    if (rep->zipf >= 0) {
        snprintf(zipf, sizeof(zipf), "%.2f", rep->zipf);
    }
    fprintf(out, "%-9s %-7s gpus=%d sf=%.3f zipf=%s input_GB=%.3f "
            "cross_GB=%.3f partition_ms=%.3f transfer_ms=%.3f "
            "compute_ms=%.3f total_ms=%.3f GB/s=%.1f cross_GB/s=%.1f "
            "iters=%d verify=%s\n", r->op, r->variant, rep->gpus, rep->sf,
            zipf, r->input_bytes / 1e9, r->cross_bytes / 1e9,
            mgi_wl_result_median(r, MGI_WL_PARTITION),
            mgi_wl_result_median(r, MGI_WL_TRANSFER),
            mgi_wl_result_median(r, MGI_WL_COMPUTE), tot,
            mgi_wl_gbps(r->input_bytes, tot),
            mgi_wl_gbps(r->cross_bytes, tot), r->iters,
            r->verified ? "ok" : "FAILED");
    fflush(out);
}

void mgi_wl_report_absent(mgi_wl_report_t *rep, const char *variant,
                          const char *why, FILE *out)
{
    if (rep->nabsent < MGI_WL_MAX_RESULTS) {
        snprintf(rep->absent_variant[rep->nabsent],
                 sizeof(rep->absent_variant[0]), "%s", variant);
        snprintf(rep->absent_why[rep->nabsent], sizeof(rep->absent_why[0]),
                 "%s", why);
        ++rep->nabsent;
    }
    fprintf(out, "%-9s %-7s absent: %s\n", rep->op, variant, why);
    fflush(out);
}

/* a JSON string: the few characters that need it escaped */
static void mgi_wl_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; ++s) {
        if ((*s == '"') || (*s == '\\')) {
            fputc('\\', f);
            fputc(*s, f);
        } else if ((unsigned char)*s < 0x20) {
            fprintf(f, "\\u%04x", (unsigned char)*s);
        } else {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

int mgi_wl_report_json(const mgi_wl_report_t *rep, const char *path)
{
    FILE *f = fopen(path, "w");
    const mgi_wl_result_t *r;
    double tot;
    int k, i;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    fprintf(f, "{\n  \"program\": \"mgi_workloads\",\n  \"format\": 1,\n");
    fprintf(f, "  \"op\": ");
    mgi_wl_json_str(f, rep->op);
    fprintf(f, ",\n  \"gpus\": %d,\n  \"sf\": %.6f,\n  \"seed\": %llu,\n"
            "  \"n_orders\": %llu,\n", rep->gpus, rep->sf,
            (unsigned long long)rep->seed,
            (unsigned long long)rep->n_orders);
    if (rep->zipf < 0) {
        fprintf(f, "  \"zipf\": null,\n");
    } else {
        fprintf(f, "  \"zipf\": %.4f,\n", rep->zipf);
    }
    fprintf(f, "  \"device\": ");
    mgi_wl_json_str(f, rep->device);
    fprintf(f, ",\n  \"nccl_version\": %d,\n  \"ucx_tls\": ",
            rep->nccl_version);
    mgi_wl_json_str(f, rep->ucx_tls);
    fprintf(f, ",\n  \"mgi_settings\": ");
    mgi_wl_json_str(f, rep->mgi_settings);
    fprintf(f, ",\n  \"absent\": [");
    for (k = 0; k < rep->nabsent; ++k) {
        fprintf(f, "%s{\"variant\": ", k ? ", " : "");
        mgi_wl_json_str(f, rep->absent_variant[k]);
        fprintf(f, ", \"why\": ");
        mgi_wl_json_str(f, rep->absent_why[k]);
        fprintf(f, "}");
    }
    fprintf(f, "],\n  \"results\": [\n");
    for (k = 0; k < rep->nresults; ++k) {
        r   = &rep->results[k];
        tot = mgi_wl_result_median(r, MGI_WL_TOTAL);
        fprintf(f, "    {\"op\": ");
        mgi_wl_json_str(f, r->op);
        fprintf(f, ", \"variant\": ");
        mgi_wl_json_str(f, r->variant);
        fprintf(f, ", \"verified\": %s, \"input_bytes\": %.0f, "
                "\"cross_bytes\": %.0f, \"iters\": [",
                r->verified ? "true" : "false", r->input_bytes,
                r->cross_bytes);
        for (i = 0; i < r->iters; ++i) {
            fprintf(f, "%s{\"partition_ms\": %.4f, \"transfer_ms\": %.4f, "
                    "\"compute_ms\": %.4f, \"total_ms\": %.4f}",
                    i ? ", " : "", r->t[i].partition_ms,
                    r->t[i].transfer_ms, r->t[i].compute_ms,
                    r->t[i].total_ms);
        }
        fprintf(f, "], \"median_total_ms\": %.4f, \"gbps\": %.3f, "
                "\"cross_gbps\": %.3f}%s\n", tot,
                mgi_wl_gbps(r->input_bytes, tot),
                mgi_wl_gbps(r->cross_bytes, tot),
                (k + 1 < rep->nresults) ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return (fclose(f) == 0) ? 0 : -1;
}

extern char **environ;

void mgi_wl_mgi_settings(char *buf, size_t len)
{
    size_t at = 0;
    char **e;
    int n;

    buf[0] = '\0';
    for (e = environ; (e != NULL) && (*e != NULL); ++e) {
        if ((strncmp(*e, "MGI_", 4) != 0) ||
            (strncmp(*e, "MGI_WL_", 7) == 0) ||
            (strncmp(*e, "MGI_NCCL_LIB=", 13) == 0)) {
            continue;
        }
        n = snprintf(buf + at, len - at, "%s%s", at ? " " : "", *e);
        if ((n < 0) || ((size_t)n >= len - at)) {
            break;          /* the rest does not fit: what fits is shown */
        }
        at += (size_t)n;
    }
}

const char *mgi_wl_mgi_settings_line(const char *settings, char *line,
                                     size_t len)
{
    snprintf(line, len, "libmgi settings: %s",
             (settings[0] == '\0') ? "none (no MGI_* set: its defaults)" :
             settings);
    return line;
}
