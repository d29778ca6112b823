/**
 * What the files of MGI channels share, private to them: a local
 * source's flush states, the walk over a channel's local GPU endpoints,
 * the count of a channel's hold on its endpoints. The files: the create
 * (mgi_channel.c) over the delete and free (mgi_ch_delete.c); the data
 * calls (mgi_ch_data.c).
 */
#ifndef MGI_CH_INT_H_
#define MGI_CH_INT_H_

#include "mgi_int.h"

enum {
    MGI_SRC_OPEN        = 0,
    MGI_SRC_EOF_PENDING = 1,  /* EOF not yet in the stage ring */
    MGI_SRC_FLUSHING    = 2,  /* EOF in, waiting for delivery */
    MGI_SRC_FLUSHED     = 3
};

/* Local GPU endpoint number i of the channel (sources and destinations,
 * each once), or NULL past the end. */
static inline mgi_ep_t *mgi_ch_gpu_ep(const mgi_channel_t *ch,
                                       unsigned *i)
{
    mgi_ep_t *ep;
    unsigned j;

    for (; *i < ch->nsrc + ch->ndst; ++*i) {
        ep = (*i < ch->nsrc) ? ch->lsrc[*i].ep : ch->ldst[*i - ch->nsrc].ep;
        if ((ep == NULL) || !mgi_ep_is_gpu(ep)) {
            continue;
        }
        for (j = 0; j < ch->nsrc; ++j) {      /* a source first seen here? */
            if ((j < *i) && (ch->lsrc[j].ep == ep)) {
                break;
            }
        }
        if ((j < ch->nsrc) && (j < *i)) {
            continue;
        }
        ++*i;
        return ep;
    }
    return NULL;
}

/* mgi_ch_delete.c */
void mgi_ch_hold_eps(mgi_channel_t *ch, int delta);

#endif
