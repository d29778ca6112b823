/*
 * mgi_mpi_test: MPI point-to-point and collectives on host or device
 * buffers, every byte that arrives checked, printed in the OSU
 * micro-benchmarks' style (a header line, then `size value` lines).
 *
 * It shows that an MPI library carries data over the UCX it loaded (and so
 * over cuda_mgi where UCX_TLS names it) and how fast:
 *
 *   check     MPI_Send/MPI_Recv one way, then the other, from an odd offset
 *             to another odd offset, odd and power-of-two sizes; the bytes
 *             around the message must stay untouched
 *   bw        windowed bandwidth as osu_bw: W MPI_Isend / MPI_Irecv in
 *             flight, MPI_Waitall, a small reply; windows 1, 4, 16, 64
 *   lat       ping-pong latency as osu_latency (half a round trip)
 *   sendrecv  MPI_Sendrecv both ways at once (bidirectional bandwidth)
 *   coll      MPI_Alltoall, MPI_Allreduce, MPI_Bcast on all ranks
 *
 * Point-to-point runs between ranks 0 and 1; other ranks wait.  bw, lat and
 * sendrecv check the last message of each size after its timed loop.
 *
 * Device buffers (--mem cuda) come from cudaMalloc; the CUDA runtime is
 * opened at run time, so that the program builds and runs with host
 * buffers on a machine without CUDA.  Each rank takes GPU (local rank %
 * GPU count), set before MPI_Init as a CUDA-aware MPI wants.
 *
 * Exit status: 0 every byte right; 1 wrong bytes; 2 bad options;
 * 4 a wait timed out (MPI_Abort); 77 cannot run here (--mem cuda without a
 * GPU or with an MPI that cannot carry device buffers).
 */
#define _GNU_SOURCE
#include <mpi.h>
#if defined(__has_include)
#  if __has_include(<mpi-ext.h>)
#    include <mpi-ext.h>
#  endif
#endif

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_WRONG_BYTES  1
#define EXIT_USAGE        2
#define EXIT_TIMEOUT      4
#define EXIT_CANNOT_RUN   77     /* automake's SKIP */

#define MODE_CHECK        0x01
#define MODE_BW           0x02
#define MODE_LAT          0x04
#define MODE_SENDRECV     0x08
#define MODE_COLL         0x10
#define MODE_ALL          0x1f

/* odd offsets of the check's send and receive buffers: neither the sender
 * nor the receiver is aligned, and they are not aligned alike */
#define SEND_OFFSET       1
#define RECV_OFFSET       3
/* untouched bytes checked past the end of every received message */
#define GUARD             64
#define POISON            0xa5
/* the sizes above which OSU's benchmarks run fewer iterations */
#define LARGE_MESSAGE     8192
#define MAX_WINDOWS       16
#define FIELD_WIDTH       20

#define TAG_DATA          100
#define TAG_REPLY         101

typedef struct {
    unsigned modes;
    int      cuda;                   /* --mem cuda */
    size_t   min_size, max_size;
    int      windows[MAX_WINDOWS];
    int      nwindows;
    long     iters, warmup;          /* -1: OSU's defaults by size */
    double   timeout;                /* seconds, for every wait */
} opts_t;

static opts_t g_opts = {
    .modes    = 0,
    .cuda     = 0,
    .min_size = 1,
    .max_size = 256UL << 20,
    .windows  = {1, 4, 16, 64},
    .nwindows = 4,
    .iters    = -1,
    .warmup   = -1,
    .timeout  = 60.0,
};

static int g_rank, g_nranks;
static const char *g_prog = "mgi_mpi_test";


/* ------------------------------------------------------------------------
 * Messages
 */

static void die_usage(const char *fmt, ...)
{
    const char *env_rank = getenv("OMPI_COMM_WORLD_RANK");
    va_list ap;

    /* options are parsed before MPI_Init: one rank says it */
    if ((env_rank == NULL) || (strcmp(env_rank, "0") == 0)) {
        fprintf(stderr, "%s: ", g_prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (%s --help shows the options)\n", g_prog);
    }
    exit(EXIT_USAGE);
}

/* rank-labelled message on stderr */
static void say(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: rank %d: ", g_prog, g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}


/* ------------------------------------------------------------------------
 * Watchdog: every wait is bounded by --timeout.  The waiting thread arms a
 * deadline before each MPI call that may block and names what it waits
 * for; if the deadline passes, the watchdog thread says so and aborts the
 * job.  (MPI_Abort from a second thread: the job is lost either way, and
 * Open MPI's abort goes through its runtime, not the blocked pml.)
 */

static struct {
    _Atomic int64_t deadline_ns;     /* 0: not armed */
    const char *_Atomic what;        /* the call waited for */
    const char     *phase;           /* mode and its parameters */
    size_t          size;
    int             window;
    _Atomic long    iter;
} g_guard;

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void guard_phase(const char *phase, size_t size, int window)
{
    g_guard.phase  = phase;
    g_guard.size   = size;
    g_guard.window = window;
}

/* a wait for WHAT begins (iteration ITER of the phase) */
static inline void guard_arm(const char *what, long iter)
{
    atomic_store_explicit(&g_guard.what, what, memory_order_relaxed);
    atomic_store_explicit(&g_guard.iter, iter, memory_order_relaxed);
    atomic_store_explicit(&g_guard.deadline_ns,
                          now_ns() + (int64_t)(g_opts.timeout * 1e9),
                          memory_order_release);
}

static inline void guard_disarm(void)
{
    atomic_store_explicit(&g_guard.deadline_ns, 0, memory_order_release);
}

static void *watchdog_main(void *arg)
{
    int64_t period = (int64_t)(g_opts.timeout * 1e9 / 4);
    struct timespec ts;
    int64_t deadline;
    char window[32];

    (void)arg;
    period = (period > 100000000) ? 100000000 :
             (period < 1000000)   ? 1000000   : period;
    ts.tv_sec  = period / 1000000000;
    ts.tv_nsec = period % 1000000000;
    for (;;) {
        nanosleep(&ts, NULL);
        deadline = atomic_load_explicit(&g_guard.deadline_ns,
                                        memory_order_acquire);
        if ((deadline == 0) || (now_ns() < deadline)) {
            continue;
        }
        window[0] = '\0';
        if (g_guard.window > 0) {
            snprintf(window, sizeof(window), ", window %d", g_guard.window);
        }
        say("timeout: %s did not complete within %g s (%s, size %zu%s, "
            "iteration %ld); aborting", atomic_load(&g_guard.what),
            g_opts.timeout, (g_guard.phase != NULL) ? g_guard.phase :
            "set-up", g_guard.size, window, atomic_load(&g_guard.iter));
        MPI_Abort(MPI_COMM_WORLD, EXIT_TIMEOUT);
        _exit(EXIT_TIMEOUT);
    }
    return NULL;
}

static void guarded_waitall(int n, MPI_Request *reqs, const char *what,
                            long iter)
{
    guard_arm(what, iter);
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    guard_disarm();
}

static void guarded_barrier(void)
{
    guard_arm("MPI_Barrier", 0);
    MPI_Barrier(MPI_COMM_WORLD);
    guard_disarm();
}

/* every rank learns whether any rank found a fault (its count > 0) */
static int guarded_any(long count)
{
    long any;

    guard_arm("MPI_Allreduce of the check results", 0);
    MPI_Allreduce(&count, &any, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    guard_disarm();
    return any > 0;
}


/* ------------------------------------------------------------------------
 * CUDA runtime, opened at run time
 */

typedef int cuda_error_t;
#define CUDA_MEMCPY_DEFAULT 4    /* cudaMemcpyDefault: UVA decides */

static struct {
    void         *lib;
    char          name[64];
    cuda_error_t (*get_device_count)(int *);
    cuda_error_t (*set_device)(int);
    cuda_error_t (*malloc_)(void **, size_t);
    cuda_error_t (*free_)(void *);
    cuda_error_t (*memcpy_)(void *, const void *, size_t, int);
    cuda_error_t (*memset_)(void *, int, size_t);
    cuda_error_t (*synchronize)(void);
    const char  *(*error_string)(cuda_error_t);
} g_cuda;

/* a failed CUDA call on a path that cannot go on */
#define CUDA_CALL(_call) \
    do { \
        cuda_error_t _e = (_call); \
        if (_e != 0) { \
            say("%s failed: %s", #_call, g_cuda.error_string(_e)); \
            MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE); \
        } \
    } while (0)

/* open libcudart; on failure write why into WHY */
static int cuda_open(char *why, size_t len)
{
    static const char *names[] = {"libcudart.so.13", "libcudart.so.12",
                                  "libcudart.so"};
    struct { void **fn; const char *sym; } syms[] = {
        {(void **)&g_cuda.get_device_count, "cudaGetDeviceCount"},
        {(void **)&g_cuda.set_device,       "cudaSetDevice"},
        {(void **)&g_cuda.malloc_,          "cudaMalloc"},
        {(void **)&g_cuda.free_,            "cudaFree"},
        {(void **)&g_cuda.memcpy_,          "cudaMemcpy"},
        {(void **)&g_cuda.memset_,          "cudaMemset"},
        {(void **)&g_cuda.synchronize,      "cudaDeviceSynchronize"},
        {(void **)&g_cuda.error_string,     "cudaGetErrorString"},
    };
    size_t i;

    for (i = 0; (i < sizeof(names) / sizeof(names[0])) &&
                (g_cuda.lib == NULL); i++) {
        g_cuda.lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        snprintf(g_cuda.name, sizeof(g_cuda.name), "%s", names[i]);
    }
    if (g_cuda.lib == NULL) {
        snprintf(why, len, "cannot open the CUDA runtime (%s, .so.12, .so): "
                 "%s", names[0], dlerror());
        return -1;
    }
    for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        *syms[i].fn = dlsym(g_cuda.lib, syms[i].sym);
        if (*syms[i].fn == NULL) {
            snprintf(why, len, "%s has no %s", g_cuda.name, syms[i].sym);
            return -1;
        }
    }
    return 0;
}

/* the rank's GPU, before MPI_Init: its local rank from the launcher */
static int cuda_select(int *device, int *count, char *why, size_t len)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                 "MPI_LOCALRANKID", "SLURM_LOCALID"};
    const char *v = NULL;
    cuda_error_t e;
    size_t i;

    if (cuda_open(why, len) != 0) {
        return -1;
    }
    e = g_cuda.get_device_count(count);
    if ((e != 0) || (*count == 0)) {
        snprintf(why, len, "no CUDA device: cudaGetDeviceCount: %s",
                 (e != 0) ? g_cuda.error_string(e) : "0 devices");
        return -1;
    }
    for (i = 0; (i < sizeof(vars) / sizeof(vars[0])) && (v == NULL); i++) {
        v = getenv(vars[i]);
    }
    *device = (v != NULL) ? atoi(v) % *count : 0;
    e = g_cuda.set_device(*device);
    if (e != 0) {
        snprintf(why, len, "cudaSetDevice(%d): %s", *device,
                 g_cuda.error_string(e));
        return -1;
    }
    return 0;
}


/* ------------------------------------------------------------------------
 * Buffers and their bytes
 */

static void *g_stage;            /* host copy of device bytes */
static size_t g_stage_len;

static void *buf_alloc(size_t len)
{
    void *p = NULL;

    if (g_opts.cuda) {
        CUDA_CALL(g_cuda.malloc_(&p, len));
    } else if (posix_memalign(&p, 4096, len) != 0) {
        say("cannot allocate %zu bytes of host memory", len);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    return p;
}

static void buf_free(void *p)
{
    if (p == NULL) {
        return;
    }
    if (g_opts.cuda) {
        CUDA_CALL(g_cuda.free_(p));
    } else {
        free(p);
    }
}

/* a host view of LEN bytes for the program to write, then buf_put */
static uint8_t *stage(size_t len)
{
    if (len > g_stage_len) {
        free(g_stage);
        g_stage = malloc(len);
        if (g_stage == NULL) {
            say("cannot allocate %zu bytes of host memory", len);
            MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        }
        g_stage_len = len;
    }
    return g_stage;
}

/* BUF's first LEN bytes on the host: BUF itself, or a copy */
static const uint8_t *buf_get(const void *buf, size_t len)
{
    if (!g_opts.cuda) {
        return buf;
    }
    CUDA_CALL(g_cuda.memcpy_(stage(len), buf, len, CUDA_MEMCPY_DEFAULT));
    return g_stage;
}

/* where to write LEN bytes that buf_put then places at BUF */
static uint8_t *buf_view(void *buf, size_t len)
{
    return g_opts.cuda ? stage(len) : buf;
}

static void buf_put(void *buf, size_t len)
{
    if (g_opts.cuda) {
        CUDA_CALL(g_cuda.memcpy_(buf, g_stage, len, CUDA_MEMCPY_DEFAULT));
        /* (a copy from pageable memory may return before it lands) */
        CUDA_CALL(g_cuda.synchronize());
    }
}

static void buf_poison(void *buf, size_t len)
{
    if (g_opts.cuda) {
        CUDA_CALL(g_cuda.memset_(buf, POISON, len));
        CUDA_CALL(g_cuda.synchronize());
    } else {
        memset(buf, POISON, len);
    }
}

/* The bytes of a message: 64-bit words of splitmix64 over the word index,
 * so that any byte can be computed alone and no two messages, offsets or
 * words look alike */
static inline uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint64_t pattern_word(uint64_t seed, uint64_t k)
{
    return mix64(seed + (k + 1) * 0x9e3779b97f4a7c15ULL);
}

static uint64_t seed_of(unsigned mode, size_t size, int src, int dst)
{
    return mix64(((uint64_t)mode << 56) ^ ((uint64_t)size << 16) ^
                 ((uint64_t)src << 8) ^ (uint64_t)dst);
}

/* LEN bytes of the pattern from its word W0 on */
static void pattern_fill_at(uint8_t *p, size_t len, uint64_t seed, size_t w0)
{
    size_t k, nwords = len / 8;
    uint64_t w;

    for (k = 0; k < nwords; k++) {
        w = pattern_word(seed, w0 + k);
        memcpy(p + 8 * k, &w, 8);
    }
    if (len % 8) {
        w = pattern_word(seed, w0 + nwords);
        memcpy(p + 8 * nwords, &w, len % 8);
    }
}

static void pattern_fill(uint8_t *p, size_t len, uint64_t seed)
{
    pattern_fill_at(p, len, seed, 0);
}

/* bytes of P that differ from the pattern: count, and the first one */
typedef struct {
    size_t  wrong;
    size_t  first;
    uint8_t got, want;
} diff_t;

static void diff_byte(diff_t *d, size_t at, uint8_t got, uint8_t want)
{
    if (d->wrong++ == 0) {
        d->first = at;
        d->got   = got;
        d->want  = want;
    }
}

static void pattern_compare(const uint8_t *p, size_t len, uint64_t seed,
                            diff_t *d)
{
    enum { CHUNK = 65536 };
    static uint8_t want[CHUNK];
    size_t off, n, i;

    memset(d, 0, sizeof(*d));
    for (off = 0; off < len; off += n) {
        n = (len - off < CHUNK) ? len - off : CHUNK;
        pattern_fill_at(want, n, seed, off / 8);   /* CHUNK: whole words */
        if (memcmp(p + off, want, n) == 0) {
            continue;
        }
        for (i = 0; i < n; i++) {
            if (p[off + i] != want[i]) {
                diff_byte(d, off + i, p[off + i], want[i]);
            }
        }
    }
}

/* check a received message at BUF + OFFSET of LEN bytes, and that the
 * OFFSET bytes before it and GUARD bytes after it still hold the poison */
static long check_received(const void *buf, size_t offset, size_t len,
                           uint64_t seed, const char *what, int from)
{
    const uint8_t *p = buf_get(buf, offset + len + GUARD);
    diff_t d;
    size_t i, guard_wrong = 0, guard_first = 0;

    pattern_compare(p + offset, len, seed, &d);
    for (i = 0; i < offset + len + GUARD; i++) {
        if ((i == offset) && (len > 0)) {
            i += len - 1;
            continue;
        }
        if ((p[i] != POISON) && (guard_wrong++ == 0)) {
            guard_first = i;
        }
    }
    if (d.wrong > 0) {
        say("%s, %zu bytes from rank %d: %zu bytes wrong, the first at byte "
            "%zu: 0x%02x, expected 0x%02x", what, len, from, d.wrong, d.first,
            d.got, d.want);
    }
    if (guard_wrong > 0) {
        say("%s, %zu bytes from rank %d: %zu bytes written outside the "
            "message (at offset %zu of the buffer, the message is at %zu..%zu)",
            what, len, from, guard_wrong, guard_first, offset,
            offset + len - 1);
    }
    return (long)(d.wrong + guard_wrong);
}


/* ------------------------------------------------------------------------
 * Sizes, iterations, output
 */

/* powers of two from min to max, and with ODD, the sizes one below and one
 * above each (within min..max); returns the count */
static size_t sizes_list(size_t *out, size_t cap, int odd)
{
    size_t n = 0, p, c, k;
    size_t cand[3];

    for (p = 1; (p <= g_opts.max_size) && (n + 3 <= cap); p *= 2) {
        k = 0;
        if (odd && (p >= 4)) {
            cand[k++] = p - 1;
        }
        cand[k++] = p;
        if (odd && (p >= 2)) {
            cand[k++] = p + 1;
        }
        for (c = 0; c < k; c++) {
            if ((cand[c] >= g_opts.min_size) &&
                (cand[c] <= g_opts.max_size) &&
                ((n == 0) || (cand[c] > out[n - 1]))) {
                out[n++] = cand[c];
            }
        }
        if (p > SIZE_MAX / 2) {
            break;
        }
    }
    return n;
}

static long iters_for(size_t size, long small, long large)
{
    return (g_opts.iters >= 0) ? g_opts.iters :
           (size > LARGE_MESSAGE) ? large : small;
}

static long warmup_for(size_t size, long small, long large)
{
    return (g_opts.warmup >= 0) ? g_opts.warmup :
           (size > LARGE_MESSAGE) ? large : small;
}

static void print_header(const char *title, const char *column)
{
    if (g_rank == 0) {
        printf("\n# %s\n# Size%*s\n", title, FIELD_WIDTH + 4, column);
        fflush(stdout);
    }
}

static void print_value(size_t size, double value, int failed)
{
    if (g_rank == 0) {
        printf("%-10zu%*.2f%s\n", size, FIELD_WIDTH, value,
               failed ? "  FAILED: wrong bytes" : "");
        fflush(stdout);
    }
}


/* ------------------------------------------------------------------------
 * Point-to-point
 */

static void *g_sbuf, *g_rbuf;    /* max size + offsets + guard */

/* every byte of MPI_Send/MPI_Recv, one way and then back */
static long run_check(void)
{
    static size_t sizes[256];
    size_t n = sizes_list(sizes, 256, 1), i;
    long failed = 0, wrong;
    int dir, src, dst;

    print_header("MGI MPI Send/Recv check, every byte, offsets "
                 "1 and 3, both directions", "Result");
    for (i = 0; i < n; i++) {
        size_t size = sizes[i];
        wrong = 0;
        guard_phase("check", size, 0);
        for (dir = 0; dir < 2; dir++) {
            src = dir;
            dst = 1 - dir;
            if (g_rank == src) {
                uint8_t *v = buf_view(g_sbuf, SEND_OFFSET + size);
                pattern_fill(v + SEND_OFFSET, size,
                             seed_of(MODE_CHECK, size, src, dst));
                buf_put(g_sbuf, SEND_OFFSET + size);
            } else if (g_rank == dst) {
                buf_poison(g_rbuf, RECV_OFFSET + size + GUARD);
            }
            guarded_barrier();
            if (g_rank == src) {
                guard_arm("MPI_Send", dir);
                MPI_Send((uint8_t *)g_sbuf + SEND_OFFSET, (int)size, MPI_BYTE,
                         dst, TAG_DATA, MPI_COMM_WORLD);
                guard_disarm();
            } else if (g_rank == dst) {
                guard_arm("MPI_Recv", dir);
                MPI_Recv((uint8_t *)g_rbuf + RECV_OFFSET, (int)size, MPI_BYTE,
                         src, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                guard_disarm();
                wrong += check_received(g_rbuf, RECV_OFFSET, size,
                                        seed_of(MODE_CHECK, size, src, dst),
                                        "MPI_Recv", src);
            }
        }
        wrong = guarded_any(wrong);
        failed += wrong;
        if (g_rank == 0) {
            printf("%-10zu%*s\n", size, FIELD_WIDTH,
                   wrong ? "FAILED" : "ok");
            fflush(stdout);
        }
    }
    return failed;
}

/* osu_bw with window W */
static long run_bw(int window)
{
    static size_t sizes[64];
    static MPI_Request reqs[1024];
    char title[96];
    size_t n = sizes_list(sizes, 64, 0), i;
    long failed = 0, it, iters, warmup, wrong;
    double t0 = 0, t;
    int j;
    char reply = 0;

    snprintf(title, sizeof(title), "MGI MPI Bandwidth Test, window %d",
             window);
    print_header(title, "Bandwidth (MB/s)");
    for (i = 0; i < n; i++) {
        size_t size = sizes[i];
        iters  = iters_for(size, 100, 20);
        warmup = warmup_for(size, 10, 2);
        wrong  = 0;
        guard_phase("bw", size, window);
        if (g_rank == 0) {
            pattern_fill(buf_view(g_sbuf, size), size,
                         seed_of(MODE_BW, size, 0, 1));
            buf_put(g_sbuf, size);
        } else if (g_rank == 1) {
            buf_poison(g_rbuf, size + GUARD);
        }
        guarded_barrier();
        for (it = 0; it < warmup + iters; it++) {
            if (it == warmup) {
                t0 = MPI_Wtime();
            }
            if (g_rank == 0) {
                for (j = 0; j < window; j++) {
                    MPI_Isend(g_sbuf, (int)size, MPI_BYTE, 1, TAG_DATA,
                              MPI_COMM_WORLD, &reqs[j]);
                }
                guarded_waitall(window, reqs, "MPI_Waitall of MPI_Isend", it);
                guard_arm("MPI_Recv of the reply", it);
                MPI_Recv(&reply, 1, MPI_CHAR, 1, TAG_REPLY, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                guard_disarm();
            } else if (g_rank == 1) {
                for (j = 0; j < window; j++) {
                    MPI_Irecv(g_rbuf, (int)size, MPI_BYTE, 0, TAG_DATA,
                              MPI_COMM_WORLD, &reqs[j]);
                }
                guarded_waitall(window, reqs, "MPI_Waitall of MPI_Irecv", it);
                guard_arm("MPI_Send of the reply", it);
                MPI_Send(&reply, 1, MPI_CHAR, 0, TAG_REPLY, MPI_COMM_WORLD);
                guard_disarm();
            }
        }
        t = MPI_Wtime() - t0;
        if (g_rank == 1) {
            wrong = check_received(g_rbuf, 0, size,
                                   seed_of(MODE_BW, size, 0, 1),
                                   "bandwidth, last message", 0);
        }
        if (guarded_any(wrong)) {
            failed++;
            wrong = 1;
        }
        print_value(size, (double)size * window * iters / t / 1e6, wrong);
    }
    return failed;
}

/* osu_latency */
static long run_lat(void)
{
    static size_t sizes[64];
    size_t n = sizes_list(sizes, 64, 0), i;
    long failed = 0, it, iters, warmup, wrong;
    double t0 = 0, t;
    int peer = 1 - g_rank;

    print_header("MGI MPI Latency Test", "Latency (us)");
    for (i = 0; i < n; i++) {
        size_t size = sizes[i];
        iters  = iters_for(size, 10000, 1000);
        warmup = warmup_for(size, 100, 10);
        wrong  = 0;
        guard_phase("lat", size, 0);
        if (g_rank < 2) {
            pattern_fill(buf_view(g_sbuf, size), size,
                         seed_of(MODE_LAT, size, g_rank, peer));
            buf_put(g_sbuf, size);
            buf_poison(g_rbuf, size + GUARD);
        }
        guarded_barrier();
        for (it = 0; it < warmup + iters; it++) {
            if (it == warmup) {
                t0 = MPI_Wtime();
            }
            if (g_rank == 0) {
                guard_arm("MPI_Send of the ping", it);
                MPI_Send(g_sbuf, (int)size, MPI_BYTE, 1, TAG_DATA,
                         MPI_COMM_WORLD);
                guard_arm("MPI_Recv of the pong", it);
                MPI_Recv(g_rbuf, (int)size, MPI_BYTE, 1, TAG_DATA,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                guard_disarm();
            } else if (g_rank == 1) {
                guard_arm("MPI_Recv of the ping", it);
                MPI_Recv(g_rbuf, (int)size, MPI_BYTE, 0, TAG_DATA,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                guard_arm("MPI_Send of the pong", it);
                MPI_Send(g_sbuf, (int)size, MPI_BYTE, 0, TAG_DATA,
                         MPI_COMM_WORLD);
                guard_disarm();
            }
        }
        t = MPI_Wtime() - t0;
        if (g_rank < 2) {
            wrong = check_received(g_rbuf, 0, size,
                                   seed_of(MODE_LAT, size, peer, g_rank),
                                   "latency, last message", peer);
        }
        if (guarded_any(wrong)) {
            failed++;
            wrong = 1;
        }
        print_value(size, t * 1e6 / (2.0 * iters), wrong);
    }
    return failed;
}

/* MPI_Sendrecv both ways at once, odd sizes and offsets */
static long run_sendrecv(void)
{
    static size_t sizes[256];
    size_t n = sizes_list(sizes, 256, 1), i;
    long failed = 0, it, iters, warmup, wrong;
    double t0 = 0, t;
    int peer = 1 - g_rank;

    print_header("MGI MPI Sendrecv Bi-Directional Bandwidth Test, every "
                 "byte, offsets 1 and 3", "Bandwidth (MB/s)");
    for (i = 0; i < n; i++) {
        size_t size = sizes[i];
        iters  = iters_for(size, 100, 20);
        warmup = warmup_for(size, 10, 2);
        wrong  = 0;
        guard_phase("sendrecv", size, 0);
        if (g_rank < 2) {
            uint8_t *v = buf_view(g_sbuf, SEND_OFFSET + size);
            pattern_fill(v + SEND_OFFSET, size,
                         seed_of(MODE_SENDRECV, size, g_rank, peer));
            buf_put(g_sbuf, SEND_OFFSET + size);
            buf_poison(g_rbuf, RECV_OFFSET + size + GUARD);
        }
        guarded_barrier();
        for (it = 0; it < warmup + iters; it++) {
            if (it == warmup) {
                t0 = MPI_Wtime();
            }
            if (g_rank < 2) {
                guard_arm("MPI_Sendrecv", it);
                MPI_Sendrecv((uint8_t *)g_sbuf + SEND_OFFSET, (int)size,
                             MPI_BYTE, peer, TAG_DATA,
                             (uint8_t *)g_rbuf + RECV_OFFSET, (int)size,
                             MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                guard_disarm();
            }
        }
        t = MPI_Wtime() - t0;
        if (g_rank < 2) {
            wrong = check_received(g_rbuf, RECV_OFFSET, size,
                                   seed_of(MODE_SENDRECV, size, peer, g_rank),
                                   "MPI_Sendrecv, last message", peer);
        }
        if (guarded_any(wrong)) {
            failed++;
            wrong = 1;
        }
        print_value(size, 2.0 * size * iters / t / 1e6, wrong);
    }
    return failed;
}


/* ------------------------------------------------------------------------
 * Collectives
 */

enum { COLL_ALLTOALL, COLL_ALLREDUCE, COLL_BCAST, COLL_COUNT };

static const char *coll_names[COLL_COUNT] = {
    "MPI_Alltoall", "MPI_Allreduce", "MPI_Bcast"
};

static uint32_t pattern_u32(uint64_t seed, size_t k)
{
    return (uint32_t)pattern_word(seed, k);
}

/* fill the send buffer (and poison the receive buffer) of collective C at
 * SIZE bytes per rank */
static void coll_prepare(int c, size_t size, void *sbuf, void *rbuf)
{
    size_t slen = size, rlen = size, k;
    uint8_t *v;
    int r;

    if (c == COLL_ALLTOALL) {
        slen = rlen = size * g_nranks;
    }
    v = buf_view(sbuf, slen);
    switch (c) {
    case COLL_ALLTOALL:
        for (r = 0; r < g_nranks; r++) {
            pattern_fill(v + r * size, size,
                         seed_of(MODE_COLL | (c << 5), size, g_rank, r));
        }
        break;
    case COLL_ALLREDUCE:
        for (k = 0; k < size / 4; k++) {
            uint32_t x = pattern_u32(seed_of(MODE_COLL | (c << 5), size,
                                             g_rank, 0), k);
            memcpy(v + 4 * k, &x, 4);
        }
        break;
    case COLL_BCAST:
        pattern_fill(v, size, seed_of(MODE_COLL | (c << 5), size, 0, 0));
        break;
    }
    if ((c != COLL_BCAST) || (g_rank == 0)) {
        buf_put(sbuf, slen);
    }
    if (c != COLL_BCAST) {
        buf_poison(rbuf, rlen + GUARD);
    } else if (g_rank != 0) {
        buf_poison(sbuf, size + GUARD);
    }
}

static long coll_check(int c, size_t size, void *sbuf, void *rbuf)
{
    const uint8_t *p;
    long wrong = 0;
    diff_t d;
    size_t k;
    int r;

    switch (c) {
    case COLL_ALLTOALL:
        p = buf_get(rbuf, size * g_nranks + GUARD);
        for (r = 0; r < g_nranks; r++) {
            pattern_compare(p + r * size, size,
                            seed_of(MODE_COLL | (c << 5), size, r, g_rank),
                            &d);
            if (d.wrong > 0) {
                say("MPI_Alltoall, %zu bytes a rank: block from rank %d: "
                    "%zu bytes wrong, the first at byte %zu: 0x%02x, "
                    "expected 0x%02x", size, r, d.wrong, d.first, d.got,
                    d.want);
                wrong += d.wrong;
            }
        }
        for (k = 0; k < GUARD; k++) {
            wrong += (p[size * g_nranks + k] != POISON);
        }
        break;
    case COLL_ALLREDUCE:
        p = buf_get(rbuf, size);
        for (k = 0; k < size / 4; k++) {
            uint32_t want = 0, got;
            for (r = 0; r < g_nranks; r++) {
                want += pattern_u32(seed_of(MODE_COLL | (c << 5), size, r,
                                            0), k);
            }
            memcpy(&got, p + 4 * k, 4);
            if ((got != want) && (wrong++ == 0)) {
                say("MPI_Allreduce (MPI_SUM of MPI_UNSIGNED), %zu bytes: "
                    "element %zu is %" PRIu32 ", expected %" PRIu32, size, k,
                    got, want);
            }
        }
        break;
    case COLL_BCAST:
        if (g_rank != 0) {
            wrong = check_received(sbuf, 0, size,
                                   seed_of(MODE_COLL | (c << 5), size, 0, 0),
                                   "MPI_Bcast", 0);
        }
        break;
    }
    return wrong;
}

static long run_coll(int cuda_aware, const char *why_not)
{
    static size_t sizes[64];
    size_t n = sizes_list(sizes, 64, 0), i, max_block;
    long failed = 0, it, iters, warmup, wrong;
    double t0 = 0, t, sum;
    void *sbuf, *rbuf;
    char title[96];
    int c;

    if (g_opts.cuda && !cuda_aware) {
        if (g_rank == 0) {
            for (c = 0; c < COLL_COUNT; c++) {
                printf("\n# MGI MPI %s Latency Test\n# SKIPPED: device "
                       "buffers, and this MPI is not CUDA-aware (%s): its "
                       "collectives would touch device memory on the host\n",
                       coll_names[c] + 4, why_not);
            }
            fflush(stdout);
        }
        return 0;
    }
    max_block = (n > 0) ? sizes[n - 1] : 0;
    sbuf = buf_alloc(max_block * g_nranks + GUARD);
    rbuf = buf_alloc(max_block * g_nranks + GUARD);
    for (c = 0; c < COLL_COUNT; c++) {
        snprintf(title, sizeof(title), "MGI MPI %s Latency Test, every byte",
                 coll_names[c] + 4);    /* (OSU's titles: no MPI_) */
        print_header(title, "Avg Latency(us)");
        for (i = 0; i < n; i++) {
            size_t size = sizes[i];
            if ((c == COLL_ALLREDUCE) && (size < 4)) {
                continue;    /* whole MPI_UNSIGNED elements */
            }
            iters  = iters_for(size, 1000, 100);
            warmup = warmup_for(size, 200, 10);
            guard_phase(coll_names[c], size, 0);
            coll_prepare(c, size, sbuf, rbuf);
            guarded_barrier();
            for (it = 0; it < warmup + iters; it++) {
                if (it == warmup) {
                    t0 = MPI_Wtime();
                }
                guard_arm(coll_names[c], it);
                switch (c) {
                case COLL_ALLTOALL:
                    MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size,
                                 MPI_BYTE, MPI_COMM_WORLD);
                    break;
                case COLL_ALLREDUCE:
                    MPI_Allreduce(sbuf, rbuf, (int)(size / 4), MPI_UNSIGNED,
                                  MPI_SUM, MPI_COMM_WORLD);
                    break;
                case COLL_BCAST:
                    MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
                    break;
                }
                guard_disarm();
            }
            t = MPI_Wtime() - t0;
            wrong = coll_check(c, size, sbuf, rbuf);
            guard_arm("MPI_Allreduce of the latencies", 0);
            MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            guard_disarm();
            if (guarded_any(wrong)) {
                failed++;
                wrong = 1;
            }
            print_value(size, sum / g_nranks * 1e6 / iters, wrong);
        }
    }
    buf_free(sbuf);
    buf_free(rbuf);
    return failed;
}


/* ------------------------------------------------------------------------
 * What the process loaded: the MPI and UCX libraries and UCX's modules
 */

typedef struct {
    char libmpi[PATH_MAX];
    char libucp[PATH_MAX];
    char uct_modules[512];
} loaded_t;

static int loaded_scan(struct dl_phdr_info *info, size_t size, void *arg)
{
    loaded_t *l = arg;
    const char *path = info->dlpi_name, *base, *end;
    size_t len;

    (void)size;
    if ((path == NULL) || (*path == '\0')) {
        return 0;
    }
    base = strrchr(path, '/');
    base = (base != NULL) ? base + 1 : path;
    if (strncmp(base, "libmpi.so", 9) == 0) {
        snprintf(l->libmpi, sizeof(l->libmpi), "%s", path);
    } else if (strncmp(base, "libucp.so", 9) == 0) {
        snprintf(l->libucp, sizeof(l->libucp), "%s", path);
    } else if ((strncmp(base, "libuct_", 7) == 0) &&
               ((end = strstr(base, ".so")) != NULL)) {
        len = strlen(l->uct_modules);
        snprintf(l->uct_modules + len, sizeof(l->uct_modules) - len, "%s%.*s",
                 (len > 0) ? " " : "", (int)(end - base - 7), base + 7);
    }
    return 0;
}

/* the version of the UCX whose libucp this process loaded */
static const char *ucx_version(const char *libucp)
{
    const char *(*get)(void);
    void *h;

    if (*libucp == '\0') {
        return NULL;
    }
    h = dlopen(libucp, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL) {
        return NULL;
    }
    *(void **)&get = dlsym(h, "ucp_get_version_string");
    return (get != NULL) ? get() : NULL;
}

/* an MPI control variable that holds a string (Open MPI: "pml" is the
 * point-to-point layer asked for) */
static void mpi_cvar_string(const char *name, char *out, size_t len)
{
    char nm[256], desc[8], *value;
    int provided, num, i, verbosity, bind, scope, count;
    int nmlen, desclen;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;

    snprintf(out, len, "%s", "(unknown)");
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        return;
    }
    MPI_T_cvar_get_num(&num);
    for (i = 0; i < num; i++) {
        nmlen   = sizeof(nm);
        desclen = sizeof(desc);
        if ((MPI_T_cvar_get_info(i, nm, &nmlen, &verbosity, &type, &enumtype,
                                 desc, &desclen, &bind, &scope) !=
             MPI_SUCCESS) || (strcmp(nm, name) != 0) || (type != MPI_CHAR)) {
            continue;
        }
        if (MPI_T_cvar_handle_alloc(i, NULL, &handle, &count) ==
            MPI_SUCCESS) {
            /* (Open MPI copies the whole string, whatever count says) */
            value = calloc(1, 4096 + (size_t)count);
            if ((value != NULL) &&
                (MPI_T_cvar_read(handle, value) == MPI_SUCCESS)) {
                snprintf(out, len, "%s", (*value != '\0') ? value :
                         "(not set: any)");
            }
            free(value);
            MPI_T_cvar_handle_free(&handle);
        }
        break;
    }
    MPI_T_finalize();
}

/* whether the MPI library handles device buffers itself */
static int mpi_cuda_aware(char *why, size_t len)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    int q = MPIX_Query_cuda_support();
    snprintf(why, len, "MPIX_Query_cuda_support() = %d, built with "
             "MPIX_CUDA_AWARE_SUPPORT = %d", q, MPIX_CUDA_AWARE_SUPPORT);
    return q == 1;
#else
    snprintf(why, len, "this MPI has no MPIX_Query_cuda_support (no "
             "mpi-ext.h CUDA extension)");
    return 0;
#endif
}


/* ------------------------------------------------------------------------
 * Options
 */

static void usage(void)
{
    printf(
"Usage: %s [OPTIONS] [MODE...]      (under mpirun, 2 ranks or more)\n"
"\n"
"Modes (default: all):\n"
"  check      MPI_Send/MPI_Recv both ways, odd sizes and offsets, every byte\n"
"  bw         windowed bandwidth (MPI_Isend/MPI_Irecv + MPI_Waitall, osu_bw)\n"
"  lat        ping-pong latency, half a round trip (osu_latency)\n"
"  sendrecv   MPI_Sendrecv both ways at once, every byte\n"
"  coll       MPI_Alltoall, MPI_Allreduce, MPI_Bcast, every byte\n"
"  all        all of them\n"
"\n"
"Options:\n"
"  --mem host|cuda       buffers in host memory (default) or cudaMalloc's;\n"
"                        each rank takes GPU (local rank %% GPU count)\n"
"  -m, --size [MIN:]MAX  sizes from MIN to MAX bytes (default 1:256M;\n"
"                        K, M, G suffixes): powers of two, and for check\n"
"                        and sendrecv the sizes one below and above each\n"
"  -w, --window LIST     bw's windows, comma-separated (default 1,4,16,64)\n"
"  -i, --iterations N    timed iterations at every size (default as OSU's:\n"
"                        more for small sizes than for large)\n"
"  -x, --warmup N        untimed iterations before them\n"
"  -t, --timeout SEC     longest wait for any MPI call (default 60); then\n"
"                        the wait is named and the job aborted\n"
"  -h, --help            this text\n"
"\n"
"Exit status: 0 every byte right, 1 wrong bytes, 2 bad options,\n"
"4 a wait timed out, 77 cannot run here (--mem cuda without a GPU or\n"
"with an MPI that cannot carry device buffers).\n", g_prog);
}

static size_t parse_size(const char *s, const char *opt)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if ((end == s) || (errno != 0) || (*s == '-')) {
        die_usage("%s %s: not a size", opt, s);
    }
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    }
    if (*end != '\0') {
        die_usage("%s %s: not a size (bytes, or with K, M, G)", opt, s);
    }
    return (size_t)v;
}

static long parse_count(const char *s, const char *opt)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if ((end == s) || (*end != '\0') || (errno != 0) || (v < 0)) {
        die_usage("%s %s: not a count (0 or more)", opt, s);
    }
    return v;
}

static void parse_options(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mem",        required_argument, NULL, 'M'},
        {"size",       required_argument, NULL, 'm'},
        {"window",     required_argument, NULL, 'w'},
        {"iterations", required_argument, NULL, 'i'},
        {"warmup",     required_argument, NULL, 'x'},
        {"timeout",    required_argument, NULL, 't'},
        {"help",       no_argument,       NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    static const struct { const char *name; unsigned mode; } modes[] = {
        {"check", MODE_CHECK}, {"bw", MODE_BW}, {"lat", MODE_LAT},
        {"sendrecv", MODE_SENDRECV}, {"coll", MODE_COLL}, {"all", MODE_ALL}
    };
    char *copy, *tok, *save, *colon, *end;
    int c, k;
    size_t m;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:w:i:x:t:h", longopts, NULL)) !=
           -1) {
        switch (c) {
        case 'M':
            if (strcmp(optarg, "host") == 0) {
                g_opts.cuda = 0;
            } else if (strcmp(optarg, "cuda") == 0) {
                g_opts.cuda = 1;
            } else {
                die_usage("--mem %s: expected host or cuda", optarg);
            }
            break;
        case 'm':
            colon = strchr(optarg, ':');
            if (colon != NULL) {
                *colon = '\0';
                g_opts.min_size = parse_size(optarg, "--size");
                g_opts.max_size = parse_size(colon + 1, "--size");
                *colon = ':';
            } else {
                g_opts.max_size = parse_size(optarg, "--size");
            }
            if ((g_opts.min_size == 0) ||
                (g_opts.min_size > g_opts.max_size) ||
                (g_opts.max_size > (size_t)INT_MAX / 2)) {
                die_usage("--size %s: expected 1 <= MIN <= MAX <= 1G",
                          optarg);
            }
            break;
        case 'w':
            copy = strdup(optarg);
            g_opts.nwindows = 0;
            for (tok = strtok_r(copy, ",", &save); tok != NULL;
                 tok = strtok_r(NULL, ",", &save)) {
                long w = strtol(tok, &end, 10);
                if ((*end != '\0') || (w < 1) || (w > 1024) ||
                    (g_opts.nwindows == MAX_WINDOWS)) {
                    die_usage("--window %s: expected up to %d windows of 1 "
                              "to 1024, comma-separated", optarg,
                              MAX_WINDOWS);
                }
                g_opts.windows[g_opts.nwindows++] = (int)w;
            }
            free(copy);
            if (g_opts.nwindows == 0) {
                die_usage("--window %s: no window given", optarg);
            }
            break;
        case 'i':
            g_opts.iters = parse_count(optarg, "--iterations");
            if (g_opts.iters == 0) {
                die_usage("--iterations 0: at least one is timed");
            }
            break;
        case 'x':
            g_opts.warmup = parse_count(optarg, "--warmup");
            break;
        case 't':
            g_opts.timeout = strtod(optarg, &end);
            if ((end == optarg) || (*end != '\0') ||
                !(g_opts.timeout > 0)) {
                die_usage("--timeout %s: expected seconds, more than 0",
                          optarg);
            }
            break;
        case 'h':
            usage();
            exit(0);
        case ':':
            die_usage("option %s needs a value", argv[optind - 1]);
            break;
        default:
            die_usage("unknown option %s", argv[optind - 1]);
            break;
        }
    }
    for (; optind < argc; optind++) {
        for (k = 0, m = sizeof(modes) / sizeof(modes[0]); k < (int)m; k++) {
            if (strcmp(argv[optind], modes[k].name) == 0) {
                g_opts.modes |= modes[k].mode;
                break;
            }
        }
        if (k == (int)m) {
            die_usage("unknown mode %s (check, bw, lat, sendrecv, coll, all)",
                      argv[optind]);
        }
    }
    if (g_opts.modes == 0) {
        g_opts.modes = MODE_ALL;
    }
}


/* ------------------------------------------------------------------------
 * Main
 */

int main(int argc, char **argv)
{
    char cuda_why[1024] = "", aware_why[160], pml[128], gpu_line[64];
    char *gpus = NULL;
    int device = -1, count = 0, cuda_ok = 0, cannot, aware, r, w;
    const char *ucx_v;
    loaded_t loaded;
    pthread_t watchdog;
    long failed = 0;
    size_t buf_len;

    g_prog = (strrchr(argv[0], '/') != NULL) ? strrchr(argv[0], '/') + 1 :
             argv[0];
    parse_options(argc, argv);

    /* the GPU before MPI_Init, so that the MPI and UCX find it current */
    if (g_opts.cuda) {
        cuda_ok = (cuda_select(&device, &count, cuda_why,
                               sizeof(cuda_why)) == 0);
    }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);
    if (pthread_create(&watchdog, NULL, watchdog_main, NULL) != 0) {
        say("cannot start the watchdog thread");
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    pthread_detach(watchdog);
    if (g_nranks < 2) {
        say("needs 2 ranks or more (mpirun -np 2 %s)", g_prog);
        MPI_Finalize();
        return EXIT_USAGE;
    }

    memset(&loaded, 0, sizeof(loaded));
    dl_iterate_phdr(loaded_scan, &loaded);
    ucx_v = ucx_version(loaded.libucp);
    mpi_cvar_string("pml", pml, sizeof(pml));
    aware = mpi_cuda_aware(aware_why, sizeof(aware_why));

    /* Device buffers need an MPI that is CUDA-aware, or one whose pml is
     * UCX with its CUDA transports: UCX then tells device memory from host
     * memory itself (point-to-point only; the MPI's own collectives would
     * still read device memory on the host) */
    if (g_opts.cuda && cuda_ok && !aware &&
        !((strcmp(pml, "ucx") == 0) && (strstr(loaded.uct_modules, "cuda") !=
                                        NULL))) {
        snprintf(cuda_why, sizeof(cuda_why), "this MPI is not CUDA-aware "
                 "(%s) and its pml is not UCX with CUDA (pml %s, UCT modules "
                 "loaded: %s)", aware_why, pml,
                 (loaded.uct_modules[0] != '\0') ? loaded.uct_modules :
                 "none");
        cuda_ok = 0;
    }
    cannot = g_opts.cuda && !cuda_ok;
    guard_arm("MPI_Allreduce of the set-up", 0);
    MPI_Allreduce(MPI_IN_PLACE, &cannot, 1, MPI_INT, MPI_MAX,
                  MPI_COMM_WORLD);
    guard_disarm();
    if (cannot) {
        if (g_opts.cuda && !cuda_ok) {
            say("--mem cuda: cannot run here: %s", cuda_why);
        }
        MPI_Finalize();
        return EXIT_CANNOT_RUN;
    }

    /* which GPU each rank took */
    if (g_opts.cuda) {
        snprintf(gpu_line, sizeof(gpu_line), "GPU %d of %d", device, count);
        gpus = calloc((size_t)g_nranks, sizeof(gpu_line));
        guard_arm("MPI_Gather of the GPUs", 0);
        MPI_Gather(gpu_line, sizeof(gpu_line), MPI_CHAR, gpus,
                   sizeof(gpu_line), MPI_CHAR, 0, MPI_COMM_WORLD);
        guard_disarm();
    }

    if (g_rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING], *nl;
        int vlen;

        MPI_Get_library_version(version, &vlen);
        if ((nl = strchr(version, '\n')) != NULL) {
            *nl = '\0';
        }
        printf("# MGI MPI test\n");
        printf("# MPI: %s (%s)\n", version,
               (loaded.libmpi[0] != '\0') ? loaded.libmpi : "linked in");
        printf("# MPI pml: %s\n", pml);
        printf("# MPI CUDA-aware: %s (%s)\n", aware ? "yes" : "no",
               aware_why);
        if (ucx_v != NULL) {
            printf("# UCX: %s (%s)\n", ucx_v, loaded.libucp);
            printf("# UCX UCT modules: %s\n", (loaded.uct_modules[0] != '\0') ?
                   loaded.uct_modules : "none");
        } else {
            printf("# UCX: not loaded\n");
        }
        printf("# UCX_TLS: %s\n", getenv("UCX_TLS") ? getenv("UCX_TLS") :
               "(not set)");
        printf("# Ranks: %d, buffers: %s", g_nranks,
               g_opts.cuda ? "device memory (cudaMalloc)" : "host memory");
        if (g_opts.cuda) {
            printf(" via %s:", g_cuda.name);
            for (r = 0; r < g_nranks; r++) {
                printf(" rank %d %s%s", r, gpus + r * sizeof(gpu_line),
                       (r + 1 < g_nranks) ? "," : "");
            }
        }
        printf("\n# Timeout: %g s for every wait\n", g_opts.timeout);
        fflush(stdout);
    }
    free(gpus);

    buf_len = g_opts.max_size + 8 + GUARD;
    g_sbuf  = buf_alloc(buf_len);
    g_rbuf  = buf_alloc(buf_len);

    if (g_opts.modes & MODE_CHECK) {
        failed += run_check();
    }
    if (g_opts.modes & MODE_BW) {
        for (w = 0; w < g_opts.nwindows; w++) {
            failed += run_bw(g_opts.windows[w]);
        }
    }
    if (g_opts.modes & MODE_LAT) {
        failed += run_lat();
    }
    if (g_opts.modes & MODE_SENDRECV) {
        failed += run_sendrecv();
    }
    if (g_opts.modes & MODE_COLL) {
        failed += run_coll(aware, aware_why);
    }

    buf_free(g_sbuf);
    buf_free(g_rbuf);
    if (g_rank == 0) {
        printf("\n# %s\n", (failed == 0) ? "every byte right" :
               "FAILED: wrong bytes (the ranks' messages say where)");
        fflush(stdout);
    }
    guard_phase("MPI_Finalize", 0, 0);
    guard_arm("MPI_Finalize", 0);
    MPI_Finalize();
    guard_disarm();
    return (failed == 0) ? 0 : EXIT_WRONG_BYTES;
}
