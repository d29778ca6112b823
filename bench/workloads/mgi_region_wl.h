/**
 * What mgi_mgg and mgi_proact share: an MGI context over the fork
 * launcher's allgather, medians, the maximum of a figure over the ranks,
 * a CUDA check. Header only (each program is one .cu file).
 */
#ifndef MGI_REGION_WL_H_
#define MGI_REGION_WL_H_

#include "mgi_wl_comm.h"

#include <mgi/mgi.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#define RWL_CUDA(_call) \
    do { \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            fprintf(stderr, "%s rank %d: %s failed: %s (%s:%d)\n", \
                    rwl_prog, rwl_rank, #_call, cudaGetErrorString(_e), \
                    __FILE__, __LINE__); \
            return -1; \
        } \
    } while (0)

static const char *rwl_prog = "mgi_region_wl";
static int rwl_rank = -1;
static int rwl_wrong;       /* an answer was wrong: the exit status says */

static int rwl_oob_allgather(const void *sbuf, void *rbuf, size_t len,
                             void *arg)
{
    return mgi_wl_allgather((mgi_wl_boot_t*)arg, sbuf, len, rbuf);
}

/* A context whose bootstrap is the launcher's hub. */
static int rwl_context(mgi_wl_boot_t *boot, mgi_context_h *ctx)
{
    mgi_context_params_t cp;
    ucs_status_t st;

    mgi_context_params_init(&cp);
    cp.oob.allgather = rwl_oob_allgather;
    cp.oob.arg       = boot;
    cp.oob.rank      = boot->rank;
    cp.oob.size      = boot->size;
    st = mgi_context_create(&cp, ctx);
    if (st != UCS_OK) {
        fprintf(stderr, "%s rank %d: mgi_context_create: %s\n", rwl_prog,
                boot->rank, ucs_status_string(st));
        return -1;
    }
    return 0;
}

static double rwl_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double rwl_median(std::vector<double> v)
{
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return (v.size() % 2) ? v[v.size() / 2] :
           (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/* The largest x over the ranks (the slowest GPU sets the time). */
static double rwl_max(mgi_wl_boot_t *boot, double x)
{
    std::vector<double> all(boot->size);
    double m = x;

    if (mgi_wl_allgather(boot, &x, sizeof(x), all.data()) == 0) {
        for (double y : all) {
            m = std::max(m, y);
        }
    }
    return m;
}

/* 1 where every rank says 1 */
static int rwl_all(mgi_wl_boot_t *boot, int ok)
{
    std::vector<int> all(boot->size);

    if (mgi_wl_allgather(boot, &ok, sizeof(ok), all.data()) != 0) {
        return 0;
    }
    for (int y : all) {
        ok &= y;
    }
    return ok;
}

/* A whole number of [lo, hi] for option `opt`, else 0 and a line naming
 * the option and the value. */
static int rwl_int(const char *opt, const char *v, long long lo, long long hi,
                   long long *out)
{
    char *end = NULL;
    long long x = strtoll(v, &end, 0);

    if ((end == v) || (*end != '\0') || (x < lo) || (x > hi)) {
        fprintf(stderr, "%s: %s %s: not a whole number from %lld to %lld\n",
                rwl_prog, opt, v, lo, hi);
        return 0;
    }
    *out = x;
    return 1;
}

/* Comma-separated `list` names `name` (or is "all"). */
static int rwl_listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    const char *p;

    if (strcmp(list, "all") == 0) {
        return 1;
    }
    for (p = list; (p = strstr(p, name)) != NULL; p += n) {
        if (((p == list) || (p[-1] == ',')) &&
            ((p[n] == '\0') || (p[n] == ','))) {
            return 1;
        }
    }
    return 0;
}

/* Every name of a comma-separated list is one of `known` (NULL-ended). */
static int rwl_list_valid(const char *list, const char *const *known)
{
    char buf[256], *tok, *save = NULL;
    int ok = 1;

    if (strcmp(list, "all") == 0) {
        return 1;
    }
    snprintf(buf, sizeof(buf), "%s", list);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (const char *const *k = known; *k != NULL; ++k) {
            found |= (strcmp(*k, tok) == 0);
        }
        if (!found) {
            fprintf(stderr, "%s: no variant '%s'\n", rwl_prog, tok);
            ok = 0;
        }
    }
    return ok;
}

#endif
