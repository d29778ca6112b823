/**
 * MGI channels: the calls on a channel once created, with the paper's
 * semantics (§3.1): the host data calls of CPU endpoints (Send, Flush,
 * Recv), a destination's counts (mgi_ch_query) and a GPU endpoint's
 * device handle (mgi_ch_device_handle).
 */
#include "mgi_ch_int.h"

#include <ucs/sys/math.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ucs_status_t mgi_ch_query(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t dst,
                          mgi_ch_attr_t *attr)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    mgi_ch_dst_t *d;
    unsigned i;
    int di;

    if (ch == NULL) {
        ucs_error("mgi context %p: query of unknown channel %u", ctx, id);
        return UCS_ERR_NO_ELEM;
    }
    di = mgi_ch_dst_index(ch, dst);
    if ((di < 0) || (ch->ldst[di].ep == NULL)) {
        ucs_error("mgi channel %u: endpoint %u is not a local destination",
                  id, dst);
        return UCS_ERR_INVALID_PARAM;
    }
    d = &ch->ldst[di];
    memset(attr, 0, sizeof(*attr));
    if (mgi_ep_is_gpu(d->ep)) {
        attr->tuple_size = ch->tuple_size;
        attr->nsrc       = ch->nsrc;
        /* the other counters live on the GPU */
        return mgi_gpu_ch_landed(d->ep, ch, &attr->land_tuples);
    }
    attr->tuple_size = ch->tuple_size;
    attr->nsrc       = ch->nsrc;
    pthread_mutex_lock(&d->recv_lock);
    attr->recv_tuples = d->recv_tuples;
    attr->recv_bytes  = d->recv_bytes;
    attr->relayed_tuples = __atomic_load_n(&ch->relayed[d->ep->index],
                                           __ATOMIC_RELAXED);
    attr->relayed_eofs   = __atomic_load_n(&ch->relay_eofs[d->ep->index],
                                           __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&d->recv_lock);
    for (i = 0; i < ch->nsrc; ++i) {
        attr->eof_count[i] = __atomic_load_n(&d->eof_count[i],
                                             __ATOMIC_ACQUIRE);
    }
    return UCS_OK;
}

/* ------------------------------------------------------------ data calls */

static mgi_channel_t *mgi_ch_get_src(mgi_context_t *ctx, mgi_ch_id_t id,
                                     mgi_ep_id_t src, const char *what,
                                     mgi_ch_src_t **s_p)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    int si;

    if (ch == NULL) {
        ucs_error("mgi %s: unknown channel %u", what, id);
        return NULL;
    }
    si = mgi_ch_src_index(ch, src);
    if ((si < 0) || (ch->lsrc[si].ep == NULL) ||
        mgi_ep_is_gpu(ch->lsrc[si].ep)) {
        ucs_error("mgi channel %u: %s from endpoint %u, not a local CPU "
                  "source of the channel (GPU endpoints: mgi_device.cuh)", id,
                  what, src);
        return NULL;
    }
    *s_p = &ch->lsrc[si];
    return ch;
}

static inline uint64_t mgi_load_key(const char *p, size_t size)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;

    switch (size) {
    case 1: memcpy(&v8, p, 1);  return v8;
    case 2: memcpy(&v16, p, 2); return v16;
    case 4: memcpy(&v32, p, 4); return v32;
    default: memcpy(&v64, p, 8); return v64;
    }
}

/* Destination groups of a batched send: every destination of a channel of
 * up to MGI_SEND_GROUPS - 1 and the broadcast; larger channels send a
 * message per tuple. */
#define MGI_SEND_GROUPS 65

/* The group of the tuple at p: its destination's index in ch->dst (an
 * explicit dst's is di, else the partition key's), or ch->ndst for a
 * broadcast (paper §3.1). */
static inline unsigned mgi_send_group(const mgi_channel_t *ch, const char *p,
                                      int dst, int di)
{
    if (dst != MGI_DST_AUTO) {
        return (unsigned)di;
    } else if (ch->part_key >= 0) {
        return (unsigned)(mgi_load_key(p + ch->key_off, ch->key_size) %
                          ch->ndst);
    }
    return ch->ndst;
}

/* The destination endpoint of a group. */
static inline mgi_ep_id_t mgi_send_group_dst(const mgi_channel_t *ch,
                                             unsigned g)
{
    return (g == ch->ndst) ? MGI_EP_ID_ALL : ch->dst[g];
}

/* mgi_send of a schema's tuples in chunks of up to msg_batch payload
 * bytes: a chunk's tuples are grouped by destination, in order within a
 * group, into one message per group, all of them in one reservation of
 * the stage ring, so a chunk is taken whole or not at all and what was
 * taken is a prefix of buf. Returns the bytes taken. */
static size_t mgi_send_batched(mgi_context_t *ctx, mgi_channel_t *ch,
                               mgi_ring_t *stage, mgi_ep_id_t src,
                               const char *buf, size_t len, int dst, int di)
{
    const size_t tuple = ch->tuple_size;
    const size_t cap   = mgi_ring_cap(stage);
    uint32_t cnt[MGI_SEND_GROUPS], at[MGI_SEND_GROUPS];
    uint8_t grp[MGI_MSG_MAX_LEN];
    size_t done = 0, n, i, max_n;
    uint32_t total, off, pos, key = MGI_SEG_MIXED, used;
    unsigned g, ngroups;
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *h;
    char *out;

    /* a chunk's messages fit a segment: payload + a header (and padding
     * to 8 bytes) per group */
    max_n = ucs_min(ctx->params.msg_batch,
                    cap - (size_t)(ch->ndst + 1) * 2 * MGI_MSG_ALIGN) / tuple;
    max_n = ucs_max(ucs_min(max_n, sizeof(grp)), 1);
    while (done < len) {
        n = ucs_min((len - done) / tuple, max_n);
        memset(cnt, 0, sizeof(cnt[0]) * (ch->ndst + 1));
        for (i = 0; i < n; ++i) {
            grp[i] = (uint8_t)mgi_send_group(ch, buf + done + i * tuple, dst,
                                             di);
            cnt[grp[i]]++;
        }
        total   = 0;
        ngroups = 0;
        for (g = 0; g <= ch->ndst; ++g) {
            at[g] = total;
            if (cnt[g] > 0) {
                total += mgi_msg_size(cnt[g] * tuple);
                ngroups++;
            }
        }
        if (mgi_ring_append_reserve(stage, total, &seg, &off, &pos) !=
            MGI_RING_OK) {
            break; /* the stage ring is full: the caller sends the rest */
        }
        out = mgi_seg_payload(seg) + off;
        for (g = 0; g <= ch->ndst; ++g) {
            if (cnt[g] > 0) {
                h      = (mgi_msg_hdr_t*)(out + at[g]);
                h->ch  = ch->id;
                h->dst = mgi_send_group_dst(ch, g);
                h->src = src;
                h->len = (uint16_t)(cnt[g] * tuple);
                at[g] += MGI_MSG_HDR_SIZE;
                key    = mgi_msg_key(h);
            }
        }
        for (i = 0; i < n; ++i) {
            used = at[grp[i]];
            memcpy(out + used, buf + done + i * tuple, tuple);
            at[grp[i]] = used + (uint32_t)tuple;
        }
        mgi_seg_mark(seg, (ngroups == 1) ? key : MGI_SEG_MIXED);
        mgi_ring_append_commit(stage, seg, off, total, pos);
        done += n * tuple;
    }
    return done;
}

ssize_t mgi_send(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t src,
                 const void *buf, size_t len, int dst)
{
    mgi_channel_t *ch;
    mgi_ch_src_t *s;
    mgi_msg_hdr_t hdr;
    mgi_ring_t *stage;
    size_t tuple, done;
    const char *p;
    int di;

    ch = mgi_ch_get_src(ctx, id, src, "send", &s);
    if (ch == NULL) {
        return (mgi_ch_lookup(ctx, id) == NULL) ? UCS_ERR_NO_ELEM :
               UCS_ERR_INVALID_PARAM;
    }
    if (s->flushed != MGI_SRC_OPEN) {
        ucs_error("mgi channel %u: send from endpoint %u after its flush", id,
                  src);
        return UCS_ERR_CANCELED;
    }
    if (ctx->mover_status != UCS_OK) {
        return mgi_context_failed(ctx, "send", id, src);
    }
    if (ch->tuple_size != 0) {
        tuple = ch->tuple_size;
        if ((len == 0) || (len % tuple) != 0) {
            ucs_error("mgi channel %u: send of %zu bytes from endpoint %u, "
                      "not a multiple of the %zu-byte tuple", id, len, src,
                      tuple);
            return UCS_ERR_INVALID_PARAM;
        }
    } else {
        tuple = len;
        if ((len == 0) || (len > ch->max_tuple)) {
            ucs_error("mgi channel %u: send of a %zu-byte tuple from endpoint "
                      "%u, the channel takes 1..%zu bytes", id, len, src,
                      ch->max_tuple);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    if ((dst != MGI_DST_AUTO) &&
        ((dst < 0) || (mgi_ch_dst_index(ch, (mgi_ep_id_t)dst) < 0))) {
        ucs_error("mgi channel %u: send from endpoint %u to endpoint %d, not "
                  "a destination of the channel", id, src, dst);
        return UCS_ERR_INVALID_PARAM;
    }

    /* a schema's tuples go as messages of several tuples of one
     * destination (paper §5.3): mgi_send_batched when it applies */
    stage = s->ep->stage[0];
    di    = (dst != MGI_DST_AUTO) ? mgi_ch_dst_index(ch, (mgi_ep_id_t)dst) :
                                    -1;
    if ((ch->tuple_size != 0) && (ctx->params.msg_batch >= 2 * tuple) &&
        (ch->ndst < MGI_SEND_GROUPS) &&
        (mgi_ring_cap(stage) >= (ch->ndst + 1) * 2 * MGI_MSG_ALIGN +
                                2 * tuple)) {
        return mgi_send_batched(ctx, ch, stage, src, buf, len, dst, di);
    }
    hdr.ch  = id;
    hdr.src = src;
    hdr.len = (uint16_t)tuple;
    for (done = 0, p = buf; done < len; done += tuple, p += tuple) {
        hdr.dst = mgi_send_group_dst(ch, mgi_send_group(ch, p, dst, di));
        if (mgi_ring_append(stage, &hdr, p, NULL) != MGI_RING_OK) {
            break;
        }
    }
    return done;
}

ucs_status_t mgi_flush_nb(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t src)
{
    mgi_ch_src_t *s;
    mgi_channel_t *ch;
    mgi_ring_t *stage;
    mgi_msg_hdr_t hdr;
    uint32_t payload[2];

    ch = mgi_ch_get_src(ctx, id, src, "flush", &s);
    if (ch == NULL) {
        return (mgi_ch_lookup(ctx, id) == NULL) ? UCS_ERR_NO_ELEM :
               UCS_ERR_INVALID_PARAM;
    }
    stage = s->ep->stage[0];

    switch (__atomic_load_n(&s->flushed, __ATOMIC_ACQUIRE)) {
    case MGI_SRC_OPEN:
        s->flush_seq      = __atomic_add_fetch(&stage->flush_seq, 1,
                                               __ATOMIC_ACQ_REL);
        s->flush_deadline = mgi_deadline_ns(ctx);
        __atomic_store_n(&s->flushed, MGI_SRC_EOF_PENDING, __ATOMIC_RELEASE);
        /* fall through */
    case MGI_SRC_EOF_PENDING:
        hdr.ch     = id;
        hdr.dst    = MGI_EP_ID_ALL;
        hdr.src    = src;
        hdr.len    = MGI_MSG_LEN_EOF;
        payload[0] = s->ep->nstage;
        payload[1] = s->flush_seq;
        if (mgi_ring_append(stage, &hdr, payload, NULL) != MGI_RING_OK) {
            goto check_timeout; /* stage ring full: retry on the next call */
        }
        mgi_ring_append_close(stage); /* FULL: the EOF's segment is closed */
        __atomic_store_n(&s->flushed, MGI_SRC_FLUSHING, __ATOMIC_RELEASE);
        /* fall through */
    case MGI_SRC_FLUSHING:
        /* not flush_done >= seq: flushes of other channels through this
         * stage ring may have overtaken ours while the ring was full */
        if (__atomic_load_n(&s->delivered, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&s->flushed, MGI_SRC_FLUSHED, __ATOMIC_RELEASE);
            ucs_debug("mgi channel %u: endpoint %u flushed", id, src);
            return UCS_OK;
        }
        goto check_timeout;
    default:
        ucs_error("mgi channel %u: endpoint %u flushed twice", id, src);
        return UCS_ERR_CANCELED;
    }

check_timeout:
    if (ctx->mover_status != UCS_OK) {
        ucs_error("mgi channel %u: flush of endpoint %u cannot complete, the "
                  "mover stopped on %s", id, src,
                  ucs_status_string(ctx->mover_status));
        return ctx->mover_status;
    }
    if (mgi_time_ns() > s->flush_deadline) {
        ucs_error("mgi channel %u: flush of endpoint %u not delivered after "
                  "%u ms (stage ring %u/%u segments; is a destination not "
                  "receiving?)", id, src, ctx->params.timeout_ms,
                  mgi_ring_count(stage), stage->size);
        return UCS_ERR_TIMED_OUT;
    }
    return UCS_INPROGRESS;
}

ucs_status_t mgi_flush(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t src)
{
    unsigned idle = 0;
    ucs_status_t status;

    while ((status = mgi_flush_nb(ctx, id, src)) == UCS_INPROGRESS) {
        mgi_idle(ctx, &idle);
    }
    return status;
}

ssize_t mgi_recv(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t dst,
                 void *buf, size_t cap)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    const mgi_msg_hdr_t *h;
    mgi_ch_dst_t *d;
    size_t done;
    int di, eof;

    if (ch == NULL) {
        ucs_error("mgi recv: unknown channel %u", id);
        return UCS_ERR_NO_ELEM;
    }
    di = mgi_ch_dst_index(ch, dst);
    if ((di < 0) || (ch->ldst[di].ep == NULL) ||
        mgi_ep_is_gpu(ch->ldst[di].ep)) {
        ucs_error("mgi channel %u: recv at endpoint %u, not a local CPU "
                  "destination of the channel", id, dst);
        return UCS_ERR_INVALID_PARAM;
    }
    if (cap < ((ch->tuple_size != 0) ? ch->tuple_size : 1)) {
        ucs_error("mgi channel %u: recv buffer of %zu bytes at endpoint %u is "
                  "smaller than a %zu-byte tuple", id, cap, dst,
                  ch->tuple_size);
        return UCS_ERR_INVALID_PARAM;
    }

    d = &ch->ldst[di];
    if (d->error) {
        return UCS_ERR_IO_ERROR;
    }
    pthread_mutex_lock(&d->recv_lock);
    eof  = (__atomic_load_n(&d->eof_sources, __ATOMIC_ACQUIRE) == ch->nsrc);
    done = mgi_ring_take(d->final, buf, cap, ch->tuple_size, &h);
    d->recv_tuples += (ch->tuple_size == 0) ? (done > 0) :
                      done / ch->tuple_size;
    d->recv_bytes += done;
    pthread_mutex_unlock(&d->recv_lock);

    if ((done == 0) && (h != NULL)) {
        ucs_error("mgi channel %u: recv buffer of %zu bytes at endpoint %u is "
                  "smaller than the next %u-byte tuple", id, cap, dst, h->len);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((done == 0) && eof) {
        return MGI_EOF;
    }
    if ((done == 0) && (ctx->mover_status != UCS_OK)) {
        /* what arrived was taken first; the rest never will */
        return mgi_context_failed(ctx, "recv", id, dst);
    }
    return done;
}

ucs_status_t mgi_ch_device_handle(mgi_context_h ctx, mgi_ch_id_t id,
                                  mgi_ep_id_t ep_id, mgi_dev_ch_t *h)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    mgi_ep_t *ep      = mgi_ep_lookup(ctx, ep_id);

    if (ch == NULL) {
        ucs_error("mgi device handle: unknown channel %u", id);
        return UCS_ERR_NO_ELEM;
    }
    if ((ep == NULL) || !mgi_ep_is_gpu(ep) || (ch->gpu[ep->index] == NULL)) {
        ucs_error("mgi channel %u: device handle for endpoint %u, not a "
                  "local GPU endpoint of the channel", id, ep_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return mgi_gpu_ch_handle(ep, ch, h);
}
