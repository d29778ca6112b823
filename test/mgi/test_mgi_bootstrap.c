/**
 * The TCP bootstrap against strangers and careless users (no UCX transport
 * is opened: ranks are forked and run the bootstrap and one allgather).
 *
 *   test_mgi_bootstrap            every case below; exit 0 when all pass
 *   test_mgi_bootstrap rank       one rank from MGI_RANK, MGI_NRANKS,
 *                                 MGI_BOOTSTRAP (for mgi_launch)
 *
 * Cases: strangers that connect and close, send part of a hello, garbage,
 * a forged hello for rank 1 without the token, out-of-range ranks, or stay
 * idle, all while the job's ranks join: each stranger is refused, learns
 * nothing, and the job completes well before its timeout.  A rank with
 * another MGI_NRANKS or a duplicate MGI_RANK fails the job at once, naming
 * the variable; MGI_NRANKS=2147483647 is refused before any allocation;
 * malformed host:port values and a missing or short token are refused at
 * once, naming the problem; a peer's worker address length of 2^40 is
 * refused before it sizes an allocation.
 */
#include "mgi_int.h"
#include "mgi_bootstrap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mgi_test_port.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

static int failures;

#define CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__); \
            printf("\n"); \
            ++failures; \
        } \
    } while (0)

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static mgi_context_params_t params_of(int rank, int size, const char *addr,
                                      unsigned timeout_ms)
{
    mgi_context_params_t p;

    memset(&p, 0, sizeof(p));
    p.rank           = rank;
    p.size           = size;
    p.bootstrap_addr = addr;
    p.timeout_ms     = timeout_ms;
    return p;
}

/* bootstrap + one allgather of each rank's number; exit status: 0 right,
 * 2 bootstrap refused, 3 allgather failed, 4 wrong answer */
static int one_rank(int rank, int size, const char *addr, unsigned timeout_ms)
{
    mgi_context_params_t p = params_of(rank, size, addr, timeout_ms);
    mgi_bootstrap_t bs;
    int mine = 1000 + rank, all[64], r;

    if (mgi_bootstrap_init(&bs, &p) != UCS_OK) {
        return 2;
    }
    if (mgi_bootstrap_allgather(&bs, &mine, all, sizeof(mine)) != UCS_OK) {
        mgi_bootstrap_fini(&bs);
        return 3;
    }
    for (r = 0; r < size; ++r) {
        if (all[r] != 1000 + r) {
            return 4;
        }
    }
    mgi_bootstrap_fini(&bs);
    return 0;
}

/* a rank in a child whose output (UCX logs to stdout) goes to log (may be
 * NULL) */
static pid_t spawn_rank(int rank, int size, const char *addr,
                        unsigned timeout_ms, const char *token,
                        const char *log)
{
    pid_t pid = fork();

    if (pid == 0) {
        if (log != NULL) {
            (void)!freopen(log, "w", stdout);
            (void)!freopen(log, "a", stderr);
        }
        int rc;

        setenv("MGI_JOB_TOKEN", token, 1);
        rc = one_rank(rank, size, addr, timeout_ms);
        fflush(stdout);
        fflush(stderr);
        _exit(rc);
    }
    return pid;
}

static int wait_rank(pid_t pid)
{
    int status;

    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int log_has(const char *log, const char *what)
{
    char line[1024];
    int found = 0;
    FILE *f   = fopen(log, "r");

    while ((f != NULL) && (fgets(line, sizeof(line), f) != NULL)) {
        found |= (strstr(line, what) != NULL);
    }
    if (f != NULL) {
        fclose(f);
    }
    return found;
}

/* a connection to rank 0, retried while it is not listening yet */
static int stranger(int port)
{
    struct sockaddr_in sa;
    double until = now_s() + 5;
    int fd;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family      = AF_INET;
    sa.sin_port        = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    do {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr*)&sa, sizeof(sa)) == 0) {
            return fd;
        }
        close(fd);
        usleep(10000);
    } while (now_s() < until);
    printf("FAIL: cannot connect to rank 0 on port %d\n", port);
    exit(1);
}

static void strangers_refused_job_goes_on(void)
{
    const int size = 3;
    unsigned char junk[64];
    mgi_boot_hello_t h, reply;
    char addr[64], wrong[] = "fedcba9876543210fedcba9876543210";
    uint8_t wrong_tok[MGI_BOOT_TOKEN_MAX];
    int port = mgi_test_free_port("test_mgi_bootstrap");
    int idle, fd, i, n, rc, tried = 0;
    char log0[] = "/tmp/mgi_boot_log0_XXXXXX";
    pid_t r0, r1, r2;
    double t0;

    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    close(mkstemp(log0));
    r0 = spawn_rank(0, size, addr, 20000, TOKEN, log0);

    idle = stranger(port);                     /* stays open, says nothing */
    ++tried;
    fd = stranger(port);                       /* connect and close */
    close(fd);
    ++tried;
    fd = stranger(port);                       /* part of a header */
    (void)!write(fd, "MGIB\1\0", 6);
    close(fd);
    ++tried;
    for (i = 0; i < (int)sizeof(junk); ++i) {
        junk[i] = (unsigned char)(i * 37 + 11);
    }
    fd = stranger(port);                       /* garbage, as a UCP address */
    (void)!write(fd, junk, sizeof(junk));
    close(fd);
    ++tried;
    /* a forged hello for rank 1 with the wrong token: refused, and told
     * nothing of the job (no token, no other rank's data) */
    mgi_bootstrap_token(wrong, wrong_tok);
    mgi_bootstrap_hello_pack(&h, wrong_tok, 1, size, 0);
    fd = stranger(port);
    ++tried;
    CHECK(write(fd, &h, sizeof(h)) == sizeof(h), "forged hello not sent");
    n = recv(fd, &reply, sizeof(reply), MSG_WAITALL);
    CHECK(n == sizeof(reply), "no refusal for a forged hello (%d)", n);
    CHECK(le16toh(reply.answer) == MGI_BOOT_BAD_TOKEN,
          "forged hello answered %u", le16toh(reply.answer));
    for (i = 0, rc = 0; i < MGI_BOOT_TOKEN_MAX; ++i) {
        rc |= reply.token[i];
    }
    CHECK(rc == 0, "the refusal carries the job token");
    CHECK(recv(fd, &reply, 1, 0) == 0, "a refused stranger is not closed");
    close(fd);
    /* ranks 0 and -5 and a rank beyond the size, without the token */
    for (i = 0; i < 3; ++i) {
        mgi_bootstrap_hello_pack(&h, wrong_tok, (i == 0) ? 0 :
                                 (i == 1) ? -5 : 1 << 30, size, 0);
        fd = stranger(port);
        ++tried;
        (void)!write(fd, &h, sizeof(h));
        close(fd);
    }

    t0 = now_s();
    r1 = spawn_rank(1, size, addr, 20000, TOKEN, NULL);
    r2 = spawn_rank(2, size, addr, 20000, TOKEN, NULL);
    CHECK((rc = wait_rank(r1)) == 0, "rank 1 exit %d", rc);
    CHECK((rc = wait_rank(r2)) == 0, "rank 2 exit %d", rc);
    CHECK((rc = wait_rank(r0)) == 0, "rank 0 exit %d", rc);
    CHECK(now_s() - t0 < 4.0, "the job took %.1f s with an idle stranger "
          "connected (bound: 4 s, its timeout 20 s)", now_s() - t0);
    CHECK(log_has(log0, "refused a connection"), "no stranger logged");
    CHECK(log_has(log0, "wrong job token"), "forged hello not named");
    close(idle);
    printf("strangers_refused_job_goes_on: %d stranger connections, job "
           "done in %.2f s\n", tried, now_s() - t0);
    unlink(log0);
}

/* a misconfigured rank of the job (it has the token): the job fails at
 * once, and the message names the variable */
static void misconfigured_rank_fails_job(int other_size, int other_rank,
                                         const char *what)
{
    char log0[] = "/tmp/mgi_boot_log0_XXXXXX";
    char log1[] = "/tmp/mgi_boot_log1_XXXXXX";
    int port = mgi_test_free_port("test_mgi_bootstrap");
    int rc0, rc1;
    char addr[64];
    pid_t r0, r1, r1b = -1;
    double t0 = now_s();

    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    close(mkstemp(log0));
    close(mkstemp(log1));
    r0 = spawn_rank(0, 3, addr, 20000, TOKEN, log0);
    if (other_rank == 1) {   /* the duplicate: a good rank 1 first */
        r1b = spawn_rank(1, 3, addr, 20000, TOKEN, NULL);
        usleep(300000);
    }
    r1 = spawn_rank(other_rank, other_size, addr, 20000, TOKEN, log1);
    rc1 = wait_rank(r1);
    rc0 = wait_rank(r0);
    if (r1b > 0) {
        wait_rank(r1b);
    }
    CHECK(rc0 == 2, "%s: rank 0 exit %d, not 2 (refused)", what, rc0);
    CHECK(rc1 == 2, "%s: the other rank exit %d, not 2 (refused)", what,
          rc1);
    CHECK(now_s() - t0 < 5.0, "%s: took %.1f s (timeout 20 s)", what,
          now_s() - t0);
    CHECK(log_has(log0, what), "%s: rank 0's message does not name it",
          what);
    CHECK(log_has(log1, what), "%s: the other rank's message does not name "
          "it", what);
    printf("misconfigured rank (%s): both refused in %.2f s\n", what,
           now_s() - t0);
    unlink(log0);
    unlink(log1);
}

static void bad_settings_refused_at_once(void)
{
    static const char *addrs[] = {"127.0.0.1:99999", "localhost:",
                                  "localhost:0", "localhost", ":4000",
                                  "127.0.0.1:12a", "127.0.0.1:-1",
                                  "127.0.0.1:123456"};
    mgi_context_params_t p;
    mgi_bootstrap_t bs;
    unsigned i;
    double t0;
    int rank;

    setenv("MGI_JOB_TOKEN", TOKEN, 1);
    for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); ++i) {
        for (rank = 0; rank < 2; ++rank) {
            p  = params_of(rank, 2, addrs[i], 30000);
            t0 = now_s();
            CHECK(mgi_bootstrap_init(&bs, &p) == UCS_ERR_INVALID_PARAM,
                  "rank %d: address '%s' not refused", rank, addrs[i]);
            CHECK(now_s() - t0 < 1.0, "address '%s' refused after %.1f s",
                  addrs[i], now_s() - t0);
        }
    }

    /* refused before 8 GiB of fds are allocated and filled */
    t0 = now_s();
    p  = params_of(0, 2147483647, "127.0.0.1:4000", 30000);
    CHECK(mgi_bootstrap_init(&bs, &p) == UCS_ERR_INVALID_PARAM,
          "MGI_NRANKS=2147483647 not refused");
    p = params_of(0, MGI_MAX_RANKS + 1, "127.0.0.1:4000", 30000);
    CHECK(mgi_bootstrap_init(&bs, &p) == UCS_ERR_INVALID_PARAM,
          "MGI_NRANKS=%d not refused", MGI_MAX_RANKS + 1);
    CHECK(now_s() - t0 < 0.5, "MGI_NRANKS refused after %.1f s",
          now_s() - t0);

    p = params_of(1, 2, "127.0.0.1:4000", 30000);
    unsetenv("MGI_JOB_TOKEN");
    CHECK(mgi_bootstrap_init(&bs, &p) == UCS_ERR_INVALID_PARAM,
          "no MGI_JOB_TOKEN not refused");
    setenv("MGI_JOB_TOKEN", "short", 1);
    CHECK(mgi_bootstrap_init(&bs, &p) == UCS_ERR_INVALID_PARAM,
          "a 5-character MGI_JOB_TOKEN not refused");
    setenv("MGI_JOB_TOKEN", "0123456789 abcdef", 1);
    CHECK(mgi_bootstrap_init(&bs, &p) == UCS_ERR_INVALID_PARAM,
          "a token with a blank not refused");
    unsetenv("MGI_JOB_TOKEN");
    /* one rank needs neither token nor address */
    p = params_of(0, 1, NULL, 30000);
    CHECK(mgi_bootstrap_init(&bs, &p) == UCS_OK, "one rank refused");
    mgi_bootstrap_fini(&bs);
    printf("bad settings: %u addresses, MGI_NRANKS and tokens refused\n",
           i);
}

/* the checks of a hello on their own: every byte flipped is refused */
static void hello_check_refuses_each_flip(void)
{
    uint8_t tok[MGI_BOOT_TOKEN_MAX];
    mgi_boot_hello_t h, m;
    unsigned answer, i, b, accepted = 0;
    char err[256];
    int rank;

    mgi_bootstrap_token(TOKEN, tok);
    mgi_bootstrap_hello_pack(&h, tok, 2, 4, 0);
    CHECK(mgi_bootstrap_hello_check(&h, sizeof(h), tok, 4, &rank, &answer,
                                    err, sizeof(err)) == UCS_OK &&
          (rank == 2), "a good hello refused: %s", err);
    CHECK(mgi_bootstrap_hello_check(&h, sizeof(h) - 1, tok, 4, &rank,
                                    &answer, err, sizeof(err)) != UCS_OK,
          "a short hello accepted");
    for (i = 0; i < sizeof(h); ++i) {
        for (b = 0; b < 8; ++b) {
            m = h;
            ((uint8_t*)&m)[i] ^= 1u << b;
            if ((i >= offsetof(mgi_boot_hello_t, answer)) &&
                (i < offsetof(mgi_boot_hello_t, rank))) {
                continue;   /* a hello's answer field is not read */
            }
            if (mgi_bootstrap_hello_check(&m, sizeof(m), tok, 4, &rank,
                                          &answer, err, sizeof(err)) ==
                UCS_OK) {
                /* only a flip of the rank to another valid rank passes */
                CHECK((i >= offsetof(mgi_boot_hello_t, rank)) &&
                      (i < offsetof(mgi_boot_hello_t, size)) &&
                      (rank >= 1) && (rank < 4),
                      "byte %u bit %u flipped: accepted as rank %d", i, b,
                      rank);
                ++accepted;
            }
        }
    }
    printf("hello checks: %zu flips tried, %u accepted (another valid "
           "rank)\n", sizeof(h) * 8, accepted);
}

/* An application's allgather for a job of two in one process: rank 1
 * mirrors rank 0, except that the first 8-byte exchange (the worker
 * address lengths) gives rank 1's as 2^40 */
static int poisoned_calls;

static int poisoned_allgather(const void *sbuf, void *rbuf, size_t len,
                              void *arg)
{
    uint64_t huge = 1ull << 40;

    memcpy(rbuf, sbuf, len);
    memcpy((char*)rbuf + len, sbuf, len);
    if ((len == sizeof(uint64_t)) && (poisoned_calls++ == 0)) {
        memcpy((char*)rbuf + len, &huge, sizeof(huge));
    }
    return 0;
}

static void huge_address_length_refused(void)
{
    mgi_context_params_t p;
    uint64_t lens[3] = {100, 1ull << 40, 50}, max;
    mgi_context_h ctx;
    char err[256];
    double t0 = now_s();

    CHECK(mgi_bootstrap_addr_lens_check(lens, 3, &max, err, sizeof(err)) ==
          UCS_ERR_INVALID_PARAM, "a 2^40-byte address length accepted");
    CHECK(strstr(err, "rank 1") != NULL, "the message names no rank: %s",
          err);
    lens[1] = 0;
    CHECK(mgi_bootstrap_addr_lens_check(lens, 3, &max, err, sizeof(err)) !=
          UCS_OK, "an empty address accepted");
    lens[1] = 70;
    CHECK((mgi_bootstrap_addr_lens_check(lens, 3, &max, err, sizeof(err)) ==
           UCS_OK) && (max == 100), "good lengths refused: %s", err);

    mgi_context_params_init(&p);
    p.oob.allgather = poisoned_allgather;
    p.oob.rank      = 0;
    p.oob.size      = 2;
    setenv("UCX_TLS", "self,sm", 0);
    CHECK(mgi_context_create(&p, &ctx) == UCS_ERR_INVALID_PARAM,
          "a context whose peer gave a 2^40-byte address was not refused");
    CHECK(poisoned_calls == 1, "the address lengths were not exchanged");
    CHECK(now_s() - t0 < 10, "refused after %.1f s", now_s() - t0);
    printf("huge address length: refused before any allocation\n");
}

int main(int argc, char **argv)
{
    const char *r = getenv("MGI_RANK"), *n = getenv("MGI_NRANKS");

    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((argc > 1) && !strcmp(argv[1], "rank")) {
        if ((r == NULL) || (n == NULL)) {
            fprintf(stderr, "rank: needs MGI_RANK and MGI_NRANKS\n");
            return 1;
        }
        return one_rank(atoi(r), atoi(n), getenv("MGI_BOOTSTRAP"), 60000);
    }
    signal(SIGPIPE, SIG_IGN);
    hello_check_refuses_each_flip();
    bad_settings_refused_at_once();
    strangers_refused_job_goes_on();
    misconfigured_rank_fails_job(2, 1, "MGI_NRANKS");
    misconfigured_rank_fails_job(3, 1, "MGI_RANK");
    huge_address_length_refused();
    printf("%s: %d failure(s)\n", argv[0], failures);
    return failures ? 1 : 0;
}
