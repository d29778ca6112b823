/**
 * End-to-end test of MGI channels with CPU endpoints in several processes.
 *
 *   mgi_channel_test [-e EPS_PER_RANK] [-t TUPLES_PER_SRC] [-z THETA]
 *                    [-s] [--oob NRANKS] SCENARIO
 *
 * -s: one thread per rank interleaves send and recv and flushes with
 * mgi_flush_nb (the GPU block pattern of the paper's Fig. 3); otherwise
 * each destination receives on its own thread and mgi_flush blocks.
 *
 * Ranks come from the TCP bootstrap (MGI_BOOTSTRAP / MGI_RANK / MGI_NRANKS,
 * see mgi_launch) or, with --oob, from this program forking NRANKS children
 * joined by socketpairs to a relay that implements the OOB allgather.
 *
 * Every destination counts the tuples and bytes it received from each
 * source and sums a 64-bit hash of each; the senders tally the same per
 * destination from what they sent; both tallies are allgathered and must be
 * equal (every tuple arrives exactly once, intact). Per (source,
 * destination) the sequence numbers must increase (FIFO), each tuple must
 * be at the destination its key / explicit destination names, and every
 * destination must see EOF exactly once per source (mgi_ch_query) and
 * then MGI_EOF again on every later mgi_recv.
 */
#include <mgi/mgi.h>
#include <ucs/debug/log_def.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_EPS        64
#define ZIPF_KEYS      4096
#define RECV_BUF       8192
#define SEND_BATCH     64

typedef struct tuple {
    uint64_t key;
    uint32_t src;
    uint32_t seq;
} tuple_t;

typedef struct tally {
    uint64_t count;
    uint64_t bytes;
    uint64_t sum;
} tally_t;

enum { MODE_PART, MODE_BCAST, MODE_EXPLICIT };

typedef struct test {
    mgi_context_h ctx;
    int           rank, size, eps_per_rank;
    mgi_ep_id_t   all[MAX_EPS];
    unsigned      nall;
    mgi_ep_id_t   src[MAX_EPS], dst[MAX_EPS];
    unsigned      nsrc, ndst;
    int           mode;
    double        theta;
    int           use_zipf;
    int           single_thread;
    int           eps_deleted;   /* the test deleted its endpoints */
    uint64_t      ntuples;
    mgi_ch_id_t   ch;
    double        *zipf_cdf;
    tally_t       expect[MAX_EPS];      /* per dst index, from my sources */
    tally_t       got[MAX_EPS];         /* per dst index, my destinations */
    int           failed;
    unsigned      timeout_s;
    size_t        recv_bytes;   /* mgi_recv buffer of the data scenarios */
    const char    *vertex_fmt;  /* -V: endpoint n's topology vertex */
    int           victims;      /* peer_dies: the last ranks that end */
    int           path[MAX_EPS];/* --expect-path: ranks of 0 -> last */
    int           npath;
} test_t;

#define FAIL(_t, ...) \
    do { \
        fprintf(stderr, "rank %d: FAIL: ", (_t)->rank); \
        fprintf(stderr, __VA_ARGS__); \
        fprintf(stderr, "\n"); \
        (_t)->failed = 1; \
    } while (0)

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix64(*s);
}

/* An environment variable's value kept (NULL: unset), and put back. */
static char *env_keep(const char *name)
{
    const char *v = getenv(name);

    return (v != NULL) ? strdup(v) : NULL;
}

static void env_restore(const char *name, char *kept)
{
    if (kept != NULL) {
        setenv(name, kept, 1);
        free(kept);
    } else {
        unsetenv(name);
    }
}

/* The error messages libmgi logs while a check runs (log_catch ..
 * log_said), to see that they name the setting at fault. */
static char log_text[4096];

static ucs_log_func_rc_t log_catch_handler(const char *file, unsigned line,
                                           const char *function,
                                           ucs_log_level_t level,
                                           const ucs_log_component_config_t *c,
                                           const char *fmt, va_list ap)
{
    size_t len = strlen(log_text);
    va_list aq;

    if ((level <= UCS_LOG_LEVEL_ERROR) && (len + 1 < sizeof(log_text))) {
        va_copy(aq, ap);
        vsnprintf(log_text + len, sizeof(log_text) - len, fmt, aq);
        va_end(aq);
        strncat(log_text, "\n", sizeof(log_text) - strlen(log_text) - 1);
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

static void log_catch(void)
{
    log_text[0] = '\0';
    ucs_log_push_handler(log_catch_handler);
}

/* Stops catching; whether an error said `what` meanwhile (else fails t). */
static void log_said(test_t *t, const char *check, const char *what)
{
    ucs_log_pop_handler();
    if (strstr(log_text, what) == NULL) {
        FAIL(t, "%s: no error naming \"%s\" (said: %s)", check, what,
             log_text);
    }
}

static void zipf_init(test_t *t)
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

static int is_local(test_t *t, mgi_ep_id_t ep)
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

typedef struct dst_state {
    test_t      *t;
    mgi_ep_id_t ep;
    int         di;
    int64_t     last_seq[MAX_EPS];
    char        *buf;
    int         eof;
    double      deadline;
    unsigned    idle;
} dst_state_t;

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
    if ((int64_t)seq <= last_seq[si]) {
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

static void dst_init(test_t *t, dst_state_t *d, mgi_ep_id_t ep)
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
static int recv_step(dst_state_t *d)
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
static void dst_finish(dst_state_t *d)
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
            for (i = 0; i < t->nsrc; ++i) {
                if (attr.eof_count[i] != 1) {
                    FAIL(t, "endpoint %u: %u EOF from source %u, expected 1",
                         d->ep, attr.eof_count[i], t->src[i]);
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

static void *recv_thread(void *arg)
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

typedef struct src_state {
    test_t      *t;
    mgi_ep_id_t ep;
    uint64_t    rng;
    uint64_t    seq;        /* tuples generated */
    tuple_t     batch[SEND_BATCH];
    unsigned    n, done;    /* current batch: size, sent */
    double      deadline;
    int         flushed;
    int         stalled;    /* last mgi_send found the stage ring full */
} src_state_t;

static void expect_add(test_t *t, int di, uint32_t src, uint32_t seq,
                       uint64_t key, uint32_t len)
{
    t->expect[di].count++;
    t->expect[di].bytes += len;
    t->expect[di].sum   += tuple_hash(src, seq, key, len);
}

static void src_init(test_t *t, src_state_t *s, mgi_ep_id_t ep)
{
    memset(s, 0, sizeof(*s));
    s->t        = t;
    s->ep       = ep;
    s->rng      = mix64(0x5eed0000ull + ep);
    s->deadline = now_s() + t->timeout_s;
}

/* One mgi_send: 1 when everything was sent, -1 on error, 0 otherwise. */
static int send_step(src_state_t *s)
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

/* ------------------------------------------------------------------ misuse */

static const char *ret_string(long r)
{
    return (r < 0) ? ucs_status_string((ucs_status_t)r) :
           (r > 0) ? "bytes" : "OK / nothing";
}

/* _want: a ucs_status_t, or a byte count */
#define EXPECT_STATUS(_t, _call, _want) \
    do { \
        long _r = (long)(_call), _w = (long)(_want); \
        if (_r != _w) { \
            FAIL(_t, "%s returned %ld (%s), expected %ld (%s)", #_call, _r, \
                 ret_string(_r), _w, ret_string(_w)); \
        } \
    } while (0)

static void drain(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep)
{
    double deadline = now_s() + t->timeout_s;
    char buf[RECV_BUF];
    ssize_t n;

    while ((n = mgi_recv(t->ctx, ch, ep, buf, sizeof(buf))) != MGI_EOF) {
        if ((n < 0) || (now_s() > deadline)) {
            FAIL(t, "drain of channel %u at %u: %zd", ch, ep, n);
            return;
        }
        usleep(100);
    }
}

static ssize_t recv_nonzero(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep,
                            void *buf, size_t cap)
{
    double deadline = now_s() + t->timeout_s;
    ssize_t n;

    while (((n = mgi_recv(t->ctx, ch, ep, buf, cap)) == 0) &&
           (now_s() < deadline)) {
        usleep(100);
    }
    return n;
}

/* One round over channel ch: every rank sends 64 keys by partition key,
 * receives what is its own, and the sums over all ranks match. 0 on
 * success. */
static int channel_round(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep1,
                         int round)
{
    uint64_t keys[64], got[64], sum_sent = 0, sum_got = 0, all[MAX_EPS];
    double deadline;
    ssize_t n;
    int r, i;

    for (i = 0; i < 64; ++i) {
        keys[i]   = t->rank * 1000 + round * 100 + i;
        sum_sent += keys[i];
    }
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, ep1, keys, sizeof(keys), -1),
                  sizeof(keys));
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, ep1), UCS_OK);
    deadline = now_s() + t->timeout_s;
    while ((n = mgi_recv(t->ctx, ch, ep1, got, sizeof(got))) != MGI_EOF) {
        if ((n < 0) || (now_s() > deadline)) {
            FAIL(t, "lifecycle: round %d: recv returned %zd", round, n);
            return -1;
        }
        for (i = 0; i < n / 8; ++i) {
            if ((int)(got[i] % t->size) != t->rank) {
                FAIL(t, "lifecycle: key %lu at rank %d",
                     (unsigned long)got[i], t->rank);
            }
            sum_got += got[i];
        }
    }
    /* every key arrived at key % size: the sums over all ranks match */
    mgi_context_allgather(t->ctx, &sum_sent, all, sizeof(uint64_t));
    for (sum_sent = 0, r = 0; r < t->size; ++r) {
        sum_sent += all[r];
    }
    mgi_context_allgather(t->ctx, &sum_got, all, sizeof(uint64_t));
    for (sum_got = 0, r = 0; r < t->size; ++r) {
        sum_got += all[r];
    }
    if (sum_got != sum_sent) {
        FAIL(t, "lifecycle: round %d: keys sum %lu received, %lu sent",
             round, (unsigned long)sum_got, (unsigned long)sum_sent);
        return -1;
    }
    return 0;
}

/* channel_round, then the channel is deleted. */
static int lifecycle_round(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep1,
                           int round)
{
    if (channel_round(t, ch, ep1, round) != 0) {
        return -1;
    }
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_OK);
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_ERR_NO_ELEM);
    return 0;
}

static void lifecycle(test_t *t)
{
    mgi_ep_params_t ep_params = {.device = MGI_EP_HOST, .blocks = 1};
    mgi_schema_t schema = {.nattrs = 1, .attr_size = {8}};
    mgi_ep_id_t eps[MAX_EPS], ep1;
    mgi_ch_params_t p   = {0};
    mgi_ch_id_t ch;
    int r, round;

    if ((mgi_ep_create(t->ctx, &ep_params, &ep1) != UCS_OK) ||
        (ep1 != MGI_EP_ID(t->rank, 1))) {
        FAIL(t, "lifecycle: second endpoint not created as %u",
             MGI_EP_ID(t->rank, 1));
        return;
    }
    for (r = 0; r < t->size; ++r) {
        eps[r] = MGI_EP_ID(r, 1);
    }
    p.src = eps; p.nsrc = t->size;
    p.dst = eps; p.ndst = t->size;
    p.schema = &schema; p.part_key = 0;
    if (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK) {
        FAIL(t, "lifecycle: channel over the second endpoints failed");
        return;
    }
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, MGI_EP_ID(t->rank, 0)), UCS_OK);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, MGI_EP_ID(t->rank, 0)),
                  UCS_ERR_NO_ELEM);
    t->eps_deleted = 1;

    /* rounds of create, send, receive, delete back to back: a deleted
     * channel is freed once the sorters moved on, and the next create
     * waits for that and takes its rings */
    for (round = 0; round < 8; ++round) {
        if ((round > 0) && (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK)) {
            FAIL(t, "lifecycle: channel %d over the second endpoints "
                 "failed", round);
            return;
        }
        if (lifecycle_round(t, ch, ep1, round) != 0) {
            return;
        }
    }
    /* the last channel's references go before the endpoint does */
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, ep1), UCS_OK);
}

/* ------------------------------------------------------------- channel ids */

/* A channel over every rank's endpoint 0 by partition key, whose id every
 * rank got the same; -1 when the create failed. */
static int ids_create(test_t *t, mgi_ch_id_t *ch)
{
    static mgi_schema_t schema = {.nattrs = 1, .attr_size = {8}};
    mgi_ch_params_t p = {0};
    mgi_ep_id_t eps[MAX_EPS];
    unsigned all[MAX_EPS], mine;
    ucs_status_t status;
    int r;

    for (r = 0; r < t->size; ++r) {
        eps[r] = MGI_EP_ID(r, 0);
    }
    p.src = eps; p.nsrc = t->size;
    p.dst = eps; p.ndst = t->size;
    p.schema = &schema; p.part_key = 0;
    status = mgi_ch_create(t->ctx, &p, ch);
    if (status != UCS_OK) {
        return -1;
    }
    mine = *ch;
    mgi_context_allgather(t->ctx, &mine, all, sizeof(mine));
    for (r = 0; r < t->size; ++r) {
        if (all[r] != mine) {
            FAIL(t, "ids: channel %u here is channel %u at rank %d", mine,
                 all[r], r);
        }
    }
    return 0;
}

/* Channel ids come back once their channels are deleted: a context
 * creates many more channels than MGI_TEST_MAX_CHANNELS; a channel one rank
 * still holds keeps its id from the others; with every id held, a create
 * says so at every rank. Run with a small MGI_TEST_MAX_CHANNELS. */
static void channel_ids(test_t *t)
{
    const mgi_ep_id_t me = MGI_EP_ID(t->rank, 0);
    mgi_context_params_t cp;
    mgi_ch_id_t ch, held, chs[64];
    unsigned mx, round, n, seen_held = 0;

    mgi_context_params_init(&cp);   /* the context's MGI_TEST_MAX_CHANNELS */
    mx = cp.max_channels;

    if ((mx < 2) || (mx > 64)) {
        FAIL(t, "ids: run with MGI_TEST_MAX_CHANNELS in 2..64, not %u", mx);
        return;
    }
    /* 1. three times as many channels as ids, one after the other */
    for (round = 0; round < 3 * mx; ++round) {
        if (ids_create(t, &ch) != 0) {
            FAIL(t, "ids: create %u of %u failed (MGI_TEST_MAX_CHANNELS=%u)",
                 round, 3 * mx, mx);
            return;
        }
        if (ch != round % mx) {
            FAIL(t, "ids: create %u gave channel %u, expected %u", round,
                 ch, round % mx);
        }
        if (lifecycle_round(t, ch, me, round) != 0) {
            return;
        }
    }
    /* 2. rank 0 holds a drained channel the others deleted */
    if (ids_create(t, &held) != 0) {
        FAIL(t, "ids: create of the held channel failed");
        return;
    }
    if (channel_round(t, held, me, 100) != 0) {
        return;
    }
    if (t->rank != 0) {
        EXPECT_STATUS(t, mgi_ch_delete(t->ctx, held), UCS_OK);
    }
    for (round = 0; round < 2 * mx; ++round) {
        if (ids_create(t, &ch) != 0) {
            FAIL(t, "ids: create %u beside the held channel %u failed",
                 round, held);
            return;
        }
        if (ch == held) {
            FAIL(t, "ids: channel %u created while rank 0 holds it", ch);
        }
        if (lifecycle_round(t, ch, me, 200 + round) != 0) {
            return;
        }
    }
    if (t->rank == 0) {
        EXPECT_STATUS(t, mgi_ch_delete(t->ctx, held), UCS_OK);
    }
    for (round = 0; round < mx; ++round) {
        if (ids_create(t, &ch) != 0) {
            FAIL(t, "ids: create %u after the held channel went failed",
                 round);
            return;
        }
        seen_held |= (ch == held);
        if (lifecycle_round(t, ch, me, 300 + round) != 0) {
            return;
        }
    }
    if (!seen_held) {
        FAIL(t, "ids: id %u not reused in %u creates after its channel "
             "was deleted everywhere", held, mx);
    }
    /* 3. every id held: the next create fails at every rank, by name */
    for (n = 0; n < mx; ++n) {
        if ((ids_create(t, &chs[n]) != 0) ||
            (channel_round(t, chs[n], me, 400 + n) != 0)) {
            FAIL(t, "ids: channel %u of %u held at once failed", n, mx);
            return;
        }
    }
    if (ids_create(t, &ch) == 0) {
        FAIL(t, "ids: channel %u created with all %u ids held", ch, mx);
        return;
    }
    printf("rank %d: ids: create with all %u ids held failed, as it "
           "must\n", t->rank, mx);
    for (n = 0; n < mx; ++n) {
        EXPECT_STATUS(t, mgi_ch_delete(t->ctx, chs[n]), UCS_OK);
    }
    if ((ids_create(t, &ch) != 0) || (lifecycle_round(t, ch, me, 500) != 0)) {
        FAIL(t, "ids: create after the held channels were deleted failed");
        return;
    }
    printf("rank %d: ids: %u channels over %u ids, a held id kept, "
           "exhaustion reported\n", t->rank, 3 * mx + 1 + 3 * mx + mx + 1,
           mx);
}

static void misuse(test_t *t)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    mgi_ep_id_t me      = MGI_EP_ID(t->rank, 0), id;
    /* a CUDA device that no machine has */
    mgi_ep_params_t ep_params = {.device = 9999, .blocks = 1};
    mgi_ch_params_t p   = {0};
    tuple_t tp          = {.key = 1, .src = me, .seq = 0};
    char big[512]       = {0}, small[8];
    const char *tls;
    mgi_ch_id_t ch, ch2, ch3;
    ucs_status_t status;

    p.src = t->all; p.nsrc = t->nall;
    p.dst = t->all; p.ndst = t->nall;
    p.schema = &schema; p.part_key = 0;
    if (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK) {
        FAIL(t, "misuse: channel create failed");
        return;
    }

    tls = getenv("UCX_TLS");
    if (t->size == 1) {
        EXPECT_STATUS(t, mgi_ep_create(t->ctx, &ep_params, &id),
                      UCS_ERR_NO_DEVICE);
    } else if ((tls != NULL) && (strstr(tls, "cuda_mgi") == NULL)) {
        /* every rank of the test runs on this host and UCX has no
         * cuda_mgi: a GPU endpoint is refused before any device is looked
         * at (its movers' puts of GPU memory would crash UCP) */
        EXPECT_STATUS(t, mgi_ep_create(t->ctx, &ep_params, &id),
                      UCS_ERR_UNSUPPORTED);
    }
    {
        /* the segment size: the context's, and what parameters give */
        mgi_context_params_t cp;
        size_t seg = 0;
        mgi_context_params_init(&cp);
        cp.seg_size = 1000;                       /* rounded up to 128 */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (seg != 1024) {
            FAIL(t, "misuse: mgi_params_seg_size(1000) gave %zu, not 1024",
                 seg);
        }
        cp.stage_depth = 3;                       /* not a power of two */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.stage_depth   = 8;
        cp.mover_flushes = 0;                     /* none in flight */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.mover_flushes = 65;                    /* above the bound */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.mover_flushes = 64;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.stage_groups = 0;                      /* no stage ring */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.stage_groups = MGI_STAGE_GROUPS_MAX + 1;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.stage_groups = MGI_STAGE_GROUPS_MAX;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.direct_rings = 2;                      /* 0 or 1 */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_rings = 1;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.direct_ring_kb = 2;                    /* below 4 KiB */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_ring_kb = (1u << 20) + 1;       /* above 1 GiB */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_ring_kb = 4;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.direct_publish_kb = (1u << 20) + 1;    /* above 1 GiB */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_publish_kb = 0;                 /* after every send */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.send_zcopy = 2;                        /* 0 or 1 */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.send_zcopy = 1;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.dev_tile_batch = MGI_MSG_MAX_LEN + 8;  /* above a message */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.dev_tile_batch = MGI_MSG_MAX_LEN;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        /* every number has an upper bound, whether the caller set it or
         * the environment did: the refusal names the field and its
         * variable */
        {
            static const struct {
                size_t off;
                unsigned bad, good;
                const char *var;
            } b[] = {
                {offsetof(mgi_context_params_t, idle_us), 4294967295u, 100,
                 "MGI_IDLE_US"},
                {offsetof(mgi_context_params_t, mover_batch), 4294967295u,
                 64, "MGI_MOVER_BATCH"},
                {offsetof(mgi_context_params_t, timeout_ms), 0, 60000,
                 "MGI_TIMEOUT_MS"},
                {offsetof(mgi_context_params_t, sorter_blocks), 1025, 16,
                 "MGI_SORTER_BLOCKS"},
                {offsetof(mgi_context_params_t, sort_depth), (1u << 20) + 1,
                 1u << 20, "MGI_SORT_DEPTH"},
                {offsetof(mgi_context_params_t, log_interval_ms),
                 3600001, 0, "MGI_LOG_INTERVAL_MS"}
            };
            size_t i;

            for (i = 0; i < sizeof(b) / sizeof(b[0]); ++i) {
                unsigned *f = (unsigned*)((char*)&cp + b[i].off);

                *f = b[i].bad;
                log_catch();
                EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                              UCS_ERR_INVALID_PARAM);
                log_said(t, "misuse: a number out of range", b[i].var);
                *f = b[i].good;
                EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
            }
        }
        if ((mgi_context_seg_size(t->ctx) < 256) ||
            (mgi_context_seg_size(t->ctx) % 128 != 0)) {
            FAIL(t, "misuse: context segment size %zu",
                 mgi_context_seg_size(t->ctx));
        }
    }
    {
        /* the two sets of ring defaults (the test hook
         * MGI_TEST_GPU_DEFAULTS, read before the settings' own variables,
         * which still win); the harness runs with 0 */
        char *keep = env_keep("MGI_TEST_GPU_DEFAULTS");
        mgi_context_params_t cp;
        size_t seg = 0;

        setenv("MGI_TEST_GPU_DEFAULTS", "1", 1);
        mgi_context_params_init(&cp);
        if ((cp.gpu_defaults != 1) || (cp.seg_size != MGI_GPU_SEG_SIZE) ||
            (cp.stage_depth != 16) || (cp.sort_depth != 256) ||
            (cp.recv_depth != 256) || (cp.final_depth != 16) ||
            (cp.mover_batch != 32) || (cp.sorter_blocks != 16) ||
            (cp.sort_rings != 4)) {
            FAIL(t, "misuse: GPU defaults: gpu_defaults %u seg %zu depths "
                 "%u/%u/%u/%u mover batch %u sorter blocks %u sort rings %u",
                 cp.gpu_defaults, cp.seg_size, cp.stage_depth,
                 cp.sort_depth, cp.recv_depth, cp.final_depth,
                 cp.mover_batch, cp.sorter_blocks, cp.sort_rings);
        }
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (seg != MGI_GPU_SEG_SIZE) {
            FAIL(t, "misuse: GPU defaults: segment %zu", seg);
        }
        setenv("MGI_RECV_DEPTH", "64", 1);            /* its own wins */
        mgi_context_params_init(&cp);
        unsetenv("MGI_RECV_DEPTH");
        if ((cp.recv_depth != 64) || (cp.sort_depth != 256)) {
            FAIL(t, "misuse: GPU defaults with MGI_RECV_DEPTH=64: recv "
                 "%u sort %u", cp.recv_depth, cp.sort_depth);
        }
        setenv("MGI_TEST_GPU_DEFAULTS", "0", 1);
        mgi_context_params_init(&cp);
        if ((cp.gpu_defaults != 0) || (cp.seg_size != 0) ||
            (cp.recv_depth != 8) || (cp.sorter_blocks != 2) ||
            (cp.sort_rings != 1)) {
            FAIL(t, "misuse: CPU defaults: gpu_defaults %u seg %zu recv %u "
                 "sorter blocks %u sort rings %u", cp.gpu_defaults,
                 cp.seg_size, cp.recv_depth, cp.sorter_blocks,
                 cp.sort_rings);
        }
        setenv("MGI_TEST_GPU_DEFAULTS", "2", 1);      /* 0 or 1 */
        mgi_context_params_init(&cp);
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        {
            /* unset, from the machine: no GPU a process may see with
             * CUDA_VISIBLE_DEVICES empty, whatever the driver lists */
            char *vkeep = env_keep("CUDA_VISIBLE_DEVICES");

            unsetenv("MGI_TEST_GPU_DEFAULTS");
            setenv("CUDA_VISIBLE_DEVICES", "", 1);
            mgi_context_params_init(&cp);
            if ((cp.gpu_defaults != 0) || (cp.recv_depth != 8)) {
                FAIL(t, "misuse: CUDA_VISIBLE_DEVICES empty: gpu_defaults "
                     "%u recv depth %u", cp.gpu_defaults, cp.recv_depth);
            }
            env_restore("CUDA_VISIBLE_DEVICES", vkeep);
        }
        env_restore("MGI_TEST_GPU_DEFAULTS", keep);
    }
    {
        /* the MGI_* numbers of the environment: a value that is not one,
         * or one out of its range, is refused at the create, naming the
         * variable; so is a setting that was removed */
        static const char *const bad[][2] = {
            {"MGI_RECV_DEPTH", "abc"}, {"MGI_TIMEOUT_MS", "1x"},
            {"MGI_SORTER_BLOCKS", "-1"}, {"MGI_SEG_SIZE", "4294967296"},
            {"MGI_NRANKS", "2147483648"}, {"MGI_TEST_GPU_DEFAULTS", "yes"},
            {"MGI_IDLE_US", "4294967295"}, {"MGI_MOVER_BATCH", "4294967295"},
            {"MGI_TIMEOUT_MS", "0"}, {"MGI_STAGE_DEPTH", "0x20"},
            {"MGI_SORT_DEPTH", "inf"},
            {"MGI_PEER_DIRECT", "0"}, {"MGI_RECV_ZCOPY", "0"},
            {"MGI_DEV_MSG_BATCH", "0"}, {"MGI_OWNER_HELP", "0"},
            {"MGI_MOVER_STREAMS", "1"}, {"MGI_MOVER_COPY_BATCH", "1"},
            {"MGI_SORT_MIRROR", "0"}, {"MGI_CTL_SHM", "1"},
            {"MGI_LOOP_DIRECT", "1"}, {"MGI_STAGE_ZCOPY", "1"},
            {"MGI_EOF_ALONE", "1"}, {"MGI_LANE_APART", "1"},
            {"MGI_SORTER_COALESCE", "2"}, {"MGI_GPU_DEFAULTS", "1"},
            {"MGI_SORT_RINGS", "4"}, {"MGI_MAX_CHANNELS", "256"}
        };
        mgi_context_params_t cp;
        size_t seg = 0, i;
        char *keep;

        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
            keep = env_keep(bad[i][0]);
            setenv(bad[i][0], bad[i][1], 1);
            mgi_context_params_init(&cp);
            log_catch();
            EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                          UCS_ERR_INVALID_PARAM);
            log_said(t, "misuse: a bad number", bad[i][0]);
            env_restore(bad[i][0], keep);
        }
        keep = env_keep("MGI_STAGE_DEPTH");   /* blanks around it */
        setenv("MGI_STAGE_DEPTH", " 32 ", 1);
        mgi_context_params_init(&cp);
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (cp.stage_depth != 32) {
            FAIL(t, "misuse: MGI_STAGE_DEPTH=\" 32 \" gave %u",
                 cp.stage_depth);
        }
        /* field_mask: a field whose bit is clear takes its setting from
         * the environment (else the default), one whose bit is set is the
         * caller's, whatever the environment says */
        setenv("MGI_STAGE_DEPTH", "64", 1);
        memset(&cp, 0, sizeof(cp));
        cp.field_mask  = MGI_CONTEXT_PARAM_FIELD_SEG_SIZE;
        cp.seg_size    = 4096;
        cp.stage_depth = 3;     /* not read: its bit is clear */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (seg != 4096) {
            FAIL(t, "misuse: field_mask SEG_SIZE alone: segment %zu", seg);
        }
        cp.field_mask |= MGI_CONTEXT_PARAM_FIELD_STAGE_DEPTH;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);    /* 3: its own, refused */
        mgi_context_params_init(&cp);
        if ((cp.field_mask != MGI_CONTEXT_PARAM_FIELDS_ALL) ||
            (cp.stage_depth != 64) || (cp.timeout_ms != 60000)) {
            FAIL(t, "misuse: params_init: field_mask %llx stage depth %u "
                 "timeout %u", (unsigned long long)cp.field_mask,
                 cp.stage_depth, cp.timeout_ms);
        }
        env_restore("MGI_STAGE_DEPTH", keep);
    }
    {
        /* device handles: GPU endpoints of the channel only */
        mgi_dev_ch_t h;
        EXPECT_STATUS(t, mgi_ch_device_handle(t->ctx, 999, me, &h),
                      UCS_ERR_NO_ELEM);
        EXPECT_STATUS(t, mgi_ch_device_handle(t->ctx, ch, me, &h),
                      UCS_ERR_INVALID_PARAM);
    }
    EXPECT_STATUS(t, mgi_send(t->ctx, 999, me, &tp, sizeof(tp), -1),
                  UCS_ERR_NO_ELEM);
    EXPECT_STATUS(t, mgi_recv(t->ctx, 999, me, big, sizeof(big)),
                  UCS_ERR_NO_ELEM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp) - 1, -1),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, 0, -1),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), 4000),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, MGI_EP_ID(t->rank, 5), &tp,
                              sizeof(tp), -1), UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_recv(t->ctx, ch, me, small, sizeof(small)),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), -1),
                  sizeof(tp));
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_ERR_BUSY);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, me), UCS_ERR_BUSY);
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, me), UCS_OK);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), -1),
                  UCS_ERR_CANCELED);
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, me), UCS_ERR_CANCELED);
    drain(t, ch, me);
    mgi_context_allgather(t->ctx, &status, big, sizeof(status));
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_OK);
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_ERR_NO_ELEM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), -1),
                  UCS_ERR_NO_ELEM);

    /* ranks disagreeing on the arguments: every rank gets the error */
    p.part_key = (t->rank == 0) ? 0 : -1;
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                  (t->size > 1) ? UCS_ERR_INVALID_PARAM : UCS_OK);
    if (t->size == 1) {
        mgi_flush(t->ctx, ch2, me);
        drain(t, ch2, me);
        mgi_ch_delete(t->ctx, ch2);
    }
    /* bad schema / partition key */
    p.part_key = 3;
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2), UCS_ERR_INVALID_PARAM);
    p.part_key = 0;
    p.dst      = (mgi_ep_id_t[]){me, me};
    p.ndst     = 2;
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2), UCS_ERR_INVALID_PARAM);
    /* landing buffers (every rank names one for its own endpoint, so
     * every rank refuses): without their sizes, of 0 tuples, for a CPU
     * endpoint */
    {
        void *land[64];
        uint64_t land_tuples[64];
        unsigned i;

        for (i = 0; (i < t->nall) && (i < 64); ++i) {
            land[i]        = big;
            land_tuples[i] = 0;
        }
        p.dst         = t->all;
        p.ndst        = t->nall;
        p.land        = land;
        EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                      UCS_ERR_INVALID_PARAM);
        p.land_tuples = land_tuples;
        EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                      UCS_ERR_INVALID_PARAM);
        for (i = 0; (i < t->nall) && (i < 64); ++i) {
            land_tuples[i] = sizeof(big) / sizeof(tp);
        }
        EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                      UCS_ERR_INVALID_PARAM);
        p.land        = NULL;
        p.land_tuples = NULL;
    }

    /* schemaless: tuple sizes; a source that is not local */
    p.dst      = t->all;
    p.ndst     = t->nall;
    p.schema   = NULL;
    p.part_key = -1;
    p.max_tuple = 100;
    p.src      = t->all;
    p.nsrc     = 1;
    if (mgi_ch_create(t->ctx, &p, &ch3) != UCS_OK) {
        FAIL(t, "misuse: schemaless channel create failed");
        return;
    }
    if (t->rank == 0) {
        EXPECT_STATUS(t, mgi_send(t->ctx, ch3, me, big, 101, me),
                      UCS_ERR_INVALID_PARAM);
        EXPECT_STATUS(t, mgi_send(t->ctx, ch3, me, big, 100, me), 100);
        EXPECT_STATUS(t, mgi_flush(t->ctx, ch3, me), UCS_OK);
        /* the 100-byte tuple does not fit 50 bytes (once it arrived) */
        EXPECT_STATUS(t, recv_nonzero(t, ch3, me, big, 50),
                      UCS_ERR_INVALID_PARAM);
        EXPECT_STATUS(t, mgi_recv(t->ctx, ch3, me, big, 100), 100);
    } else {
        EXPECT_STATUS(t, mgi_send(t->ctx, ch3, me, big, 10, -1),
                      UCS_ERR_INVALID_PARAM);
    }
    drain(t, ch3, me);
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch3), UCS_OK);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, 4000), UCS_ERR_NO_ELEM);

    /* endpoint life cycle: a second endpoint, a channel over it, the
     * first endpoint deleted while that channel is in use (the mover
     * restarts), then traffic on the new channel */
    lifecycle(t);
}

/* ---------------------------------------------------------------- scenario */

static int setup_scenario(test_t *t, const char *name)
{
    unsigned i;

    t->nsrc = t->ndst = t->nall;
    memcpy(t->src, t->all, sizeof(t->all));
    memcpy(t->dst, t->all, sizeof(t->all));
    t->mode = MODE_PART;
    if (!strcmp(name, "shuffle")) {
        /* all to all by partition key */
    } else if (!strcmp(name, "zipf")) {
        t->use_zipf = 1; /* keys ~ Zipf(theta): skewed destinations */
    } else if (!strcmp(name, "broadcast")) {
        t->mode = MODE_BCAST;
    } else if (!strcmp(name, "explicit")) {
        t->mode = MODE_EXPLICIT;
    } else if (!strcmp(name, "many2one")) {
        t->ndst = 1;
    } else if (!strcmp(name, "one2many")) {
        t->nsrc = 1;
    } else {
        fprintf(stderr, "unknown scenario %s\n", name);
        t->failed = 1;
        return -1;
    }
    (void)i;
    return 0;
}

typedef struct chrun {
    test_t      *t;
    const char  *name;
    dst_state_t ds[MAX_EPS];
    src_state_t ss[MAX_EPS];
    unsigned    nsrcs, ndsts;
    double      t0;
} chrun_t;

static int chrun_create(chrun_t *c, test_t *t, const char *name)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    mgi_ch_params_t p   = {0};
    unsigned i;

    c->t    = t;
    c->name = name;
    if (setup_scenario(t, name) != 0) {
        return -1;
    }
    if (t->use_zipf) {
        zipf_init(t);
    }
    p.src  = t->src;
    p.nsrc = t->nsrc;
    p.dst  = t->dst;
    p.ndst = t->ndst;
    if (t->mode == MODE_EXPLICIT) {
        p.schema    = NULL;
        p.part_key  = -1;
        p.max_tuple = 200;
    } else {
        p.schema   = &schema;
        p.part_key = (t->mode == MODE_PART) ? 0 : -1;
    }
    if (mgi_ch_create(t->ctx, &p, &t->ch) != UCS_OK) {
        FAIL(t, "mgi_ch_create failed");
        return -1;
    }
    c->t0    = now_s();
    c->nsrcs = c->ndsts = 0;
    for (i = 0; i < t->ndst; ++i) {
        if (is_local(t, t->dst[i])) {
            dst_init(t, &c->ds[c->ndsts++], t->dst[i]);
        }
    }
    for (i = 0; i < t->nsrc; ++i) {
        if (is_local(t, t->src[i])) {
            src_init(t, &c->ss[c->nsrcs++], t->src[i]);
        }
    }
    return 0;
}

/* Receivers on their own threads; sends, then a blocking flush. */
static void chrun_threaded(chrun_t *c)
{
    test_t *t = c->t;
    pthread_t thr[MAX_EPS];
    ucs_status_t st;
    unsigned i;
    int ret;

    for (i = 0; i < c->ndsts; ++i) {
        pthread_create(&thr[i], NULL, recv_thread, &c->ds[i]);
    }
    for (i = 0; i < c->nsrcs; ++i) {
        while ((ret = send_step(&c->ss[i])) == 0) {
            if (c->ss[i].stalled) {
                sched_yield();
            }
        }
        if (ret < 0) {
            break;
        }
    }
    for (i = 0; i < c->nsrcs; ++i) {
        st = mgi_flush(t->ctx, t->ch, c->ss[i].ep);
        if (st != UCS_OK) {
            FAIL(t, "endpoint %u: mgi_flush: %s", c->ss[i].ep,
                 ucs_status_string(st));
        }
    }
    for (i = 0; i < c->ndsts; ++i) {
        pthread_join(thr[i], NULL);
    }
}

/* One thread for all channels, as a GPU block does (paper Fig. 3):
 * interleave send and recv, flush_nb while receiving, recv until EOF. */
static void chrun_single_thread(chrun_t **cs, int k)
{
    int busy = 1, sent, eofs, j;
    ucs_status_t st;
    src_state_t *ss;
    unsigned i;

    while (busy) {
        busy = 0;
        for (j = 0; j < k; ++j) {
            chrun_t *c = cs[j];
            test_t *t  = c->t;

            if (t->failed) {
                return;
            }
            for (i = 0; i < c->nsrcs; ++i) {
                ss = &c->ss[i];
                if (ss->flushed) {
                    continue;
                }
                sent = send_step(ss);
                if (sent == 1) {
                    st = mgi_flush_nb(t->ctx, t->ch, ss->ep);
                    if (st == UCS_OK) {
                        ss->flushed = 1;
                    } else if (st != UCS_INPROGRESS) {
                        FAIL(t, "endpoint %u: mgi_flush_nb: %s", ss->ep,
                             ucs_status_string(st));
                        ss->flushed = 1;
                    }
                } else if (sent < 0) {
                    ss->flushed = 1;
                }
                busy |= !ss->flushed;
            }
            eofs = 0;
            for (i = 0; i < c->ndsts; ++i) {
                eofs += (recv_step(&c->ds[i]) != 0);
            }
            busy |= (eofs < (int)c->ndsts);
        }
    }
    for (j = 0; j < k; ++j) {
        for (i = 0; i < cs[j]->ndsts; ++i) {
            dst_finish(&cs[j]->ds[i]);
        }
    }
}

/* -V (one endpoint per rank): each destination here forwarded exactly
 * the tuples of the pairs whose path (mgi_ch_path) goes through it, and
 * the path of --expect-path is the one the planner gave. all_expect[r]:
 * what rank r's source sent to each destination. */
static void relay_verify(chrun_t *c, const tally_t *all_expect)
{
    test_t *t = c->t;
    mgi_ep_id_t path[MAX_EPS];
    mgi_ch_attr_t attr;
    uint64_t want, total = 0, sum[2] = {0}, all_sum[2 * MAX_EPS];
    unsigned i, j, k;
    int n, r;

    for (i = 0; i < t->ndst; ++i) {
        if (!is_local(t, t->dst[i])) {
            continue;
        }
        want = 0;
        for (k = 0; k < t->nsrc; ++k) {
            for (j = 0; j < t->ndst; ++j) {
                n = mgi_ch_path(t->ctx, t->ch, t->src[k], t->dst[j], path,
                                MAX_EPS);
                if (n < 1) {
                    FAIL(t, "mgi_ch_path %u -> %u: %d", t->src[k], t->dst[j],
                         n);
                    return;
                }
                for (r = 1; r < n - 1; ++r) {
                    if (path[r] == t->dst[i]) {
                        want += all_expect[MGI_EP_RANK(t->src[k]) * MAX_EPS +
                                           j].count;
                    }
                }
            }
        }
        if (mgi_ch_query(t->ctx, t->ch, t->dst[i], &attr) != UCS_OK) {
            FAIL(t, "mgi_ch_query of endpoint %u", t->dst[i]);
            return;
        }
        if (attr.relayed_tuples != want) {
            FAIL(t, "endpoint %u forwarded %lu tuples, the plan's paths "
                 "give it %lu", t->dst[i],
                 (unsigned long)attr.relayed_tuples, (unsigned long)want);
        } else {
            printf("rank %d: endpoint %u forwarded %lu tuples and %u EOFs "
                   "for other endpoints, as the plan's paths give\n",
                   t->rank, t->dst[i], (unsigned long)want,
                   attr.relayed_eofs);
        }
        sum[0] += want;
    }
    if (t->npath >= 2) {
        n = mgi_ch_path(t->ctx, t->ch, MGI_EP_ID(t->path[0], 0),
                        MGI_EP_ID(t->path[t->npath - 1], 0), path, MAX_EPS);
        for (r = 0; (n == t->npath) && (r < n); ++r) {
            if (path[r] != MGI_EP_ID(t->path[r], 0)) {
                break;
            }
        }
        if ((n != t->npath) || (r < n)) {
            FAIL(t, "the path from rank %d to rank %d is not the expected "
                 "one (%d hops)", t->path[0], t->path[t->npath - 1], n);
        } else if (t->rank == 0) {
            printf("path of rank %d -> rank %d:", t->path[0],
                   t->path[t->npath - 1]);
            for (r = 0; r < n; ++r) {
                printf(" %u", path[r]);
            }
            printf("\n");
        }
    }
    /* some tuple took a relay: the plan was followed, not only made */
    mgi_context_allgather(t->ctx, sum, all_sum, sizeof(sum));
    for (r = 0; r < t->size; ++r) {
        total += all_sum[2 * r];
    }
    if ((t->npath > 2) && (total == 0)) {
        FAIL(t, "no tuple was forwarded by a relay");
    }
}

/* Compare what arrived with what every source sent. */
static void chrun_verify(chrun_t *c)
{
    test_t *t = c->t;
    tally_t *all_expect;
    unsigned i;
    int r;

    all_expect = calloc(t->size, sizeof(t->expect));
    mgi_context_allgather(t->ctx, t->expect, all_expect, sizeof(t->expect));
    for (i = 0; i < t->ndst; ++i) {
        tally_t want = {0};
        if (!is_local(t, t->dst[i])) {
            continue;
        }
        for (r = 0; r < t->size; ++r) {
            want.count += all_expect[r * MAX_EPS + i].count;
            want.bytes += all_expect[r * MAX_EPS + i].bytes;
            want.sum   += all_expect[r * MAX_EPS + i].sum;
        }
        if ((want.count != t->got[i].count) ||
            (want.bytes != t->got[i].bytes) || (want.sum != t->got[i].sum)) {
            FAIL(t, "%s endpoint %u: got %lu tuples / %lu bytes / sum %016lx,"
                 " sources sent %lu / %lu / %016lx", c->name, t->dst[i],
                 (unsigned long)t->got[i].count,
                 (unsigned long)t->got[i].bytes,
                 (unsigned long)t->got[i].sum, (unsigned long)want.count,
                 (unsigned long)want.bytes, (unsigned long)want.sum);
        } else {
            printf("rank %d: %s%s channel %u endpoint %u: %lu tuples, %lu "
                   "bytes, checksum %016lx OK (%.2f s)\n", t->rank, c->name,
                   t->use_zipf ? " (zipf)" : "", t->ch, t->dst[i],
                   (unsigned long)want.count, (unsigned long)want.bytes,
                   (unsigned long)want.sum, now_s() - c->t0);
        }
    }
    if (t->vertex_fmt != NULL) {
        relay_verify(c, all_expect);
    }
    free(all_expect);
}

/* Everybody is done before the channel goes. */
static void chrun_delete(chrun_t *c, int failed)
{
    int all[MAX_EPS * 4] = {0}, r, any_failed = 0;

    mgi_context_allgather(c->t->ctx, &failed, all, sizeof(int));
    for (r = 0; r < c->t->size; ++r) {
        any_failed |= all[r];
    }
    if (!any_failed && (mgi_ch_delete(c->t->ctx, c->t->ch) != UCS_OK)) {
        FAIL(c->t, "mgi_ch_delete of a drained channel failed");
    }
}

static int run(test_t *t, const char *name)
{
    chrun_t *c[2];
    test_t *t2;

    if (!strcmp(name, "misuse")) {
        misuse(t);
        return 0;
    }
    if (!strcmp(name, "ids")) {
        channel_ids(t);
        return 0;
    }

    c[0] = calloc(1, sizeof(chrun_t));
    if (strcmp(name, "two_channels") != 0) {
        if (chrun_create(c[0], t, name) == 0) {
            if (t->single_thread) {
                chrun_single_thread(c, 1);
            } else {
                chrun_threaded(c[0]);
            }
            chrun_verify(c[0]);
            chrun_delete(c[0], t->failed);
        }
        free(c[0]);
        return 0;
    }

    /* a shuffle (schema, key) and a schemaless explicit-destination
     * channel at once over the same endpoints and rings */
    c[1] = calloc(1, sizeof(chrun_t));
    t2   = calloc(1, sizeof(*t2));
    *t2  = *t;
    if ((chrun_create(c[0], t, "shuffle") == 0) &&
        (chrun_create(c[1], t2, "explicit") == 0)) {
        chrun_single_thread(c, 2);
        chrun_verify(c[0]);
        chrun_verify(c[1]);
        t->failed |= t2->failed;
        chrun_delete(c[1], t->failed);
        chrun_delete(c[0], t->failed);
    }
    t->failed |= t2->failed;
    free(t2);
    free(c[1]);
    free(c[0]);
    return 0;
}

/* ------------------------------------------------------------- OOB relay */

static int oob_allgather(const void *sbuf, void *rbuf, size_t len, void *arg)
{
    int fd     = *(int*)arg;
    uint64_t l = len;
    size_t got = 0, size;
    ssize_t n;

    if ((write(fd, &l, sizeof(l)) != sizeof(l)) ||
        (write(fd, sbuf, len) != (ssize_t)len)) {
        return -1;
    }
    if (read(fd, &l, sizeof(l)) != sizeof(l)) {
        return -1;
    }
    size = l;
    while (got < size) {
        n = read(fd, (char*)rbuf + got, size - got);
        if (n <= 0) {
            return -1;
        }
        got += n;
    }
    return 0;
}

static int read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    ssize_t n;

    while (got < len) {
        n = read(fd, (char*)buf + got, len - got);
        if (n <= 0) {
            return -1;
        }
        got += n;
    }
    return 0;
}

/* The parent: gathers one contribution per child, sends all to all. */
static int oob_relay(int *fds, int n)
{
    uint64_t len, first = 0, total;
    char *buf = NULL;
    int i, closed;

    for (;;) {
        closed = 0;
        for (i = 0; i < n; ++i) {
            if (read_full(fds[i], &len, sizeof(len)) != 0) {
                ++closed;
                continue;
            }
            if (i == 0) {
                first = len;
                buf   = realloc(buf, len * n);
            } else if (len != first) {
                fprintf(stderr, "oob relay: rank %d gave %lu bytes, rank 0 "
                        "%lu\n", i, (unsigned long)len, (unsigned long)first);
                return -1;
            }
            if (read_full(fds[i], buf + i * len, len) != 0) {
                return -1;
            }
        }
        if (closed == n) {
            free(buf);
            return 0;
        }
        if (closed != 0) {
            fprintf(stderr, "oob relay: %d of %d ranks left early\n", closed,
                    n);
            return -1;
        }
        total = first * n;
        for (i = 0; i < n; ++i) {
            if ((write(fds[i], &total, sizeof(total)) != sizeof(total)) ||
                (write(fds[i], buf, total) != (ssize_t)total)) {
                return -1;
            }
        }
    }
}

/* ------------------------------------------------------------------- main */

/* A context of `params` for scenario `what` (t->rank, t->size set): 0, or
 * 1 with a line saying why not. */
static int ctx_open(test_t *t, const mgi_context_params_t *params,
                    const char *what)
{
    ucs_status_t status = mgi_context_create(params, &t->ctx);

    if (status != UCS_OK) {
        fprintf(stderr, "%s: mgi_context_create: %s\n", what,
                ucs_status_string(status));
        return 1;
    }
    t->rank = mgi_context_rank(t->ctx);
    t->size = mgi_context_size(t->ctx);
    return 0;
}

/* Channel parameters: endpoint 0 of every rank to every one of them, by
 * the schema's first attribute */
static void ch_all(test_t *t, mgi_ch_params_t *p, mgi_schema_t *schema)
{
    int r;

    for (r = 0, t->nall = 0; r < t->size; ++r) {
        t->all[t->nall++] = MGI_EP_ID(r, 0);
    }
    memset(p, 0, sizeof(*p));
    p->src = t->all; p->nsrc = t->nall;
    p->dst = t->all; p->ndst = t->nall;
    p->schema = schema; p->part_key = 0;
}

/* A rank that ended is noticed within this bound (a rank of this host by
 * the peer watch, of another host by UCP's endpoint error: its sockets
 * closed, or UCP's keepalive) */
#define PEER_DIES_BOUND_S 20

/* The last rank (--victims N: the last N, every rank of one host of the
 * netns test) ends in the middle of a shuffle without a word (_exit, as
 * a crash would): at every other rank the calls fail with
 * UCS_ERR_CONNECTION_RESET, an error names the rank that ended, and
 * mgi_context_destroy returns well before MGI_TIMEOUT_MS (the TCP
 * bootstrap's broken star is closed at once, the ended rank's endpoint
 * not waited for). Every rank on this host. */
static int peer_dies(test_t *t, const mgi_context_params_t *params,
                     const mgi_ep_params_t *ep_params)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    mgi_ch_params_t p;
    tuple_t tp[SEND_BATCH];
    char buf[RECV_BUF], who[64];
    double t0, deadline, took, noticed;
    ssize_t n = 0, m = 0;
    mgi_ep_id_t id, me;
    uint32_t seq = 0;
    mgi_ch_id_t ch;
    int victim, i;

    if (ctx_open(t, params, "peer_dies") != 0) {
        return 1;
    }
    victim = t->size - ((t->victims > 0) ? t->victims : 1);
    me     = MGI_EP_ID(t->rank, 0);
    if ((mgi_ep_create(t->ctx, ep_params, &id) != UCS_OK) ||
        (t->size < 2)) {
        fprintf(stderr, "peer_dies: endpoint (or fewer than 2 ranks)\n");
        return 1;
    }
    ch_all(t, &p, &schema);
    if (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK) {
        fprintf(stderr, "peer_dies: mgi_ch_create failed\n");
        return 1;
    }
    log_catch();
    t0       = now_s();
    deadline = t0 + 30;
    while ((n >= 0) && ((m >= 0) || (m == MGI_EOF)) && (now_s() < deadline)) {
        if ((t->rank >= victim) && (now_s() > t0 + 0.2)) {
            _exit(0);           /* tuples sent, none flushed, nothing freed */
        }
        for (i = 0; i < SEND_BATCH; ++i) {
            tp[i] = (tuple_t){.key = seq * 2654435761u, .src = me,
                              .seq = seq};
            ++seq;
        }
        n = mgi_send(t->ctx, ch, me, tp, sizeof(tp), MGI_DST_AUTO);
        m = mgi_recv(t->ctx, ch, me, buf, sizeof(buf));
    }
    if (t->rank >= victim) {
        _exit(0);   /* another victim ended first: end as it did */
    }
    /* on this host its process is watched; on another, UCP's endpoint to
     * it fails */
    for (i = victim; i < t->size; ++i) {
        snprintf(who, sizeof(who), (t->victims > 0) ?
                 "endpoint to rank %d failed" : "rank %d (pid", i);
        if (strstr(log_text, who) != NULL) {
            break;
        }
    }
    log_said(t, "peer_dies", (i < t->size) ? who : "a rank that ended");
    if ((n != UCS_ERR_CONNECTION_RESET) && (m != UCS_ERR_CONNECTION_RESET)) {
        FAIL(t, "peer_dies: after %.1f s send gave %zd, recv %zd, not %d "
             "(%s)", now_s() - t0, n, m, UCS_ERR_CONNECTION_RESET,
             ucs_status_string(UCS_ERR_CONNECTION_RESET));
    }
    noticed = now_s() - t0;     /* the victims end 0.2 s after their t0 */
    if (noticed > PEER_DIES_BOUND_S) {
        FAIL(t, "peer_dies: the end of rank %d noticed after %.1f s, more "
             "than %d s", victim, noticed, PEER_DIES_BOUND_S);
    }
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, me), UCS_ERR_CONNECTION_RESET);
    t0 = now_s();
    mgi_context_destroy(t->ctx);
    took = now_s() - t0;
    if (took > 10) {
        FAIL(t, "peer_dies: mgi_context_destroy took %.1f s", took);
    }
    printf("rank %d: peer_dies: ranks %d..%d ended, noticed in %.2f s; send "
           "%zd, recv %zd, destroy %.2f s: %s\n", t->rank, victim,
           t->size - 1, noticed, n, m, took,
           t->failed ? "FAILED" : "OK");
    return t->failed;
}

/* A channel whose rings `params` make larger than the memory there is:
 * its create is refused with UCS_ERR_NO_MEMORY, naming `var`. 1: the
 * context could not be opened. */
static int ring_budget_channel(test_t *t, const mgi_context_params_t *params,
                               const mgi_ep_params_t *ep_params,
                               const char *rings, const char *var)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    char what[64];
    mgi_ch_params_t p;
    mgi_ep_id_t id;
    mgi_ch_id_t ch;

    if (ctx_open(t, params, "ring_budget") != 0) {
        return 1;
    }
    snprintf(what, sizeof(what), "ring_budget: %s", rings);
    EXPECT_STATUS(t, mgi_ep_create(t->ctx, ep_params, &id), UCS_OK);
    ch_all(t, &p, &schema);
    log_catch();
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch), UCS_ERR_NO_MEMORY);
    log_said(t, what, var);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, MGI_EP_ID(t->rank, 0)), UCS_OK);
    mgi_context_destroy(t->ctx);
    return 0;
}

/* Rings larger than the memory there is: an endpoint's stage rings of 2^26
 * segments (terabytes) are refused at its create, before anything is
 * allocated or zeroed (before, the OOM killer ended the process); final
 * rings of 2^28 segments at the channel's create, at every rank; neither
 * hangs a rank. */
static int ring_budget(test_t *t, const mgi_context_params_t *base,
                       const mgi_ep_params_t *ep_params)
{
    mgi_context_params_t params = *base;
    mgi_ep_id_t id;

    params.seg_size    = 512u << 10;     /* 512 GiB a stage ring */
    params.stage_depth = 1u << 20;
    if (ctx_open(t, &params, "ring_budget") != 0) {
        return 1;
    }
    log_catch();
    EXPECT_STATUS(t, mgi_ep_create(t->ctx, ep_params, &id),
                  UCS_ERR_NO_MEMORY);
    log_said(t, "ring_budget: stage rings", "MGI_STAGE_DEPTH");
    mgi_context_destroy(t->ctx);

    /* final rings, one a consuming block, at the channel's create; sort
     * rings, one a next hop (2^20 segments of 512 KiB: 512 GiB) */
    params             = *base;
    params.seg_size    = 512u << 10;
    params.final_depth = 1u << 20;
    if (ring_budget_channel(t, &params, ep_params, "final rings",
                            "MGI_FINAL_DEPTH") != 0) {
        return 1;
    }
    params            = *base;
    params.seg_size   = 512u << 10;
    params.sort_depth = 1u << 20;
    if (ring_budget_channel(t, &params, ep_params, "sort rings",
                            "MGI_SORT_DEPTH") != 0) {
        return 1;
    }
    if (t->failed) {
        fprintf(stderr, "rank %d: ring_budget FAILED\n", t->rank);
    } else {
        printf("ring_budget: stage, final and sort rings refused at the "
               "endpoint's and the channel's create\n");
    }
    return t->failed;
}

static int rank_main(test_t *t, const char *scenario, mgi_oob_t *oob)
{
    mgi_context_params_t params;
    mgi_ep_params_t ep_params = {.device = MGI_EP_HOST, .blocks = 1};
    mgi_ep_id_t id;
    ucs_status_t status;
    int r, e;

    mgi_context_params_init(&params);
    if (oob != NULL) {
        params.oob = *oob;
    }
    if (!strcmp(scenario, "ring_mismatch")) {
        /* rank 0 with other receive lanes than the others (mgi_launch's
         * MGI_RANK): every rank's create must refuse, none may hang */
        const char *rk = getenv("MGI_RANK");
        params.recv_depth = ((rk != NULL) && !strcmp(rk, "0")) ? 16 : 8;
        status = mgi_context_create(&params, &t->ctx);
        if (status != UCS_ERR_INVALID_PARAM) {
            fprintf(stderr, "ring_mismatch: mgi_context_create gave %s, not "
                    "%s\n", ucs_status_string(status),
                    ucs_status_string(UCS_ERR_INVALID_PARAM));
            if (status == UCS_OK) {
                mgi_context_destroy(t->ctx);
            }
            return 1;
        }
        printf("ring_mismatch: refused (%s)\n", ucs_status_string(status));
        return 0;
    }
    if (!strcmp(scenario, "ring_budget")) {
        return ring_budget(t, &params, &ep_params);
    }
    if (!strcmp(scenario, "peer_dies")) {
        return peer_dies(t, &params, &ep_params);
    }
    if (ctx_open(t, &params, scenario) != 0) {
        return 1;
    }
    for (e = 0; e < t->eps_per_rank; ++e) {
        char vertex[32];
        if (t->vertex_fmt != NULL) {
            snprintf(vertex, sizeof(vertex), t->vertex_fmt,
                     t->rank * t->eps_per_rank + e);
            ep_params.vertex = vertex;
        }
        status = mgi_ep_create(t->ctx, &ep_params, &id);
        if ((status != UCS_OK) || (id != MGI_EP_ID(t->rank, e))) {
            FAIL(t, "mgi_ep_create: %s", ucs_status_string(status));
            return 1;
        }
    }
    for (r = 0; r < t->size; ++r) {
        for (e = 0; e < t->eps_per_rank; ++e) {
            t->all[t->nall++] = MGI_EP_ID(r, e);
        }
    }

    run(t, scenario);

    if (!t->failed && !t->eps_deleted) {
        for (e = 0; e < t->eps_per_rank; ++e) {
            status = mgi_ep_delete(t->ctx, MGI_EP_ID(t->rank, e));
            if (status != UCS_OK) {
                FAIL(t, "mgi_ep_delete: %s", ucs_status_string(status));
            }
        }
    }
    mgi_context_destroy(t->ctx);
    free(t->zipf_cdf);
    if (t->failed) {
        fprintf(stderr, "rank %d: %s FAILED\n", t->rank, scenario);
    }
    return t->failed;
}

int main(int argc, char **argv)
{
    test_t t;
    int i, oob_n = 0, status, ret = 0;
    int fds[MAX_EPS];
    pid_t pids[MAX_EPS];
    const char *scenario = NULL;

    memset(&t, 0, sizeof(t));
    t.eps_per_rank = 1;
    t.ntuples      = 20000;
    t.timeout_s    = 60;
    t.recv_bytes   = RECV_BUF;
    for (i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-e") && (i + 1 < argc)) {
            t.eps_per_rank = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-t") && (i + 1 < argc)) {
            t.ntuples = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "-z") && (i + 1 < argc)) {
            t.theta = atof(argv[++i]);
        } else if (!strcmp(argv[i], "-s")) {
            t.single_thread = 1;
        } else if (!strcmp(argv[i], "-r") && (i + 1 < argc)) {
            t.recv_bytes = strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--oob") && (i + 1 < argc)) {
            oob_n = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--victims") && (i + 1 < argc)) {
            t.victims = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-V") && (i + 1 < argc)) {
            t.vertex_fmt = argv[++i];
        } else if (!strcmp(argv[i], "--expect-path") && (i + 1 < argc)) {
            char *p = argv[++i];
            while ((t.npath < MAX_EPS) && (*p != '\0')) {
                t.path[t.npath++] = (int)strtol(p, &p, 10);
                p += (*p == ',');
            }
        } else {
            scenario = argv[i];
        }
    }
    if ((scenario == NULL) || (t.eps_per_rank < 1) ||
        (t.eps_per_rank > MGI_MAX_LOCAL_EPS) || (t.recv_bytes == 0) ||
        (t.recv_bytes > RECV_BUF)) {
        fprintf(stderr, "usage: %s [-e EPS] [-t TUPLES] [-z THETA] [-s] "
                "[-r RECV_BYTES (1..%d)] [--oob N] [-V VERTEX_FMT [--expect-path R,R,..]] shuffle|zipf|broadcast|explicit|many2one|"
                "one2many|two_channels|misuse|ids|ring_mismatch|ring_budget|peer_dies\n", argv[0], RECV_BUF);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (oob_n == 0) {
        return rank_main(&t, scenario, NULL);
    }

    for (i = 0; i < oob_n; ++i) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
            perror("socketpair");
            return 1;
        }
        pids[i] = fork();
        if (pids[i] == 0) {
            mgi_oob_t oob = {.allgather = oob_allgather, .arg = &sv[1],
                             .rank = i, .size = oob_n};
            int j;
            close(sv[0]);
            for (j = 0; j < i; ++j) {
                close(fds[j]);
            }
            _exit(rank_main(&t, scenario, &oob));
        }
        close(sv[1]);
        fds[i] = sv[0];
    }
    if (oob_relay(fds, oob_n) != 0) {
        ret = 1;
    }
    for (i = 0; i < oob_n; ++i) {
        close(fds[i]);
        waitpid(pids[i], &status, 0);
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
            ret = 1;
        }
    }
    return ret;
}
