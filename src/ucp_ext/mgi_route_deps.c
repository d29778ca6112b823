/**
 * MGI: waits between relays that can close on themselves (see
 * mgi_route_deps.h).
 *
 * See file LICENSE for terms.
 */
#include "mgi_route_deps.h"

#include <stdlib.h>
#include <string.h>

enum { MGI_DEP_WHITE = 0, MGI_DEP_GREY, MGI_DEP_BLACK };

static int mgi_route_deps_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;

    return (x > y) - (x < y);
}

/* The lanes of deps[n], each once, in order (their numbers below) */
static uint32_t mgi_route_deps_lanes(const mgi_route_dep_t *deps,
                                     unsigned n, uint64_t *lanes)
{
    uint32_t nl = 0;
    unsigned i;

    for (i = 0; i < n; ++i) {
        lanes[2 * i]     = deps[i].from;
        lanes[2 * i + 1] = deps[i].to;
    }
    qsort(lanes, 2 * (size_t)n, sizeof(*lanes), mgi_route_deps_u64_cmp);
    for (i = 0; i < 2 * n; ++i) {
        if ((nl == 0) || (lanes[nl - 1] != lanes[i])) {
            lanes[nl++] = lanes[i];
        }
    }
    return nl;
}

static uint32_t mgi_route_deps_lane(const uint64_t *lanes, uint32_t nl,
                                    uint64_t name)
{
    const uint64_t *p = bsearch(&name, lanes, nl, sizeof(*lanes),
                                mgi_route_deps_u64_cmp);

    return (uint32_t)(p - lanes);
}

int mgi_route_deps_cycle(const mgi_route_dep_t *deps, unsigned n,
                         unsigned *cycle)
{
    uint32_t *first = NULL, *edge = NULL, *stack = NULL, *next = NULL;
    uint32_t *via   = NULL;    /* the wait that put a lane on the stack */
    uint32_t *to    = NULL;    /* each wait's lane waited on, numbered */
    uint64_t *lanes = NULL;
    uint8_t *color  = NULL;
    uint32_t nl, root, v, w, top, k;
    unsigned i;
    int len = 0;

    if (n == 0) {
        return 0;
    }
    lanes = malloc(2 * (size_t)n * sizeof(*lanes));
    to    = malloc((size_t)n * sizeof(*to));
    if ((lanes == NULL) || (to == NULL)) {
        len = -1;
        goto out;
    }
    nl = mgi_route_deps_lanes(deps, n, lanes);

    /* the waits of each lane, in the order given (counting sort by from) */
    first = calloc((size_t)nl + 1, sizeof(*first));
    edge  = malloc((size_t)n * sizeof(*edge));
    stack = malloc(((size_t)nl + 1) * sizeof(*stack));
    next  = malloc(((size_t)nl + 1) * sizeof(*next));
    via   = malloc(((size_t)nl + 1) * sizeof(*via));
    color = calloc(nl, 1);
    if ((first == NULL) || (edge == NULL) || (stack == NULL) ||
        (next == NULL) || (via == NULL) || (color == NULL)) {
        len = -1;
        goto out;
    }
    for (i = 0; i < n; ++i) {
        to[i] = mgi_route_deps_lane(lanes, nl, deps[i].to);
        ++first[mgi_route_deps_lane(lanes, nl, deps[i].from) + 1];
    }
    for (v = 0; v < nl; ++v) {
        first[v + 1] += first[v];
    }
    memcpy(next, first, ((size_t)nl + 1) * sizeof(*next)); /* fill cursor */
    for (i = 0; i < n; ++i) {
        edge[next[mgi_route_deps_lane(lanes, nl, deps[i].from)]++] = i;
    }

    /* depth first from every lane that waits on another; a wait that
     * reaches a lane still on the stack closes a cycle */
    for (root = 0; (root < nl) && (len == 0); ++root) {
        if ((color[root] != MGI_DEP_WHITE) ||
            (first[root] == first[root + 1])) {
            continue;
        }
        top         = 0;
        stack[top]  = root;
        next[root]  = first[root];
        color[root] = MGI_DEP_GREY;
        while (len == 0) {
            v = stack[top];
            if (next[v] == first[v + 1]) {
                color[v] = MGI_DEP_BLACK;
                if (top == 0) {
                    break;
                }
                --top;
                continue;
            }
            i = edge[next[v]++];
            w = to[i];
            if (color[w] == MGI_DEP_GREY) {
                /* the cycle: the waits from w up the stack, and this one */
                for (k = top; stack[k] != w; --k) {
                }
                for (++k; k <= top; ++k) {
                    cycle[len++] = via[k];
                }
                cycle[len++] = i;
            } else if (color[w] == MGI_DEP_WHITE) {
                color[w]     = MGI_DEP_GREY;
                next[w]      = first[w];
                stack[++top] = w;
                via[top]     = i;
            }
        }
    }

out:
    free(lanes);
    free(to);
    free(first);
    free(edge);
    free(stack);
    free(next);
    free(via);
    free(color);
    return len;
}
