/**
 * Which path a channel takes: pure functions of what every rank knows
 * alike, free of UCX and CUDA, so make check tests them on any machine.
 */
#ifndef MGI_POLICY_H_
#define MGI_POLICY_H_

#include "mgi/mgi_dev_ch.h"
#include <stddef.h>

/* What decides whether a channel gets direct rings; the same at every
 * rank (the channel's arguments, the allgathered endpoints, the context
 * settings every rank compared). */
typedef struct mgi_direct_in {
    unsigned ctx_direct;    /* the context's direct_rings: 1 by default,
                               0 where MGI_DIRECT_RINGS=0 turned them off */
    unsigned opt_out;       /* the channel's MGI_CH_FLAG_NO_DIRECT */
    size_t   tuple_size;    /* 0: schemaless */
    unsigned ndst;
    int      one_host;      /* every rank of the context on this host */
    int      all_gpu;       /* every endpoint of the channel a GPU one */
    unsigned relayed;       /* pairs the plan sends through a relay */
} mgi_direct_in_t;

/* NULL: the channel gets direct rings, the fastest path between the GPU
 * endpoints of one host (no sorter or mover on the way). Otherwise why
 * not, for the log line; the channel then goes through stage rings,
 * sorters and movers, which serve every kind of channel. */
static inline const char *mgi_direct_why_not(const mgi_direct_in_t *in)
{
    if (!in->all_gpu) {
        return "an endpoint of it is no GPU endpoint";
    }
    if (!in->one_host) {
        return "its ranks are on several hosts";
    }
    if (!in->ctx_direct) {
        return "MGI_DIRECT_RINGS=0 turned them off";
    }
    if (in->opt_out) {
        return "its creator opted out (MGI_CH_FLAG_NO_DIRECT)";
    }
    if (in->tuple_size == 0) {
        return "it is schemaless";
    }
    if (in->ndst > MGI_DIRECT_MAX_DSTS) {
        return "it has more destinations than MGI_DIRECT_MAX_DSTS (64)";
    }
    if (in->relayed > 0) {
        return "the plan sends pairs through a relay (no direct link)";
    }
    return NULL;
}

#endif
