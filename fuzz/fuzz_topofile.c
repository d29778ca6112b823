/**
 * libFuzzer target: a topology file is parsed; what parses is written,
 * parsed again and written again to the same text (the round trip the
 * reader and writer promise), and planned between GPUs.
 */
#include <gig.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *fuzz_topo_text(const gig_graph_t *g, size_t *len_p)
{
    char *buf = NULL;
    FILE *f   = open_memstream(&buf, len_p);

    if ((f == NULL) || (gig_topofile_write(g, f) != UCS_OK)) {
        abort();
    }
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const gig_pathset_t *ps;
    gig_graph_t *g, *h;
    char err[512], *t1, *t2;
    size_t l1, l2;
    gig_plan_t *plan;
    int i, n;

    if (gig_topofile_parse((const char*)data, size, "fuzz", &g, err,
                           sizeof(err)) != UCS_OK) {
        if (strncmp(err, "fuzz:", 5) != 0) {
            fprintf(stderr, "rejected without a line: '%s'\n", err);
            abort();
        }
        return 0;
    }
    t1 = fuzz_topo_text(g, &l1);
    if (gig_topofile_parse(t1, l1, "written", &h, err, sizeof(err)) !=
        UCS_OK) {
        fprintf(stderr, "the writer's output is refused: %s\n%.*s\n", err,
                (int)l1, t1);
        abort();
    }
    t2 = fuzz_topo_text(h, &l2);
    if ((l1 != l2) || (memcmp(t1, t2, l1) != 0)) {
        fprintf(stderr, "a second write differs:\n%.*s\n---\n%.*s\n",
                (int)l1, t1, (int)l2, t2);
        abort();
    }
    free(t1);
    free(t2);
    gig_graph_destroy(h);

    /* small graphs only: planning is not what is fuzzed for speed */
    if ((g->nv <= 64) && (gig_plan_create(g, &plan) == UCS_OK)) {
        for (i = 0, n = 0; (i < g->nv) && (n < 4); ++i) {
            if ((g->v[i].type == GIG_VTX_GPU) && (i != 0)) {
                (void)gig_plan_paths(plan, 0, i, &ps);
                ++n;
            }
        }
        gig_plan_destroy(plan);
    }
    gig_graph_destroy(g);
    return 0;
}
