/**
 * MGI: waits between relays that can close on themselves (see
 * mgi_route_deps.h).
 *
 * See file LICENSE for terms.
 */
#include "mgi_route_deps.h"

#include <stdlib.h>

enum { MGI_DEP_WHITE = 0, MGI_DEP_GREY, MGI_DEP_BLACK };

int mgi_route_deps_cycle(const mgi_route_dep_t *deps, unsigned n,
                         uint32_t nlanes, unsigned *cycle)
{
    uint32_t *first = NULL, *edge = NULL, *stack = NULL, *next = NULL;
    uint32_t *via   = NULL;    /* the wait that put a lane on the stack */
    uint8_t *color  = NULL;
    uint32_t root, v, w, top, k;
    unsigned i;
    int found = -1, len = 0;

    if (n == 0) {
        return 0;
    }
    /* the waits of each lane, in the order given (counting sort by from) */
    first = calloc((size_t)nlanes + 1, sizeof(*first));
    edge  = malloc((size_t)n * sizeof(*edge));
    stack = malloc(((size_t)nlanes + 1) * sizeof(*stack));
    next  = malloc(((size_t)nlanes + 1) * sizeof(*next));
    via   = malloc(((size_t)nlanes + 1) * sizeof(*via));
    color = calloc(nlanes, 1);
    if ((first == NULL) || (edge == NULL) || (stack == NULL) ||
        (next == NULL) || (via == NULL) || (color == NULL)) {
        len = -1;
        goto out;
    }
    for (i = 0; i < n; ++i) {
        ++first[deps[i].from + 1];
    }
    for (v = 0; v < nlanes; ++v) {
        first[v + 1] += first[v];
    }
    for (v = 0; v <= nlanes; ++v) {
        next[v] = first[v];            /* fill cursor */
    }
    for (i = 0; i < n; ++i) {
        edge[next[deps[i].from]++] = i;
    }

    /* depth first from every lane that waits on another; a wait that
     * reaches a lane still on the stack closes a cycle */
    for (root = 0; (root < nlanes) && (found < 0); ++root) {
        if ((color[root] != MGI_DEP_WHITE) || (first[root] == first[root + 1])) {
            continue;
        }
        top          = 0;
        stack[top]   = root;
        next[root]   = first[root];
        color[root]  = MGI_DEP_GREY;
        while (found < 0) {
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
            w = deps[i].to;
            if (color[w] == MGI_DEP_GREY) {
                /* the cycle: the waits from w up the stack, and this one */
                found = (int)i;
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
    free(first);
    free(edge);
    free(stack);
    free(next);
    free(via);
    free(color);
    return len;
}
