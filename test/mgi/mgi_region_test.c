/**
 * mgi_region_test: regions (mgi/mgi_region.h) across the ranks of one
 * context, on host memory, every byte that arrived checked.
 *
 *   mgi_region_test host    host RMA: gets of odd ranges from every rank
 *                           (itself too), put + put_signal to the next
 *                           rank, the bytes checked right after its
 *                           wait_signal, guard bytes untouched, a bounded
 *                           wait that times out, bad arguments refused,
 *                           parts of length 0
 *   mgi_region_test proxy   the thread-level calls of mgi_region_dev.h on
 *                           host threads (the device API's code): the
 *                           other ranks through the region's proxy (UCP
 *                           RMA), this rank directly; put_signal, put +
 *                           fence + signal, get + quiet, bad arguments
 *   mgi_region_test refuse  a rank refusing its part (NULL address, bad
 *                           or contradictory flags): every rank returns
 *                           the refusal
 *
 * Ranks come from the TCP bootstrap (mgi_launch). Exit status 0 when every
 * check passed.
 */
#include <mgi/mgi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSIG        64                      /* signal words at offset 0 */
#define SIG_BYTES   (NSIG * 8)
#define SMALL_OFF(w) (SIG_BYTES + 4096 * (w) + 3)
#define SMALL_LEN(w) (2000 + 13 * (w))
#define BIG_OFF(w)  (SIG_BYTES + 131072 + 40000 * (w))
#define BIG_LEN     39999
#define PX_THREADS  4
#define PX_SLOT(w, k) (16 + (w) * PX_THREADS + (k))
#define PX_OFF(w, k)  (SIG_BYTES + 8192 * ((w) * PX_THREADS + (k)) + 5)
#define PX_LEN(k)   (5000 + (k))
#define MAX_RANKS   4

static int rank, nranks, failures;

#define CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, \
                    __LINE__); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            ++failures; \
        } \
    } while (0)

#define CHECK_ST(_call, _want) \
    do { \
        ucs_status_t _st = (_call); \
        CHECK(_st == (_want), "%s: %s, expected %s", #_call, \
              ucs_status_string(_st), ucs_status_string(_want)); \
    } while (0)

static size_t part_len(int r)
{
    return SIG_BYTES + 300000 + 1000 * r + 37;
}

/* rank r's original byte at offset i of its part */
static uint8_t pat(int r, size_t i)
{
    return (i < SIG_BYTES) ? 0 :
           (uint8_t)(r * 131 + i * 7 + (i >> 8) * 3 + 1);
}

/* byte i of what writer w stores (seed s) */
static uint8_t pat2(int w, unsigned s, size_t i)
{
    return (uint8_t)(0xa5 ^ (w * 17 + s * 29 + i * 3 + (i >> 9)));
}

static uint8_t *part_make(int r)
{
    uint8_t *p = malloc(part_len(r));
    size_t i;

    for (i = 0; i < part_len(r); ++i) {
        p[i] = pat(r, i);
    }
    return p;
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void barrier(mgi_context_h ctx)
{
    int d = 0, all[MAX_RANKS + 64];

    mgi_context_allgather(ctx, &d, all, sizeof(d));
}

/* Bytes [off, off + len) of part `mine` hold pat2(w, s), with the
 * original bytes just before and after. */
static void check_written(const uint8_t *mine, int w, unsigned s, size_t off,
                          size_t len, const char *what)
{
    size_t i, bad = 0, first = 0;

    for (i = 0; i < len; ++i) {
        if (mine[off + i] != pat2(w, s, i)) {
            first = bad++ ? first : i;
        }
    }
    CHECK(bad == 0, "%s from rank %d: %zu of %zu bytes wrong, the first "
          "at %zu (0x%02x, expected 0x%02x)", what, w, bad, len, first,
          mine[off + first], pat2(w, s, first));
    CHECK(mine[off - 1] == pat(rank, off - 1), "%s from rank %d: the byte "
          "before it changed", what, w);
    CHECK(mine[off + len] == pat(rank, off + len), "%s from rank %d: the "
          "byte after it changed", what, w);
}

/* ------------------------------------------------------------- host */

static void test_gets(mgi_region_h reg)
{
    const size_t guard = 64;
    uint8_t *buf;
    size_t i, bad, off, len, k;
    int q;

    buf = malloc(part_len(MAX_RANKS) + 2 * guard);
    for (q = 0; q < nranks; ++q) {
        const size_t ranges[][2] = {
            {SIG_BYTES, 1}, {SIG_BYTES + 1 + q, 4095},
            {part_len(q) - 100, 100}, {SIG_BYTES, part_len(q) - SIG_BYTES},
            {SIG_BYTES + 777, 65537}
        };
        for (k = 0; k < sizeof(ranges) / sizeof(ranges[0]); ++k) {
            off = ranges[k][0];
            len = ranges[k][1];
            memset(buf, 0xee, len + 2 * guard);
            CHECK_ST(mgi_region_get(reg, q, off, buf + guard, len), UCS_OK);
            CHECK_ST(mgi_region_quiet(reg), UCS_OK);
            for (i = 0, bad = 0; i < len; ++i) {
                bad += (buf[guard + i] != pat(q, off + i));
            }
            CHECK(bad == 0, "get of %zu bytes at %zu from rank %d: %zu "
                  "bytes wrong", len, off, q, bad);
            for (i = 0, bad = 0; i < guard; ++i) {
                bad += (buf[i] != 0xee) + (buf[guard + len + i] != 0xee);
            }
            CHECK(bad == 0, "get of %zu bytes at %zu from rank %d wrote %zu "
                  "bytes outside its buffer", len, off, q, bad);
        }
    }
    free(buf);
}

static void test_bad_args(mgi_region_h reg)
{
    uint8_t b[16] = {0};
    uint64_t w;

    printf("rank %d: bad arguments (errors below are expected)\n", rank);
    CHECK_ST(mgi_region_put(reg, nranks, SIG_BYTES, b, 1),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_get(reg, -1, SIG_BYTES, b, 1),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_get(reg, 0, part_len(0) - 10, b, 11),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_put(reg, 0, SIZE_MAX, b, 2), UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_put_signal(reg, 0, SIG_BYTES, b, 4, 4, 1),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_put_signal(reg, 0, SIG_BYTES, b, 4, part_len(0), 1),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_test_signal(reg, 8, 99, 0, &w),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_wait_signal(reg, part_len(rank), MGI_REGION_CMP_EQ,
                                    1, 100, NULL), UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_put(NULL, 0, 0, b, 1), UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_quiet(NULL), UCS_ERR_INVALID_PARAM);
    CHECK(mgi_region_length(reg, nranks) == 0, "length of rank %d", nranks);
}

static int run_host(mgi_context_h ctx)
{
    mgi_region_params_t rp = {0};
    const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    uint8_t *mine = part_make(rank), *src_s, *src_b, *back;
    mgi_region_h reg;
    double t0, dt;
    uint64_t w;
    size_t i;
    int q;

    rp.addr   = mine;
    rp.length = part_len(rank);
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_OK);
    if (failures) {
        return 1;
    }
    for (q = 0; q < nranks; ++q) {
        CHECK(mgi_region_length(reg, q) == part_len(q), "rank %d's length "
              "%zu, expected %zu", q, mgi_region_length(reg, q),
              part_len(q));
    }
    CHECK(mgi_region_local(reg) == mine, "local part");
    test_gets(reg);
    barrier(ctx);       /* every get read the original bytes */

    /* a put, then a put_signal whose signal says both landed */
    src_s = malloc(SMALL_LEN(rank));
    src_b = malloc(BIG_LEN);
    for (i = 0; i < SMALL_LEN(rank); ++i) {
        src_s[i] = pat2(rank, 0, i);
    }
    for (i = 0; i < BIG_LEN; ++i) {
        src_b[i] = pat2(rank, 1, i);
    }
    CHECK_ST(mgi_region_put(reg, next, SMALL_OFF(rank), src_s,
                            SMALL_LEN(rank)), UCS_OK);
    CHECK_ST(mgi_region_put_signal(reg, next, BIG_OFF(rank), src_b, BIG_LEN,
                                   8 * rank, 1000 + rank), UCS_OK);
    CHECK_ST(mgi_region_quiet(reg), UCS_OK);
    CHECK_ST(mgi_region_wait_signal(reg, 8 * prev, MGI_REGION_CMP_EQ,
                                    1000 + prev, 0, &w), UCS_OK);
    check_written(mine, prev, 0, SMALL_OFF(prev), SMALL_LEN(prev), "put");
    check_written(mine, prev, 1, BIG_OFF(prev), BIG_LEN, "put_signal");
    CHECK_ST(mgi_region_test_signal(reg, 8 * prev, MGI_REGION_CMP_GE, 1000,
                                    &w), UCS_OK);
    CHECK(w == 1000u + prev, "signal word %llu", (unsigned long long)w);

    /* what this rank put, read back from there */
    back = malloc(BIG_LEN);
    CHECK_ST(mgi_region_get(reg, next, BIG_OFF(rank), back, BIG_LEN),
             UCS_OK);
    CHECK_ST(mgi_region_quiet(reg), UCS_OK);
    CHECK(memcmp(back, src_b, BIG_LEN) == 0, "read back from rank %d", next);

    /* a word nobody writes: not yet, then a bounded wait that ends */
    CHECK_ST(mgi_region_test_signal(reg, 8 * (NSIG - 1), MGI_REGION_CMP_NE,
                                    0, &w), UCS_INPROGRESS);
    printf("rank %d: a wait that times out (its error is expected)\n", rank);
    t0 = now_ms();
    CHECK_ST(mgi_region_wait_signal(reg, 8 * (NSIG - 1), MGI_REGION_CMP_NE,
                                    0, 300, &w), UCS_ERR_TIMED_OUT);
    dt = now_ms() - t0;
    CHECK((dt >= 290) && (dt < 10000), "wait of 300 ms took %.0f ms", dt);

    test_bad_args(reg);
    CHECK_ST(mgi_region_deregister(reg), UCS_OK);

    /* odd ranks offer nothing */
    rp.addr   = (rank % 2) ? NULL : mine;
    rp.length = (rank % 2) ? 0 : part_len(rank);
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_OK);
    if (failures == 0) {
        for (q = 0; q < nranks; ++q) {
            CHECK(mgi_region_length(reg, q) == ((q % 2) ? 0 : part_len(q)),
                  "rank %d's length %zu", q, mgi_region_length(reg, q));
        }
        if (nranks > 1) {
            CHECK_ST(mgi_region_get(reg, 1, 0, back, 0), UCS_OK);
            CHECK_ST(mgi_region_get(reg, 1, 0, back, 1),
                     UCS_ERR_INVALID_PARAM);
        }
        CHECK_ST(mgi_region_get(reg, 0, BIG_OFF(1), back, 100), UCS_OK);
        CHECK_ST(mgi_region_quiet(reg), UCS_OK);
        CHECK_ST(mgi_region_deregister(reg), UCS_OK);
    }
    free(back);
    free(src_s);
    free(src_b);
    free(mine);
    return failures != 0;
}

/* ------------------------------------------------------------- proxy */

typedef struct {
    mgi_dev_region_t h;
    int              k;
    int              failures;
} px_arg_t;

/* One "device thread": to every other rank a put_signal (even k) or a
 * put, a fence and a signal (odd k), then gets back and a quiet. */
static void *px_thread(void *a)
{
    px_arg_t *x = a;
    const int k = x->k;
    uint8_t *src = malloc(PX_LEN(k)), *back = malloc(PX_LEN(k));
    ucs_status_t st;
    size_t i;
    int q;

    for (i = 0; i < PX_LEN(k); ++i) {
        src[i] = pat2(rank, 10 + k, i);
    }
    for (q = 0; q < nranks; ++q) {
        if (q == rank) {
            continue;
        }
        if (k % 2 == 0) {
            st = mgi_dev_region_put_signal(&x->h, q, PX_OFF(rank, k), src,
                                           PX_LEN(k), 8 * PX_SLOT(rank, k),
                                           7000 + k);
        } else {
            st = mgi_dev_region_put(&x->h, q, PX_OFF(rank, k), src,
                                    PX_LEN(k));
            if (st == UCS_OK) {
                st = mgi_dev_region_fence(&x->h);
            }
            if (st == UCS_OK) {
                st = mgi_dev_region_signal(&x->h, q, 8 * PX_SLOT(rank, k),
                                           7000 + k);
            }
        }
        if (st != UCS_OK) {
            fprintf(stderr, "rank %d thread %d: FAIL to rank %d: %s\n", rank,
                    k, q, ucs_status_string(st));
            ++x->failures;
        }
    }
    st = mgi_dev_region_quiet(&x->h);
    if (st != UCS_OK) {
        fprintf(stderr, "rank %d thread %d: FAIL quiet: %s\n", rank, k,
                ucs_status_string(st));
        ++x->failures;
    }
    for (q = 0; q < nranks; ++q) {
        if (q == rank) {
            continue;
        }
        memset(back, 0, PX_LEN(k));
        st = mgi_dev_region_get(&x->h, back, q, PX_OFF(rank, k), PX_LEN(k));
        if (st == UCS_OK) {
            st = mgi_dev_region_quiet(&x->h);
        }
        if ((st != UCS_OK) || (memcmp(back, src, PX_LEN(k)) != 0)) {
            fprintf(stderr, "rank %d thread %d: FAIL get back from rank %d: "
                    "%s\n", rank, k, q, ucs_status_string(st));
            ++x->failures;
        }
    }
    free(src);
    free(back);
    return NULL;
}

static int run_proxy(mgi_context_h ctx)
{
    mgi_region_params_t rp = {0};
    uint8_t *mine = part_make(rank), b[64] = {0};
    pthread_t th[PX_THREADS];
    px_arg_t args[PX_THREADS];
    mgi_dev_region_t h;
    mgi_region_h reg;
    uint64_t w;
    int q, k;

    rp.addr   = mine;
    rp.length = part_len(rank);
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_OK);
    if (failures) {
        return 1;
    }
    CHECK_ST(mgi_region_device_handle(reg, &h), UCS_OK);
    CHECK(h.rank == (uint32_t)rank && h.nranks == (uint32_t)nranks,
          "handle of rank %u of %u", h.rank, h.nranks);
    CHECK((nranks == 1) || (h.proxy != NULL), "no proxy for host parts");
    for (q = 0; q < nranks; ++q) {
        CHECK(mgi_region_direct(reg, q) == (q == rank), "rank %d %s", q,
              (q == rank) ? "not direct" : "direct");
        CHECK(h.lens[q] == part_len(q), "handle's length of rank %d", q);
    }
    barrier(ctx);

    for (k = 0; k < PX_THREADS; ++k) {
        args[k].h        = h;
        args[k].k        = k;
        args[k].failures = 0;
        pthread_create(&th[k], NULL, px_thread, &args[k]);
    }
    /* meanwhile: every writer's data, seen right after its signal */
    for (q = 0; q < nranks; ++q) {
        for (k = 0; (q != rank) && (k < PX_THREADS); ++k) {
            CHECK_ST(mgi_dev_region_wait_signal(&h, 8 * PX_SLOT(q, k),
                                                MGI_REGION_CMP_EQ, 7000 + k,
                                                0, &w), UCS_OK);
            check_written(mine, q, 10 + k, PX_OFF(q, k), PX_LEN(k),
                          (k % 2) ? "put + fence + signal" : "put_signal");
        }
    }
    for (k = 0; k < PX_THREADS; ++k) {
        pthread_join(th[k], NULL);
        failures += args[k].failures;
    }

    /* this rank's own part: directly */
    CHECK_ST(mgi_dev_region_get(&h, b, rank, BIG_OFF(0) + 9, 40), UCS_OK);
    for (k = 0; k < 40; ++k) {
        CHECK(b[k] == pat(rank, BIG_OFF(0) + 9 + k), "own get byte %d", k);
    }
    CHECK_ST(mgi_dev_region_signal(&h, rank, 8 * (NSIG - 2), 5), UCS_OK);
    CHECK_ST(mgi_dev_region_test_signal(&h, 8 * (NSIG - 2), MGI_REGION_CMP_EQ,
                                        5, NULL), UCS_OK);
    CHECK_ST(mgi_dev_region_test_signal(&h, 8 * (NSIG - 1), MGI_REGION_CMP_GT,
                                        0, NULL), UCS_INPROGRESS);
    CHECK_ST(mgi_dev_region_wait_signal(&h, 8 * (NSIG - 1), MGI_REGION_CMP_GT,
                                        0, 200000000ull, NULL),
             UCS_ERR_TIMED_OUT);
    /* bad arguments: refused before anything is posted */
    CHECK_ST(mgi_dev_region_put(&h, nranks, SIG_BYTES, b, 1),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_dev_region_get(&h, b, 0, part_len(0), 1),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_dev_region_put_signal(&h, 0, SIG_BYTES, b, 1, 12, 1),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_dev_region_test_signal(&h, 0, -1, 0, NULL),
             UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_dev_region_quiet(&h), UCS_OK);

    barrier(ctx);       /* nobody reads this rank's part any more */
    CHECK_ST(mgi_region_deregister(reg), UCS_OK);

    /* without a proxy, other ranks' host parts are unreachable */
    rp.flags = MGI_REGION_F_NO_PROXY;
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_OK);
    if (failures == 0) {
        CHECK_ST(mgi_region_device_handle(reg, &h), UCS_OK);
        CHECK(h.proxy == NULL, "a proxy with MGI_REGION_F_NO_PROXY");
        if (nranks > 1) {
            CHECK_ST(mgi_dev_region_get(&h, b, (rank + 1) % nranks,
                                        SIG_BYTES, 8), UCS_ERR_UNREACHABLE);
        }
        CHECK_ST(mgi_dev_region_get(&h, b, rank, SIG_BYTES, 8), UCS_OK);
        CHECK_ST(mgi_region_deregister(reg), UCS_OK);
    }
    free(mine);
    return failures != 0;
}

/* ------------------------------------------------------------- refuse */

static int run_refuse(mgi_context_h ctx)
{
    mgi_region_params_t rp = {0};
    uint8_t buf[256];
    mgi_region_h reg = NULL;

    printf("rank %d: refusals (errors below are expected)\n", rank);
    /* rank 1 (or 0 alone) gives a NULL address with a length */
    rp.addr   = (rank == (nranks > 1)) ? NULL : buf;
    rp.length = sizeof(buf);
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_ERR_INVALID_PARAM);
    CHECK(reg == NULL, "region set on a refusal");
    /* unknown flags at rank 0 */
    rp.addr  = buf;
    rp.flags = (rank == 0) ? 0x80 : 0;
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_ERR_INVALID_PARAM);
    /* contradictory flags at the last rank */
    rp.flags = (rank == nranks - 1) ?
               (MGI_REGION_F_NO_PROXY | MGI_REGION_F_PROXY_ONLY) : 0;
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_ERR_INVALID_PARAM);
    rp.flags = 0;
    CHECK_ST(mgi_region_register(NULL, &rp, &reg), UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_register(ctx, NULL, &reg), UCS_ERR_INVALID_PARAM);
    CHECK_ST(mgi_region_deregister(NULL), UCS_ERR_INVALID_PARAM);
    /* and a good one still works after them */
    rp.flags = 0;
    CHECK_ST(mgi_region_register(ctx, &rp, &reg), UCS_OK);
    if (reg != NULL) {
        CHECK_ST(mgi_region_deregister(reg), UCS_OK);
    }
    return failures != 0;
}

int main(int argc, char **argv)
{
    mgi_context_params_t cp;
    mgi_context_h ctx;
    ucs_status_t st;
    int ret;

    if ((argc != 2) || (strcmp(argv[1], "host") && strcmp(argv[1], "proxy") &&
                        strcmp(argv[1], "refuse"))) {
        fprintf(stderr, "usage: %s host|proxy|refuse (ranks from "
                "mgi_launch)\n", argv[0]);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    mgi_context_params_init(&cp);
    st = mgi_context_create(&cp, &ctx);
    if (st != UCS_OK) {
        fprintf(stderr, "mgi_context_create: %s\n", ucs_status_string(st));
        return 1;
    }
    rank   = mgi_context_rank(ctx);
    nranks = mgi_context_size(ctx);
    if (nranks > MAX_RANKS) {
        fprintf(stderr, "at most %d ranks\n", MAX_RANKS);
        mgi_context_destroy(ctx);
        return 1;
    }
    if (!strcmp(argv[1], "host")) {
        ret = run_host(ctx);
    } else if (!strcmp(argv[1], "proxy")) {
        ret = run_proxy(ctx);
    } else {
        ret = run_refuse(ctx);
    }
    mgi_context_destroy(ctx);
    printf("rank %d: %s %s (%d failure(s))\n", rank, argv[1],
           ret ? "FAILED" : "passed", failures);
    return ret;
}
