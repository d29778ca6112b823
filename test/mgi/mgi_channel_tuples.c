/**
 * mgi_channel_test: the tuples of the data scenarios, made and checked.
 * Sources make keys (uniform or Zipf) or schemaless tuples with a byte
 * pattern and tally what they sent per destination; destinations check
 * every tuple (source, FIFO order, partition, bytes), tally what they got,
 * and check EOF once per source.
 */

#include "mgi_channel_test.h"

void zipf_init(test_t *t)
{
    double sum = 0;
    int k;

    t->zipf_cdf = malloc(sizeof(double) * ZIPF_KEYS);
    for (k = 0; k < ZIPF_KEYS; ++k) {
        sum += 1.0 / pow(k + 1, t->theta);
        t->zipf_cdf[k] = sum;
    }
    for (k = 0; k < ZIPF_KEYS; ++k) {
        t->zipf_cdf[k] /= sum;
    }
}

/* Deterministic Zipf(theta) key by seed; theta = 0 is uniform. */
static uint64_t zipf_key(test_t *t, uint64_t *rng)
{
    double u = (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
    int lo = 0, hi = ZIPF_KEYS - 1, mid;

    while (lo < hi) {
        mid = (lo + hi) / 2;
        if (t->zipf_cdf[mid] < u) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static uint64_t tuple_hash(uint32_t src, uint32_t seq, uint64_t key,
                           uint32_t len)
{
    return mix64(key ^ mix64(((uint64_t)src << 32) | seq) ^
                 ((uint64_t)len << 48));
}

static int dst_index(test_t *t, mgi_ep_id_t ep)
{
    unsigned i;

    for (i = 0; i < t->ndst; ++i) {
        if (t->dst[i] == ep) {
            return i;
        }
    }
    return -1;
}

int is_local(test_t *t, mgi_ep_id_t ep)
{
    return MGI_EP_RANK(ep) == t->rank;
}

/* schemaless tuples: header of four u32 then a byte pattern */
static uint32_t explicit_len(uint32_t seq)
{
    return 16 + (seq * 37) % 185;
}

static uint8_t pattern(uint32_t src, uint32_t seq, uint32_t k)
{
    return (uint8_t)(src * 7 + seq * 31 + k);
}

/* ----------------------------------------------------------------- receive */

static void check_tuple(test_t *t, int di, int64_t *last_seq, uint32_t src,
                        uint32_t seq, uint64_t key, uint32_t len)
{
    int si = -1;
    unsigned i;

    for (i = 0; i < t->nsrc; ++i) {
        if (t->src[i] == src) {
            si = i;
        }
    }
    if (si < 0) {
        FAIL(t, "endpoint %u: tuple from unknown source %u", t->dst[di], src);
        return;
    }
    /* a pair spread over several next hops keeps no order (the tally's
     * count and hash still catch a tuple lost or twice) */
    if ((t->spread[si][di] < 2) && ((int64_t)seq <= last_seq[si])) {
        FAIL(t, "endpoint %u: tuple %u from %u after tuple %ld (FIFO broken "
             "or duplicate)", t->dst[di], seq, src, (long)last_seq[si]);
    }
    last_seq[si] = seq;
    if ((t->mode == MODE_PART) && ((int)(key % t->ndst) != di)) {
        FAIL(t, "endpoint %u: key %lu belongs to destination %lu", t->dst[di],
             (unsigned long)key, (unsigned long)(key % t->ndst));
    }
    t->got[di].count++;
    t->got[di].bytes += len;
    t->got[di].sum   += tuple_hash(src, seq, key, len);
}

void dst_init(test_t *t, dst_state_t *d, mgi_ep_id_t ep)
{
    unsigned i;

    d->t        = t;
    d->ep       = ep;
    d->di       = dst_index(t, ep);
    d->buf      = malloc(RECV_BUF);
    d->eof      = 0;
    d->idle     = 0;
    d->deadline = now_s() + t->timeout_s;
    for (i = 0; i < MAX_EPS; ++i) {
        d->last_seq[i] = -1;
    }
}

/* One mgi_recv: 1 at EOF, -1 on error, 0 otherwise. */
int recv_step(dst_state_t *d)
{
    test_t *t = d->t;
    char *buf = d->buf;
    unsigned i, k;
    ssize_t n;

    if (d->eof) {
        return 1;
    }
    n = mgi_recv(t->ctx, t->ch, d->ep, buf, t->recv_bytes);
    if (n == MGI_EOF) {
        d->eof = 1;
        return 1;
    }
    if (n < 0) {
        FAIL(t, "endpoint %u: mgi_recv: %s", d->ep,
             ucs_status_string((ucs_status_t)n));
        return -1;
    }
    if (n == 0) {
        if (now_s() > d->deadline) {
            FAIL(t, "endpoint %u: no EOF after %u s (%lu tuples in)", d->ep,
                 t->timeout_s, (unsigned long)t->got[d->di].count);
            return -1;
        }
        d->idle++;
        return 0;
    }
    d->idle = 0;
    if (t->mode == MODE_EXPLICIT) {
        uint32_t *h = (uint32_t*)buf;
        if ((n < 16) || (h[2] != (uint32_t)n) || ((int)h[3] != d->di)) {
            FAIL(t, "endpoint %u: bad schemaless tuple: %zd bytes, says %u "
                 "bytes for destination %u", d->ep, n, h[2], h[3]);
            return 0;
        }
        for (k = 16; k < n; ++k) {
            if ((uint8_t)buf[k] != pattern(h[0], h[1], k)) {
                FAIL(t, "endpoint %u: tuple %u from %u corrupt at byte %u",
                     d->ep, h[1], h[0], k);
                break;
            }
        }
        check_tuple(t, d->di, d->last_seq, h[0], h[1], 0, n);
    } else {
        if (n % sizeof(tuple_t)) {
            FAIL(t, "endpoint %u: %zd bytes, not whole tuples", d->ep, n);
        }
        for (i = 0; i < n / sizeof(tuple_t); ++i) {
            tuple_t *tp = (tuple_t*)buf + i;
            check_tuple(t, d->di, d->last_seq, tp->src, tp->seq, tp->key,
                        sizeof(tuple_t));
        }
    }
    return 0;
}

/* After EOF: EOF stays EOF, and came exactly once from every source. */
void dst_finish(dst_state_t *d)
{
    test_t *t = d->t;
    mgi_ch_attr_t attr;
    unsigned i;
    ssize_t n;

    if (d->eof) {
        n = mgi_recv(t->ctx, t->ch, d->ep, d->buf, t->recv_bytes);
        if (n != MGI_EOF) {
            FAIL(t, "endpoint %u: mgi_recv after EOF returned %zd", d->ep, n);
        }
        if (mgi_ch_query(t->ctx, t->ch, d->ep, &attr) != UCS_OK) {
            FAIL(t, "endpoint %u: mgi_ch_query failed", d->ep);
        } else {
            /* one through each next hop the pair spreads over */
            for (i = 0; i < t->nsrc; ++i) {
                if (attr.eof_count[i] != t->spread[i][d->di]) {
                    FAIL(t, "endpoint %u: %u EOF from source %u, expected "
                         "%u", d->ep, attr.eof_count[i], t->src[i],
                         t->spread[i][d->di]);
                }
            }
            if (attr.recv_tuples != t->got[d->di].count) {
                FAIL(t, "endpoint %u: library counted %lu tuples, test %lu",
                     d->ep, (unsigned long)attr.recv_tuples,
                     (unsigned long)t->got[d->di].count);
            }
        }
    }
    free(d->buf);
}

void *recv_thread(void *arg)
{
    dst_state_t *d = arg;
    int ret;

    while ((ret = recv_step(d)) == 0) {
        if (d->idle > 100) {
            usleep(50);
        }
    }
    dst_finish(d);
    return NULL;
}

/* -------------------------------------------------------------------- send */

static void expect_add(test_t *t, int di, uint32_t src, uint32_t seq,
                       uint64_t key, uint32_t len)
{
    t->expect[di].count++;
    t->expect[di].bytes += len;
    t->expect[di].sum   += tuple_hash(src, seq, key, len);
}

void src_init(test_t *t, src_state_t *s, mgi_ep_id_t ep)
{
    memset(s, 0, sizeof(*s));
    s->t        = t;
    s->ep       = ep;
    s->rng      = mix64(0x5eed0000ull + ep);
    s->deadline = now_s() + t->timeout_s;
}

/* One mgi_send: 1 when everything was sent, -1 on error, 0 otherwise. */
int send_step(src_state_t *s)
{
    test_t *t = s->t;
    char xbuf[256];
    unsigned i;
    ssize_t ret;
    int di;

    if ((s->done == s->n) && (s->seq == t->ntuples)) {
        return 1;
    }
    if (now_s() > s->deadline) {
        FAIL(t, "endpoint %u: could not send within %u s", s->ep,
             t->timeout_s);
        return -1;
    }

    if (t->mode == MODE_EXPLICIT) {
        uint32_t *h = (uint32_t*)xbuf, len = explicit_len(s->seq), k;
        di   = (s->seq * 7 + s->ep) % t->ndst;
        h[0] = s->ep;
        h[1] = s->seq;
        h[2] = len;
        h[3] = di;
        for (k = 16; k < len; ++k) {
            xbuf[k] = pattern(s->ep, s->seq, k);
        }
        ret = mgi_send(t->ctx, t->ch, s->ep, xbuf, len, t->dst[di]);
        s->stalled = (ret == 0);
        if (ret == 0) {
            return 0;
        }
        if (ret != len) {
            FAIL(t, "endpoint %u: mgi_send returned %zd", s->ep, ret);
            return -1;
        }
        expect_add(t, di, s->ep, s->seq, 0, len);
        s->seq++;
        return 0;
    }

    if (s->done == s->n) {
        s->n = (t->ntuples - s->seq < SEND_BATCH) ? t->ntuples - s->seq :
               SEND_BATCH;
        for (i = 0; i < s->n; ++i) {
            s->batch[i].key = t->use_zipf ? zipf_key(t, &s->rng) :
                              rng_next(&s->rng) % 1000003;
            s->batch[i].src = s->ep;
            s->batch[i].seq = s->seq + i;
        }
        s->seq += s->n;
        s->done = 0;
    }
    ret = mgi_send(t->ctx, t->ch, s->ep, s->batch + s->done,
                   (s->n - s->done) * sizeof(tuple_t), MGI_DST_AUTO);
    if (ret < 0) {
        FAIL(t, "endpoint %u: mgi_send: %s", s->ep,
             ucs_status_string((ucs_status_t)ret));
        return -1;
    }
    s->stalled = (ret == 0);
    for (i = s->done; i < s->done + ret / sizeof(tuple_t); ++i) {
        if (t->mode == MODE_PART) {
            expect_add(t, s->batch[i].key % t->ndst, s->ep, s->batch[i].seq,
                       s->batch[i].key, sizeof(tuple_t));
        } else {
            for (di = 0; di < (int)t->ndst; ++di) {
                expect_add(t, di, s->ep, s->batch[i].seq, s->batch[i].key,
                           sizeof(tuple_t));
            }
        }
    }
    s->done += ret / sizeof(tuple_t);
    return 0;
}
