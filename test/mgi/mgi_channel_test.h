/**
 * Shared by the parts of mgi_channel_test (see mgi_channel_test.c for the
 * program and its options): the test's state, the tuples and their
 * tallies, the failure macros, and the functions one part calls in
 * another.
 */
#ifndef MGI_CHANNEL_TEST_H
#define MGI_CHANNEL_TEST_H

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
    int           spread_dst;   /* --expect-spread: the rank whose relayed
                                   sources take several next hops, -1 */
    int           ordered;      /* --ordered: MGI_CH_FLAG_ORDERED */
    int           expect_split; /* --expect-split: pairs spread their
                                   tuples over several next hops */
    /* [source index][destination index]: the pair's walks over the next
     * hops each endpoint on the way spreads over (mgi_ch_next_hops): above
     * 1 its tuples may come in any order; its EOF comes through each */
    uint8_t       spread[MAX_EPS][MAX_EPS];
} test_t;

#define FAIL(_t, ...) \
    do { \
        fprintf(stderr, "rank %d: FAIL: ", (_t)->rank); \
        fprintf(stderr, __VA_ARGS__); \
        fprintf(stderr, "\n"); \
        (_t)->failed = 1; \
    } while (0)

/* _want: a ucs_status_t, or a byte count */
#define EXPECT_STATUS(_t, _call, _want) \
    do { \
        long _r = (long)(_call), _w = (long)(_want); \
        if (_r != _w) { \
            FAIL(_t, "%s returned %ld (%s), expected %ld (%s)", #_call, _r, \
                 ret_string(_r), _w, ret_string(_w)); \
        } \
    } while (0)

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

/* mgi_channel_util.c: time, random numbers, environment, caught log */
extern char log_text[];   /* its size where defined */
double now_s(void);
uint64_t mix64(uint64_t x);
uint64_t rng_next(uint64_t *s);
char *env_keep(const char *name);
void env_restore(const char *name, char *kept);
void log_catch(void);
void log_said(test_t *t, const char *check, const char *what);
const char *ret_string(long r);

/* mgi_channel_tuples.c: tuples made, sent, received and checked */
void zipf_init(test_t *t);
int is_local(test_t *t, mgi_ep_id_t ep);
void vertex_name(const test_t *t, int n, char *buf, size_t len);
void dst_init(test_t *t, dst_state_t *d, mgi_ep_id_t ep);
int recv_step(dst_state_t *d);
void dst_finish(dst_state_t *d);
void *recv_thread(void *arg);
void src_init(test_t *t, src_state_t *s, mgi_ep_id_t ep);
int send_step(src_state_t *s);

/* mgi_channel_run.c: the data scenarios, and which case a name runs */
int run(test_t *t, const char *name);

/* mgi_channel_misuse.c: refused calls, endpoint and channel life cycle */
int channel_round(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep1, int round);
int lifecycle_round(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep1, int round);
void misuse(test_t *t);

/* mgi_channel_ids.c: channel ids reused and exhausted */
void channel_ids(test_t *t);

/* mgi_channel_faults.c: a rank that ends, rings beyond the memory */
int peer_dies(test_t *t, const mgi_context_params_t *params,
              const mgi_ep_params_t *ep_params);
int ring_budget(test_t *t, const mgi_context_params_t *base,
                const mgi_ep_params_t *ep_params);

/* mgi_channel_test.c */
int ctx_open(test_t *t, const mgi_context_params_t *params,
             const char *what);

#endif
