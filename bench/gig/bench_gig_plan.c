/*
 * Channel creation time (paper §6, Fig. 18): MGI's Transfer Optimizer
 * (per-pair Edmonds-Karp, hierarchical through the network, cached) plus
 * the forwarding tables, beside plain Edmonds-Karp max-flow over the whole
 * graph with a super source and sink, in one run, for 8, 100 and 1000 GPUs.
 *
 * Channels: "half" = the first half of the GPUs sends to the second half
 * (the baseline needs disjoint source and sink sets); "shuffle" = every
 * GPU to every GPU.  "cold" = a fresh planner (no cached paths), "warm" =
 * a second channel on the same planner (paths reused across channels).
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

int main(int argc, char **argv)
{
    const char *topos[] = {"hgx-h200", "cluster100", "cluster1000"};
    const char *chans[] = {"half", "shuffle"};
    char json[8192];
    size_t jl = 0;
    int t, c, i, n, ns, nd, *gp, *s, *d;
    double budget = (argc > 1) ? atof(argv[1]) : 1000.0;

    jl += snprintf(json + jl, sizeof(json) - jl, "{\"bench\":\"gig_plan\","
                   "\"results\":[");
    for (t = 0; t < 3; ++t) {
        gig_graph_t *g;
        gig_plan_t *plan;
        gig_fwd_t *fwd;
        gig_plan_stats_t st;
        stat_t cold, warm, plain = {0, 0, 0};
        double flow = 0, paths_total;
        const gig_pathset_t *ps;
        int ntables;

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

            TIMED(cold, budget, {
                if ((gig_plan_create(g, &plan) != UCS_OK) ||
                    (gig_fwd_create(plan, s, ns, d, nd, &fwd) != UCS_OK)) {
                    die("channel");
                }
                gig_fwd_destroy(fwd);
                gig_plan_destroy(plan);
            });

            if (gig_plan_create(g, &plan) != UCS_OK ||
                gig_fwd_create(plan, s, ns, d, nd, &fwd) != UCS_OK) {
                die("channel");
            }
            ntables = gig_fwd_ntables(fwd);
            gig_fwd_destroy(fwd);
            gig_plan_get_stats(plan, &st);
            TIMED(warm, budget, {
                if (gig_fwd_create(plan, s, ns, d, nd, &fwd) != UCS_OK) {
                    die("channel");
                }
                gig_fwd_destroy(fwd);
            });
            paths_total = 0;
            for (i = 0; i < ns * nd; ++i) {
                if (s[i / nd] != d[i % nd]) {
                    gig_plan_paths(plan, s[i / nd], d[i % nd], &ps);
                    paths_total += ps->total;
                }
            }
            gig_plan_destroy(plan);

            if (c == 0) {
                TIMED(plain, (n > 500) ? 0 : budget, {
                    if (gig_maxflow_sets(g, s, ns, d, nd, &flow) != UCS_OK) {
                        die("plain max-flow");
                    }
                });
            }

            printf("gig-plan topo=%s gpus=%d vertices=%d edges=%d "
                   "channel=%s srcs=%d dsts=%d "
                   "mgi_cold_ms=%.3f mgi_cold_min_ms=%.3f mgi_warm_ms=%.3f "
                   "maxflow_runs=%lu fwd_tables=%d",
                   topos[t], n, g->nv, g->ne, chans[c], ns, nd, cold.med,
                   cold.min, warm.med, st.maxflow_runs, ntables);
            if (c == 0) {
                printf(" plain_ek_ms=%.3f plain_ek_min_ms=%.3f speedup=%.1f "
                       "msms_flow_gbps=%.1f", plain.med, plain.min,
                       plain.med / cold.med, flow);
            }
            printf(" reps=%d/%d/%d\n", cold.reps, warm.reps, plain.reps);
            fflush(stdout);

            jl += snprintf(json + jl, sizeof(json) - jl,
                           "%s{\"topo\":\"%s\",\"gpus\":%d,\"channel\":"
                           "\"%s\",\"srcs\":%d,\"dsts\":%d,"
                           "\"mgi_cold_ms\":%.4f,\"mgi_warm_ms\":%.4f,"
                           "\"plain_ek_ms\":%s%.4f%s,\"pair_paths_gbps\":"
                           "%.1f}", (t + c) ? "," : "", topos[t], n,
                           chans[c], ns, nd, cold.med, warm.med,
                           c ? "null" : "", c ? 0.0 : plain.med,
                           c ? "" : "", paths_total);
            if (c) {
                /* "null%.4f" -> keep JSON valid: strip the number */
                char *p = strstr(json, "null0.0000");
                if (p != NULL) {
                    memmove(p + 4, p + 10, strlen(p + 10) + 1);
                    jl -= 6;
                }
            }
        }
        free(gp);
        gig_graph_destroy(g);
    }
    snprintf(json + jl, sizeof(json) - jl, "]}");
    printf("%s\n", json);
    return 0;
}
