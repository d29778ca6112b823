/**
 * MGI channels: DeleteCh and what follows it. A delete checks that every
 * local source flushed and every local destination read everything,
 * takes the channel from the sorters' tables and leaves it on the
 * context's list of deleted channels; it is freed (mgi_ch_reap, at the
 * next create or delete, or an endpoint's delete) once every local
 * sorter went past it, so that no sorter round still reads it.
 */
#include "mgi_ch_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mgi_channel_free(mgi_channel_t *ch)
{
    unsigned i;
    mgi_ep_t *ep;


    if ((ch->lsrc != NULL) && (ch->ldst != NULL)) {
        for (i = 0; (ep = mgi_ch_gpu_ep(ch, &i)) != NULL;) {
            if (ch->gpu[ep->index] != NULL) {
                mgi_gpu_ch_remove(ep, ch);
            }
        }
    }

    if (ch->ldst != NULL) {
        for (i = 0; i < ch->ndst; ++i) {
            if (ch->ldst[i].ep != NULL) {
                pthread_mutex_destroy(&ch->ldst[i].recv_lock);
                if (ch->ldst[i].final != NULL) {
                    mgi_ep_ring_free(ch->ldst[i].ep, ch->ldst[i].final);
                }
            }
        }
    }
    mgi_route_ch_fini(ch);
    free(ch->ldst);
    free(ch->lsrc);
    free(ch->dst);
    free(ch);
}

/* Count the channel's local endpoints as used (delta 1, at its create)
 * or not (-1, when it is freed). Under ctx->lock. */
void mgi_ch_hold_eps(mgi_channel_t *ch, int delta)
{
    unsigned i;

    for (i = 0; i < ch->nsrc; ++i) {
        if (ch->lsrc[i].ep != NULL) {
            ch->lsrc[i].ep->refcount += delta;
        }
    }
    for (i = 0; i < ch->ndst; ++i) {
        if (ch->ldst[i].ep != NULL) {
            ch->ldst[i].ep->refcount += delta;
        }
    }
}

/* Where an endpoint's sorter is, to tell later whether it went past
 * what left its tables before: a host sorter's epoch, a GPU sorter's
 * latest quiesce request (mgi_gpu_ch_unpublish made one). */
static uint32_t mgi_ch_sorter_mark(mgi_ep_t *ep)
{
    return mgi_ep_is_gpu(ep) ? mgi_gpu_quiesce_mark(ep) :
           __atomic_load_n(&ep->sorter_epoch, __ATOMIC_ACQUIRE);
}

static int mgi_ch_sorter_past(mgi_ep_t *ep, uint32_t mark)
{
    return mgi_ep_is_gpu(ep) ? mgi_gpu_quiesced(ep, mark) :
           (__atomic_load_n(&ep->sorter_epoch, __ATOMIC_ACQUIRE) - mark >=
            MGI_SORTER_QUIESCE_EPOCHS);
}

/* The local endpoint whose sorter has not gone through full rounds since
 * the deleted channel ch left its tables, or -1: ch is no sorter's. */
static int mgi_ch_busy_ep(mgi_context_t *ctx, const mgi_channel_t *ch)
{
    unsigned i;

    for (i = 0; i < ch->dead_neps; ++i) {
        if ((ctx->eps[i] != NULL) &&
            !mgi_ch_sorter_past(ctx->eps[i], ch->dead_mark[i])) {
            return (int)i;
        }
    }
    return -1;
}

/* Free the deleted channels that no sorter reads any more (their
 * endpoints' references go with them); wait: until none is left, bounded
 * by MGI_TIMEOUT_MS. A channel whose sorter never moved on stays (leaked
 * rather than freed in use). */
ucs_status_t mgi_ch_reap(mgi_context_t *ctx, int wait)
{
    const uint64_t deadline = mgi_deadline_ns(ctx);
    mgi_channel_t **pp, *ch, *done;
    int busy, k;

    for (;;) {
        done = NULL;
        busy = -1;
        pthread_mutex_lock(&ctx->lock);
        for (pp = &ctx->dead; (ch = *pp) != NULL;) {
            k = mgi_ch_busy_ep(ctx, ch);
            if (k >= 0) {
                busy = k;
                pp   = &ch->dead_next;
                continue;
            }
            *pp           = ch->dead_next;
            ch->dead_next = done;
            done          = ch;
            mgi_ch_hold_eps(ch, -1);
        }
        pthread_mutex_unlock(&ctx->lock);
        while ((ch = done) != NULL) {
            done = ch->dead_next;
            ucs_debug("mgi channel %u: freed", ch->id);
            mgi_channel_free(ch);
        }
        if (!wait || (busy < 0)) {
            return UCS_OK;
        }
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi context %p: a deleted channel is still in the "
                      "tables of endpoint %u's sorter, which did not finish "
                      "a round within %u ms (MGI_TIMEOUT_MS): is a kernel "
                      "of the application keeping the sorter's blocks off "
                      "the GPU? The channel stays allocated", ctx,
                      ctx->eps[busy]->id, ctx->params.timeout_ms);
            return UCS_ERR_TIMED_OUT;
        }
        usleep(10);
    }
}

uint32_t mgi_context_device_error(mgi_context_h ctx, char *why, size_t len)
{
    const volatile uint32_t *w = ctx->fail_word;
    uint32_t code, at, block;

    code = (w != NULL) ? w[1] : MGI_DEV_ERR_NONE;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    at    = (w != NULL) ? w[2] : 0;
    block = (w != NULL) ? w[3] : 0;
    if ((why != NULL) && (len > 0)) {
        if (code == MGI_DEV_ERR_NONE) {
            snprintf(why, len, "%s", mgi_dev_err_string(code));
        } else {
            snprintf(why, len, "channel %u, GPU endpoint %u, block %u: %s",
                     at >> 16, at & 0xffffu, block, mgi_dev_err_string(code));
        }
    }
    return code;
}

ucs_status_t mgi_ch_delete(mgi_context_h ctx, mgi_ch_id_t id)
{
    char why[320];
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    ucs_status_t status;
    uint64_t t[4];
    mgi_ep_t *ep;
    unsigned i;

    t[0] = mgi_time_ns();
    if (ch == NULL) {
        ucs_error("mgi context %p: delete of unknown channel %u", ctx, id);
        return UCS_ERR_NO_ELEM;
    }
    for (i = 0; (ep = mgi_ch_gpu_ep(ch, &i)) != NULL;) {
        status = mgi_gpu_ch_check_done(ep, ch);
        if (status != UCS_OK) {
            if (mgi_context_device_error(ctx, why, sizeof(why)) !=
                MGI_DEV_ERR_NONE) {
                ucs_error("mgi channel %u: a device call gave up first: %s",
                          id, why);
            }
            return status;
        }
    }
    for (i = 0; i < ch->nsrc; ++i) {
        if ((ch->lsrc[i].ep != NULL) && !mgi_ep_is_gpu(ch->lsrc[i].ep) &&
            (__atomic_load_n(&ch->lsrc[i].flushed, __ATOMIC_ACQUIRE) !=
             MGI_SRC_FLUSHED)) {
            ucs_error("mgi channel %u: busy, source endpoint %u has not "
                      "flushed", id, ch->src[i]);
            return UCS_ERR_BUSY;
        }
    }
    for (i = 0; i < ch->ndst; ++i) {
        mgi_ch_dst_t *d = &ch->ldst[i];
        if ((d->ep == NULL) || mgi_ep_is_gpu(d->ep)) {
            continue;
        }
        if ((__atomic_load_n(&d->eof_sources, __ATOMIC_ACQUIRE) < ch->nsrc) ||
            (mgi_ring_count(d->final) != 0)) {
            ucs_error("mgi channel %u: busy, destination endpoint %u has not "
                      "received everything (%u of %u sources at EOF, %u "
                      "segments unread)", id, ch->dst[i], d->eof_sources,
                      ch->nsrc, mgi_ring_count(d->final));
            return UCS_ERR_BUSY;
        }
    }

    /* a GPU endpoint's sorter counts the EOFs it relayed on the device */
    for (i = 0; i < ctx->neps; ++i) {
        ep = ctx->eps[i];
        if ((ep != NULL) && mgi_ep_is_gpu(ep) &&
            (ch->relay_expect[ep->index] > 0)) {
            status = mgi_gpu_ch_relay_eofs(ep, ch,
                                           &ch->relay_eofs[ep->index]);
            if (status != UCS_OK) {
                return status;
            }
        }
    }
    status = mgi_route_ch_busy(ctx, ch);
    if (status != UCS_OK) {
        return status;
    }

    t[1] = mgi_time_ns();
    __atomic_store_n(&ctx->chs[id], NULL, __ATOMIC_RELEASE);
    for (i = 0; (ep = mgi_ch_gpu_ep(ch, &i)) != NULL;) {
        mgi_gpu_ch_unpublish(ep, ch); /* and asks it to quiesce */
    }
    t[2] = mgi_time_ns();
    /* freed once every local sorter went through full rounds since
     * (mgi_ch_reap, from the next create or an endpoint's delete): a
     * sorter round may still hold it, and waiting here cost every
     * delete ~0.7 ms of a GPU sorter's rounds */
    pthread_mutex_lock(&ctx->lock);
    ch->dead_neps = ctx->neps;
    for (i = 0; i < ch->dead_neps; ++i) {
        if (ctx->eps[i] != NULL) {
            ch->dead_mark[i] = mgi_ch_sorter_mark(ctx->eps[i]);
        }
    }
    ch->dead_next = ctx->dead;
    ctx->dead     = ch;
    pthread_mutex_unlock(&ctx->lock);
    status = mgi_ch_reap(ctx, 0);
    t[3]   = mgi_time_ns();
    ucs_info("mgi channel %u: deleted in %.3f ms (checks %.3f, taken from "
             "the sorters %.3f, channels deleted before freed %.3f)", id,
             (t[3] - t[0]) / 1e6, (t[1] - t[0]) / 1e6, (t[2] - t[1]) / 1e6,
             (t[3] - t[2]) / 1e6);
    return status;
}
