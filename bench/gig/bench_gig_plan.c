/*
 * Channel creation time (paper §6, Fig. 18): MGI's Transfer Optimizer
 * (per-pair Edmonds-Karp, hierarchical through the network, cached) plus
 * the forwarding tables, beside plain Edmonds-Karp max-flow over the whole
 * graph with a super source and sink, in one run, for 8, 100 and 1000 GPUs.
 *
 * Channels: "half" = the first half of the GPUs sends to the second half;
 * "shuffle" = every GPU to every GPU.  "cold" = a fresh planner (no cached
 * paths), "warm" = a second channel on the same planner (paths reused
 * across channels, §4.3).  Each includes reading the forwarding tables of
 * one server's vertices (the first source's), those a rank of that host
 * reads; "cold_all" reads every table of the channel instead.  Baselines: "plain_ek_pairs" = the same channel
 * with every pair by Edmonds-Karp over the whole graph (no hierarchy, no
 * server scope; GIG_PLAN_F_PLAIN) plus the same forwarding tables;
 * "plain_msms_flow" = one multi-source multi-sink Edmonds-Karp over the
 * whole graph, which yields the aggregate flow value only, no per-pair
 * paths (shown for reference, half channel).
 * Prints one result per line, then one JSON line.
 */
#include <gig.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x < y) ? -1 : (x > y);
}

#define MAX_REPS 201

typedef struct {
    double med, min;
    int    reps;
} stat_t;

static stat_t summarize(double *t, int n)
{
    stat_t s;

    qsort(t, n, sizeof(*t), cmp_double);
    s.med  = t[n / 2];
    s.min  = t[0];
    s.reps = n;
    return s;
}

/* repeat while under budget_ms in total, at least 3 and at most MAX_REPS */
#define TIMED(_stat, _budget, _body) \
    do { \
        double _t[MAX_REPS], _sum = 0; \
        int _n = 0; \
        while ((_n < 3) || ((_sum < (_budget)) && (_n < MAX_REPS))) { \
            double _t0 = now_ms(); \
            _body; \
            _t[_n] = now_ms() - _t0; \
            _sum  += _t[_n++]; \
        } \
        _stat = summarize(_t, _n); \
    } while (0)

static void die(const char *what)
{
    fprintf(stderr, "bench_gig_plan: %s failed\n", what);
    exit(1);
}

/* The tables a rank on the server of vertex s reads (all: every table) */
static void read_tables(const gig_graph_t *g, const gig_fwd_t *fwd, int s,
                        int all)
{
    int i;

    for (i = 0; all && (i < gig_fwd_ntables(fwd)); ++i) {
        if (gig_fwd_table(fwd, i) == NULL) {
            die("table");
        }
    }
    for (i = 0; !all && (i < g->nv); ++i) {
        if (g->v[i].server == g->v[s].server) {
            gig_fwd_find(fwd, i);
        }
    }
}

/* Channel creation: a planner (fresh: cold) and the forwarding tables */
static void channel(const gig_graph_t *g, unsigned flags, const int *s,
                    int ns, const int *d, int nd, int all)
{
    gig_plan_t *plan;
    gig_fwd_t *fwd;

    if ((gig_plan_create_flags(g, flags, &plan) != UCS_OK) ||
        (gig_fwd_create(plan, s, ns, d, nd, &fwd) != UCS_OK)) {
        die("channel");
    }
    read_tables(g, fwd, s[0], all);
    gig_fwd_destroy(fwd);
    gig_plan_destroy(plan);
}

/* Plain per-pair Edmonds-Karp on a sample of the pairs: ms per pair */
static double plain_sample_ms_per_pair(const gig_graph_t *g, const int *s,
                                       int ns, const int *d, int nd,
                                       int nsample)
{
    long npairs = (long)ns * nd, step = npairs / nsample, k;
    const gig_pathset_t *ps;
    gig_plan_t *plan;
    double t0, t;
    int done = 0;

    if (gig_plan_create_flags(g, GIG_PLAN_F_PLAIN, &plan) != UCS_OK) {
        die("plain plan");
    }
    t0 = now_ms();
    for (k = 0; k < npairs; k += (step > 0) ? step : 1) {
        if (s[k / nd] != d[k % nd]) {
            if (gig_plan_paths(plan, s[k / nd], d[k % nd], &ps) != UCS_OK) {
                die("plain paths");
            }
            ++done;
        }
    }
    t = now_ms() - t0;
    gig_plan_destroy(plan);
    return t / done;
}

int main(int argc, char **argv)
{
    const char *topos[] = {"hgx-h200", "cluster100", "cluster1000"};
    const char *chans[] = {"half", "shuffle"};
    double budget = (argc > 1) ? atof(argv[1]) : 1000.0;
    char json[16384];
    size_t jl = 0;
    int t, c, i, n, ns, nd, *gp, *s, *d, first = 1;

    jl += snprintf(json + jl, sizeof(json) - jl, "{\"bench\":\"gig_plan\","
                   "\"unit\":\"ms\",\"results\":[");
    for (t = 0; t < 3; ++t) {
        gig_graph_t *g;
        gig_plan_t *plan;
        gig_fwd_t *fwd;
        gig_plan_stats_t st;
        stat_t cold, cold_all, warm, plain, msms = {0, 0, 0};
        double flow = 0, per_pair;
        long npairs;
        int ntables, sampled;

        if (gig_synth_create(topos[t], &g) != UCS_OK) {
            die(topos[t]);
        }
        gp = malloc(g->nv * sizeof(int));
        for (i = n = 0; i < g->nv; ++i) {
            if (g->v[i].type == GIG_VTX_GPU) {
                gp[n++] = i;
            }
        }
        for (c = 0; c < 2; ++c) {
            if (c == 0) {
                s = gp, ns = n / 2;
                d = gp + n / 2, nd = n - n / 2;
            } else {
                s = d = gp, ns = nd = n;
            }
            npairs = (long)ns * nd - ((c == 1) ? n : 0);

            TIMED(cold, budget, channel(g, 0, s, ns, d, nd, 0));
            TIMED(cold_all, budget, channel(g, 0, s, ns, d, nd, 1));

            if ((gig_plan_create(g, &plan) != UCS_OK) ||
                (gig_fwd_create(plan, s, ns, d, nd, &fwd) != UCS_OK)) {
                die("channel");
            }
            ntables = gig_fwd_ntables(fwd);
            gig_fwd_destroy(fwd);
            gig_plan_get_stats(plan, &st);
            TIMED(warm, budget, {
                if (gig_fwd_create(plan, s, ns, d, nd, &fwd) != UCS_OK) {
                    die("channel");
                }
                read_tables(g, fwd, s[0], 0);
                gig_fwd_destroy(fwd);
            });
            gig_plan_destroy(plan);

            /* baseline: per-pair Edmonds-Karp over the whole graph; at 1000
             * GPUs a sample of 2000 pairs, scaled to all pairs, plus the
             * forwarding tables (warm time) */
            sampled = (n > 100);
            if (!sampled) {
                TIMED(plain, budget, channel(g, GIG_PLAN_F_PLAIN, s, ns, d,
                                             nd, 0));
            } else {
                per_pair    = plain_sample_ms_per_pair(g, s, ns, d, nd, 2000);
                plain.med   = per_pair * npairs + warm.med;
                plain.min   = plain.med;
                plain.reps  = 1;
            }
            if (c == 0) {
                TIMED(msms, (n > 500) ? 0 : budget, {
                    if (gig_maxflow_sets(g, s, ns, d, nd, &flow) != UCS_OK) {
                        die("plain max-flow");
                    }
                });
            }

            printf("gig-plan topo=%s gpus=%d vertices=%d edges=%d "
                   "channel=%s srcs=%d dsts=%d pairs=%ld "
                   "mgi_cold_ms=%.3f mgi_cold_min_ms=%.3f mgi_warm_ms=%.3f "
                   "mgi_cold_all_ms=%.3f "
                   "maxflow_runs=%lu fwd_tables=%d plain_ek_pairs_ms=%.3f%s "
                   "speedup=%.1f", topos[t], n, g->nv, g->ne, chans[c], ns,
                   nd, npairs, cold.med, cold.min, warm.med, cold_all.med,
                   st.maxflow_runs,
                   ntables, plain.med, sampled ? "(est)" : "",
                   plain.med / cold.med);
            if (c == 0) {
                printf(" plain_msms_flow_ms=%.3f msms_flow_gbps=%.1f",
                       msms.med, flow);
            }
            printf(" reps=%d/%d/%d/%d\n", cold.reps, cold_all.reps, warm.reps,
                   plain.reps);
            fflush(stdout);

            jl += snprintf(json + jl, sizeof(json) - jl,
                           "%s{\"topo\":\"%s\",\"gpus\":%d,\"channel\":"
                           "\"%s\",\"pairs\":%ld,\"mgi_cold_ms\":%.4f,"
                           "\"mgi_warm_ms\":%.4f,\"mgi_cold_all_ms\":%.4f,"
                           "\"plain_ek_pairs_ms\":%.4f,"
                           "\"plain_ek_pairs_estimated\":%s",
                           first ? "" : ",", topos[t], n, chans[c], npairs,
                           cold.med, warm.med, cold_all.med, plain.med,
                           sampled ? "true" : "false");
            if (c == 0) {
                jl += snprintf(json + jl, sizeof(json) - jl,
                               ",\"plain_msms_flow_ms\":%.4f", msms.med);
            }
            jl += snprintf(json + jl, sizeof(json) - jl, "}");
            first = 0;
        }
        free(gp);
        gig_graph_destroy(g);
    }
    snprintf(json + jl, sizeof(json) - jl, "]}");
    printf("%s\n", json);
    return 0;
}
