/**
 * MGI bootstrap: the application's out-of-band allgather, or a small TCP
 * star: rank 0 listens on host:port, the others connect; an allgather is a
 * gather to rank 0 followed by a broadcast of the result.
 *
 * The star takes only ranks of its own job: each one proves it knows the
 * job token (MGI_JOB_TOKEN) in a versioned hello that also carries its rank
 * and the job's size, and rank 0 answers with the token in turn.  A
 * connection that is not such a rank (a port scan, a stray client, another
 * job's rank) is refused and logged, and the job goes on; one that sends
 * nothing is closed after MGI_BOOT_HELLO_MS, while the hellos of the
 * others are read meanwhile.  A rank of this job whose size differs fails
 * the job at once, naming MGI_NRANKS.
 */
#define _GNU_SOURCE 1  /* accept4 */
#include "mgi_int.h"
#include "mgi_bootstrap.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Connections read at once while rank 0 waits for its ranks: a job's own
 * ranks plus this many strangers; beyond it the oldest stranger is closed */
#define MGI_BOOT_PENDING_MAX  64
/* A connection that has sent no full hello after this long is closed: a
 * rank sends it as soon as it connects */
#define MGI_BOOT_HELLO_MS     5000

typedef struct mgi_tcp_bootstrap {
    int      rank, size;
    int      listen_fd;
    int      *fds;          /* rank 0: [size] (fds[0] unused); others: [1] */
    unsigned timeout_ms;
    uint8_t  token[MGI_BOOT_TOKEN_MAX];
} mgi_tcp_bootstrap_t;

typedef struct mgi_boot_pending {
    int              fd;
    size_t           got;
    uint64_t         deadline;
    mgi_boot_hello_t hello;
    char             peer[64];
} mgi_boot_pending_t;

static ucs_status_t mgi_boot_err(char *errbuf, size_t errlen,
                                 ucs_status_t status, const char *fmt, ...)
{
    va_list ap;

    if ((errbuf != NULL) && (errlen > 0)) {
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

ucs_status_t mgi_bootstrap_token(const char *value,
                                 uint8_t token[MGI_BOOT_TOKEN_MAX])
{
    size_t len, i;

    if ((value == NULL) || (value[0] == '\0')) {
        ucs_error("mgi bootstrap: MGI_JOB_TOKEN is not set: the TCP "
                  "bootstrap takes only ranks that know their job's token; "
                  "give every rank the same secret of %d to %d characters "
                  "(mgi_launch sets one)", MGI_BOOT_TOKEN_MIN,
                  MGI_BOOT_TOKEN_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    len = strlen(value);
    if ((len < MGI_BOOT_TOKEN_MIN) || (len > MGI_BOOT_TOKEN_MAX)) {
        ucs_error("mgi bootstrap: MGI_JOB_TOKEN has %zu characters, not %d "
                  "to %d", len, MGI_BOOT_TOKEN_MIN, MGI_BOOT_TOKEN_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < len; ++i) {
        if (((unsigned char)value[i] <= ' ') ||
            ((unsigned char)value[i] >= 0x7f)) {
            ucs_error("mgi bootstrap: MGI_JOB_TOKEN has a blank or "
                      "non-ASCII character at %zu: printable ASCII only",
                      i + 1);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    memset(token, 0, MGI_BOOT_TOKEN_MAX);
    memcpy(token, value, len);
    return UCS_OK;
}

void mgi_bootstrap_hello_pack(mgi_boot_hello_t *h, const uint8_t *token,
                              int rank, int size, unsigned answer)
{
    memset(h, 0, sizeof(*h));
    h->magic   = htole32(MGI_BOOT_MAGIC);
    h->version = htole16(MGI_BOOT_VERSION);
    h->answer  = htole16(answer);
    h->rank    = (int32_t)htole32((uint32_t)rank);
    h->size    = (int32_t)htole32((uint32_t)size);
    if (token != NULL) {
        memcpy(h->token, token, MGI_BOOT_TOKEN_MAX);
    }
}

/* constant time: how long a comparison takes tells nothing of the token */
static int mgi_boot_token_equal(const uint8_t *a, const uint8_t *b)
{
    unsigned diff = 0;
    int i;

    for (i = 0; i < MGI_BOOT_TOKEN_MAX; ++i) {
        diff |= a[i] ^ b[i];
    }
    return diff == 0;
}

static ucs_status_t mgi_boot_header_check(const void *buf, size_t len,
                                          mgi_boot_hello_t *h, char *errbuf,
                                          size_t errlen)
{
    if (len != sizeof(*h)) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "a hello of %zu bytes, not %zu", len,
                            sizeof(*h));
    }
    memcpy(h, buf, sizeof(*h));
    if (le32toh(h->magic) != MGI_BOOT_MAGIC) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "not an MGI bootstrap hello (magic 0x%08x)",
                            le32toh(h->magic));
    }
    if (le16toh(h->version) != MGI_BOOT_VERSION) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_UNSUPPORTED,
                            "bootstrap version %u, this libmgi speaks %u",
                            le16toh(h->version), MGI_BOOT_VERSION);
    }
    return UCS_OK;
}

ucs_status_t mgi_bootstrap_hello_check(const void *buf, size_t len,
                                       const uint8_t *token, int size,
                                       int *rank_p, unsigned *answer_p,
                                       char *errbuf, size_t errlen)
{
    mgi_boot_hello_t h;
    ucs_status_t status;
    int rank, hsize;

    *answer_p = MGI_BOOT_BAD_TOKEN;
    status    = mgi_boot_header_check(buf, len, &h, errbuf, errlen);
    if (status != UCS_OK) {
        return status;
    }
    if (!mgi_boot_token_equal(h.token, token)) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_REJECTED,
                            "wrong job token (MGI_JOB_TOKEN)");
    }
    rank  = (int32_t)le32toh((uint32_t)h.rank);
    hsize = (int32_t)le32toh((uint32_t)h.size);
    if (hsize != size) {
        *answer_p = MGI_BOOT_BAD_SIZE;
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "rank %d runs with MGI_NRANKS=%d, rank 0 with %d",
                            rank, hsize, size);
    }
    if ((rank <= 0) || (rank >= size)) {
        *answer_p = MGI_BOOT_BAD_RANK;
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "MGI_RANK=%d is out of range 1..%d", rank,
                            size - 1);
    }
    *answer_p = MGI_BOOT_OK;
    *rank_p   = rank;
    return UCS_OK;
}

ucs_status_t mgi_bootstrap_reply_check(const void *buf, size_t len,
                                       const uint8_t *token, int size,
                                       char *errbuf, size_t errlen)
{
    mgi_boot_hello_t h;
    ucs_status_t status;
    int rsize;

    status = mgi_boot_header_check(buf, len, &h, errbuf, errlen);
    if (status != UCS_OK) {
        return status;
    }
    rsize = (int32_t)le32toh((uint32_t)h.size);
    switch (le16toh(h.answer)) {
    case MGI_BOOT_OK:
        break;
    case MGI_BOOT_BAD_TOKEN:
        return mgi_boot_err(errbuf, errlen, UCS_ERR_REJECTED,
                            "rank 0 refused this rank's MGI_JOB_TOKEN (a "
                            "different token, or another job's rank 0 on "
                            "that port)");
    case MGI_BOOT_BAD_SIZE:
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "rank 0 runs with MGI_NRANKS=%d, this rank with "
                            "%d", rsize, size);
    case MGI_BOOT_BAD_RANK:
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "rank 0 refused this rank's MGI_RANK: another "
                            "rank has it");
    default:
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "rank 0 answered %u, which this libmgi does "
                            "not know", le16toh(h.answer));
    }
    if (!mgi_boot_token_equal(h.token, token)) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_REJECTED,
                            "the listener does not know the job token: not "
                            "this job's rank 0");
    }
    if (rsize != size) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "rank 0 runs with MGI_NRANKS=%d, this rank with "
                            "%d", rsize, size);
    }
    return UCS_OK;
}

ucs_status_t mgi_bootstrap_parse_addr(const char *addr, char *host,
                                      size_t host_len, int *port_p,
                                      char *errbuf, size_t errlen)
{
    const char *colon = strrchr(addr, ':');
    size_t hlen, plen, i;
    long port;

    if (colon == NULL) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "'%.300s' is not host:port", addr);
    }
    hlen = colon - addr;
    if ((hlen == 0) || (hlen >= host_len)) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "'%.300s': the host is empty or longer than %zu "
                            "characters", addr, host_len - 1);
    }
    plen = strlen(colon + 1);
    if ((plen == 0) || (plen > 5)) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "'%.300s': %s port (1 to 65535)", addr,
                            (plen == 0) ? "no" : "too long a");
    }
    for (i = 0, port = 0; i < plen; ++i) {
        if ((colon[1 + i] < '0') || (colon[1 + i] > '9')) {
            return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                                "'%.300s': the port is not a decimal "
                                "number", addr);
        }
        port = 10 * port + (colon[1 + i] - '0');
    }
    if ((port < 1) || (port > 65535)) {
        return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                            "'%.300s': port %ld is out of range 1 to 65535 "
                            "(0 would bind a port no other rank knows)",
                            addr, port);
    }
    memcpy(host, addr, hlen);
    host[hlen] = '\0';
    *port_p    = (int)port;
    return UCS_OK;
}

ucs_status_t mgi_bootstrap_addr_lens_check(const uint64_t *lens, int size,
                                           uint64_t *max_p, char *errbuf,
                                           size_t errlen)
{
    uint64_t max = 0;
    int r;

    for (r = 0; r < size; ++r) {
        if ((lens[r] == 0) || (lens[r] > MGI_WORKER_ADDR_MAX)) {
            return mgi_boot_err(errbuf, errlen, UCS_ERR_INVALID_PARAM,
                                "rank %d's UCP worker address has %llu "
                                "bytes, not 1 to %d", r,
                                (unsigned long long)lens[r],
                                MGI_WORKER_ADDR_MAX);
        }
        max = (lens[r] > max) ? lens[r] : max;
    }
    *max_p = max;
    return UCS_OK;
}

static ucs_status_t mgi_tcp_io(int fd, void *buf, size_t len, int send_dir,
                               unsigned timeout_ms)
{
    uint64_t deadline = mgi_time_ns() + (uint64_t)timeout_ms * 1000000ull;
    char *p           = buf;
    struct pollfd pfd;
    ssize_t n;

    while (len > 0) {
        pfd.fd     = fd;
        pfd.events = send_dir ? POLLOUT : POLLIN;
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi bootstrap fd %d: %s timed out after %u ms", fd,
                      send_dir ? "send" : "recv", timeout_ms);
            return UCS_ERR_TIMED_OUT;
        }
        if (poll(&pfd, 1, 100) <= 0) {
            continue;
        }
        n = send_dir ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
                       recv(fd, p, len, MSG_DONTWAIT);
        if (n == 0) {
            ucs_error("mgi bootstrap fd %d: peer closed the connection", fd);
            return UCS_ERR_CONNECTION_RESET;
        } else if (n < 0) {
            if ((errno == EINTR) || (errno == EAGAIN) ||
                (errno == EWOULDBLOCK)) {
                continue;
            }
            ucs_error("mgi bootstrap fd %d: %s failed: %m", fd,
                      send_dir ? "send" : "recv");
            return UCS_ERR_IO_ERROR;
        }
        p   += n;
        len -= n;
    }
    return UCS_OK;
}

/* Each contribution travels behind its length, which the receiver compares
 * with its own: ranks that disagree on what they exchange fail with a
 * message instead of reading each other's bytes as something else */
static int mgi_tcp_allgather(const void *sbuf, void *rbuf, size_t len,
                             void *arg)
{
    mgi_tcp_bootstrap_t *tb = arg;
    uint64_t hdr, want;
    ucs_status_t status;
    int r;

    if (tb->rank != 0) {
        hdr    = htole64(len);
        want   = (uint64_t)len * tb->size;
        status = mgi_tcp_io(tb->fds[0], &hdr, sizeof(hdr), 1, tb->timeout_ms);
        if (status == UCS_OK) {
            status = mgi_tcp_io(tb->fds[0], (void*)sbuf, len, 1,
                                tb->timeout_ms);
        }
        if (status == UCS_OK) {
            status = mgi_tcp_io(tb->fds[0], &hdr, sizeof(hdr), 0,
                                tb->timeout_ms);
        }
        if ((status == UCS_OK) && (le64toh(hdr) != want)) {
            ucs_error("mgi bootstrap rank %d: rank 0 answered an allgather "
                      "of %zu bytes a rank with %llu bytes, not %llu",
                      tb->rank, len, (unsigned long long)le64toh(hdr),
                      (unsigned long long)want);
            status = UCS_ERR_INVALID_PARAM;
        }
        if (status == UCS_OK) {
            status = mgi_tcp_io(tb->fds[0], rbuf, want, 0, tb->timeout_ms);
        }
        if (status != UCS_OK) {
            /* rank 0 then sees it at once, and ends the others' too */
            shutdown(tb->fds[0], SHUT_RDWR);
            return -1;
        }
        return 0;
    }

    memcpy(rbuf, sbuf, len);
    for (r = 1; r < tb->size; ++r) {
        status = mgi_tcp_io(tb->fds[r], &hdr, sizeof(hdr), 0, tb->timeout_ms);
        if (status != UCS_OK) {
            goto err_abort;
        }
        if (le64toh(hdr) != len) {
            ucs_error("mgi bootstrap rank 0: rank %d gives %llu bytes to an "
                      "allgather of %zu a rank: the ranks run different "
                      "libmgi versions or settings", r,
                      (unsigned long long)le64toh(hdr), len);
            goto err_abort;
        }
        status = mgi_tcp_io(tb->fds[r], (char*)rbuf + r * len, len, 0,
                            tb->timeout_ms);
        if (status != UCS_OK) {
            goto err_abort;
        }
    }
    hdr = htole64((uint64_t)len * tb->size);
    for (r = 1; r < tb->size; ++r) {
        status = mgi_tcp_io(tb->fds[r], &hdr, sizeof(hdr), 1,
                            tb->timeout_ms);
        if (status == UCS_OK) {
            status = mgi_tcp_io(tb->fds[r], rbuf, len * tb->size, 1,
                                tb->timeout_ms);
        }
        if (status != UCS_OK) {
            goto err_abort;
        }
    }
    return 0;

err_abort:
    /* the star is broken (a rank ended or is stuck): the other ranks, which
     * wait for this answer, see their connection end now instead of at
     * their timeout, and so does every later allgather */
    ucs_error("mgi bootstrap rank 0: allgather failed at rank %d's "
              "connection: closing every rank's", r);
    for (r = 1; r < tb->size; ++r) {
        shutdown(tb->fds[r], SHUT_RDWR);
    }
    return -1;
}

static ucs_status_t mgi_tcp_resolve(const char *addr, struct sockaddr_in *sa)
{
    struct addrinfo hints, *res;
    char host[256], errbuf[400];
    ucs_status_t status;
    int port, rc;

    status = mgi_bootstrap_parse_addr(addr, host, sizeof(host), &port,
                                      errbuf, sizeof(errbuf));
    if (status != UCS_OK) {
        ucs_error("mgi bootstrap: MGI_BOOTSTRAP %s", errbuf);
        return status;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        ucs_error("mgi bootstrap: cannot resolve the host of MGI_BOOTSTRAP "
                  "'%s': %s", addr, gai_strerror(rc));
        return UCS_ERR_INVALID_ADDR;
    }
    memcpy(sa, res->ai_addr, sizeof(*sa));
    sa->sin_port = htons(port);
    freeaddrinfo(res);
    return UCS_OK;
}

static void mgi_boot_pending_drop(mgi_boot_pending_t *pend, int *npend, int i)
{
    close(pend[i].fd);
    pend[i] = pend[--(*npend)];
}

/* A hello that is complete in p: the rank's connection taken, a stranger
 * refused (UCS_OK either way), or the job failed */
static ucs_status_t mgi_tcp_root_hello(mgi_tcp_bootstrap_t *tb,
                                       mgi_boot_pending_t *p, int *nconn)
{
    mgi_boot_hello_t reply;
    unsigned answer;
    char errbuf[256];
    ucs_status_t status;
    int rank;

    status = mgi_bootstrap_hello_check(&p->hello, sizeof(p->hello),
                                       tb->token, tb->size, &rank, &answer,
                                       errbuf, sizeof(errbuf));
    if ((status == UCS_OK) && (tb->fds[rank] >= 0)) {
        answer = MGI_BOOT_BAD_RANK;
        snprintf(errbuf, sizeof(errbuf), "MGI_RANK=%d given to two ranks",
                 rank);
        status = UCS_ERR_ALREADY_EXISTS;
    }
    /* the reply carries the token only to a rank that proved it knows it */
    mgi_bootstrap_hello_pack(&reply, (answer == MGI_BOOT_BAD_TOKEN) ? NULL :
                             tb->token, 0, tb->size, answer);
    if (send(p->fd, &reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        sizeof(reply)) {
        /* a stranger that does not read is no concern; one of our ranks
         * that cannot take 144 bytes into an empty socket is broken */
        if (status == UCS_OK) {
            ucs_error("mgi bootstrap rank 0: cannot answer rank %d at %s: "
                      "%m", rank, p->peer);
            return UCS_ERR_IO_ERROR;
        }
    }
    if (status == UCS_OK) {
        tb->fds[rank] = p->fd;
        ++(*nconn);
        return UCS_OK;
    }
    if (answer == MGI_BOOT_BAD_TOKEN) {
        ucs_warn("mgi bootstrap rank 0: refused a connection from %s: %s",
                 p->peer, errbuf);
        close(p->fd);
        return UCS_OK;
    }
    /* one of this job's ranks (it knows the token) is misconfigured: the
     * job cannot run, and every rank learns it now */
    ucs_error("mgi bootstrap rank 0: %s (connection from %s)", errbuf,
              p->peer);
    close(p->fd);
    return status;
}

static ucs_status_t mgi_tcp_root_accept(mgi_tcp_bootstrap_t *tb,
                                        const char *addr)
{
    uint64_t deadline = mgi_time_ns() +
                        (uint64_t)tb->timeout_ms * 1000000ull;
    uint64_t hello_ns = (uint64_t)ucs_min(MGI_BOOT_HELLO_MS, tb->timeout_ms) *
                        1000000ull;
    struct pollfd pfds[1 + MGI_BOOT_PENDING_MAX];
    mgi_boot_pending_t *pend, *p;
    int one = 1, nconn = 0, npend = 0, fd, i, r, missing;
    char missing_s[128];
    struct sockaddr_in sa, peer;
    socklen_t peer_len;
    ucs_status_t status;
    uint64_t now;
    ssize_t n;
    size_t off;

    status = mgi_tcp_resolve(addr, &sa);
    if (status != UCS_OK) {
        return status;
    }
    pend = calloc(MGI_BOOT_PENDING_MAX, sizeof(*pend));
    if (pend == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    tb->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                           0);
    if (tb->listen_fd < 0) {
        ucs_error("mgi bootstrap: socket() failed: %m");
        status = UCS_ERR_IO_ERROR;
        goto out;
    }
    setsockopt(tb->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((bind(tb->listen_fd, (struct sockaddr*)&sa, sizeof(sa)) < 0) ||
        (listen(tb->listen_fd, tb->size + MGI_BOOT_PENDING_MAX) < 0)) {
        ucs_error("mgi bootstrap rank 0: cannot listen on %s: %m", addr);
        status = UCS_ERR_IO_ERROR;
        goto out;
    }

    while (nconn < tb->size - 1) {
        now = mgi_time_ns();
        if (now > deadline) {
            missing = 0;
            off     = 0;
            for (r = 1; (r < tb->size) && (off < sizeof(missing_s) - 16);
                 ++r) {
                if (tb->fds[r] < 0) {
                    off += snprintf(missing_s + off, sizeof(missing_s) - off,
                                    "%s%d", missing++ ? ", " : "", r);
                }
            }
            ucs_error("mgi bootstrap rank 0: only %d of %d ranks connected "
                      "to %s within %u ms (missing: rank %s%s)", nconn + 1,
                      tb->size, addr, tb->timeout_ms, missing_s,
                      (r < tb->size) ? ", ..." : "");
            status = UCS_ERR_TIMED_OUT;
            goto out;
        }
        pfds[0].fd     = tb->listen_fd;
        pfds[0].events = POLLIN;
        for (i = 0; i < npend; ++i) {
            pfds[1 + i].fd      = pend[i].fd;
            pfds[1 + i].events  = POLLIN;
            pfds[1 + i].revents = 0;
        }
        if (poll(pfds, 1 + npend, 100) < 0) {
            continue;
        }

        /* from the last: a dropped one is replaced by the last one */
        for (i = npend - 1; i >= 0; --i) {
            p = &pend[i];
            if (pfds[1 + i].revents == 0) {
                if (now > p->deadline) {
                    ucs_warn("mgi bootstrap rank 0: connection from %s sent "
                             "no hello within %u ms: closed", p->peer,
                             ucs_min(MGI_BOOT_HELLO_MS, tb->timeout_ms));
                    mgi_boot_pending_drop(pend, &npend, i);
                }
                continue;
            }
            n = recv(p->fd, (char*)&p->hello + p->got,
                     sizeof(p->hello) - p->got, MSG_DONTWAIT);
            if ((n < 0) && ((errno == EAGAIN) || (errno == EINTR))) {
                continue;
            } else if (n <= 0) {
                ucs_warn("mgi bootstrap rank 0: connection from %s ended "
                         "after %zu bytes, before its hello: ignored",
                         p->peer, p->got);
                mgi_boot_pending_drop(pend, &npend, i);
                continue;
            }
            p->got += n;
            if (p->got < sizeof(p->hello)) {
                continue;
            }
            status = mgi_tcp_root_hello(tb, p, &nconn);
            if (status != UCS_OK) {
                pend[i].fd = -1;
                goto out;
            }
            pend[i] = pend[--npend];   /* the fd is the rank's or closed */
        }

        if (!(pfds[0].revents & POLLIN)) {
            continue;
        }
        peer_len = sizeof(peer);
        fd = accept4(tb->listen_fd, (struct sockaddr*)&peer, &peer_len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        if (npend == MGI_BOOT_PENDING_MAX) {
            ucs_warn("mgi bootstrap rank 0: %d connections without a hello: "
                     "closing the oldest, from %s", npend, pend[0].peer);
            close(pend[0].fd);
            memmove(&pend[0], &pend[1], (npend - 1) * sizeof(*pend));
            --npend;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        p = &pend[npend++];
        memset(p, 0, sizeof(*p));
        p->fd       = fd;
        p->deadline = mgi_time_ns() + hello_ns;
        snprintf(p->peer, sizeof(p->peer), "%s:%u",
                 inet_ntoa(peer.sin_addr), ntohs(peer.sin_port));
    }
    /* every rank is in: a rank that goes on to its next context's create
     * before this context is destroyed must find no listener here (it
     * retries until the next one is up), not one that resets it */
    close(tb->listen_fd);
    tb->listen_fd = -1;
    status        = UCS_OK;

out:
    for (i = 0; i < npend; ++i) {
        if (pend[i].fd >= 0) {
            close(pend[i].fd);
        }
    }
    free(pend);
    return status;
}

static ucs_status_t mgi_tcp_connect(mgi_tcp_bootstrap_t *tb, const char *addr)
{
    uint64_t deadline = mgi_time_ns() +
                        (uint64_t)tb->timeout_ms * 1000000ull;
    mgi_boot_hello_t hello;
    struct sockaddr_in sa;
    ucs_status_t status;
    char errbuf[256];
    int fd, one = 1;

    status = mgi_tcp_resolve(addr, &sa);
    if (status != UCS_OK) {
        return status;
    }
    for (;;) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            ucs_error("mgi bootstrap: socket() failed: %m");
            return UCS_ERR_IO_ERROR;
        }
        if (connect(fd, (struct sockaddr*)&sa, sizeof(sa)) == 0) {
            break;
        }
        close(fd);
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi bootstrap rank %d: cannot connect to rank 0 at %s "
                      "within %u ms", tb->rank, addr, tb->timeout_ms);
            return UCS_ERR_UNREACHABLE;
        }
        usleep(20000);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    tb->fds[0] = fd;

    mgi_bootstrap_hello_pack(&hello, tb->token, tb->rank, tb->size, 0);
    status = mgi_tcp_io(fd, &hello, sizeof(hello), 1, tb->timeout_ms);
    if (status == UCS_OK) {
        status = mgi_tcp_io(fd, &hello, sizeof(hello), 0, tb->timeout_ms);
    }
    if (status != UCS_OK) {
        ucs_error("mgi bootstrap rank %d: no answer from rank 0 at %s to "
                  "this rank's hello: %s", tb->rank, addr,
                  ucs_status_string(status));
        return status;
    }
    status = mgi_bootstrap_reply_check(&hello, sizeof(hello), tb->token,
                                       tb->size, errbuf, sizeof(errbuf));
    if (status != UCS_OK) {
        ucs_error("mgi bootstrap rank %d at %s: %s", tb->rank, addr, errbuf);
    }
    return status;
}

static void mgi_tcp_close(mgi_tcp_bootstrap_t *tb)
{
    int i;

    for (i = 0; i < tb->size; ++i) {
        if (tb->fds[i] >= 0) {
            close(tb->fds[i]);
        }
    }
    if (tb->listen_fd >= 0) {
        close(tb->listen_fd);
    }
    free(tb->fds);
    free(tb);
}

ucs_status_t mgi_bootstrap_init(mgi_bootstrap_t *bs,
                                const mgi_context_params_t *params)
{
    mgi_tcp_bootstrap_t *tb;
    ucs_status_t status;
    int i;

    if (params->oob.allgather != NULL) {
        if ((params->oob.size <= 0) || (params->oob.rank < 0) ||
            (params->oob.rank >= params->oob.size) ||
            (params->oob.size > MGI_MAX_RANKS)) {
            ucs_error("mgi bootstrap: bad OOB rank %d / size %d (size 1 to "
                      "%d)", params->oob.rank, params->oob.size,
                      MGI_MAX_RANKS);
            return UCS_ERR_INVALID_PARAM;
        }
        bs->oob = params->oob;
        bs->tcp = NULL;
        return UCS_OK;
    }

    /* the size is checked before anything is allocated by it */
    if ((params->size <= 0) || (params->size > MGI_MAX_RANKS) ||
        (params->rank < 0) || (params->rank >= params->size)) {
        ucs_error("mgi bootstrap: bad rank %d / size %d (MGI_RANK 0 to "
                  "MGI_NRANKS-1, MGI_NRANKS 1 to %d; or pass an OOB "
                  "allgather)", params->rank, params->size, MGI_MAX_RANKS);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((params->size > 1) && (params->bootstrap_addr == NULL)) {
        ucs_error("mgi bootstrap: no address of rank 0 (set "
                  "MGI_BOOTSTRAP=host:port, or pass an OOB allgather)");
        return UCS_ERR_INVALID_PARAM;
    }

    tb = calloc(1, sizeof(*tb));
    if (tb == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    tb->rank       = params->rank;
    tb->size       = params->size;
    tb->listen_fd  = -1;
    tb->timeout_ms = params->timeout_ms;
    tb->fds        = malloc(sizeof(int) * tb->size);
    if (tb->fds == NULL) {
        free(tb);
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < tb->size; ++i) {
        tb->fds[i] = -1;
    }

    if (tb->size > 1) {
        status = mgi_bootstrap_token(getenv("MGI_JOB_TOKEN"), tb->token);
        if (status != UCS_OK) {
            goto err_close;
        }
        status = (tb->rank == 0) ?
                 mgi_tcp_root_accept(tb, params->bootstrap_addr) :
                 mgi_tcp_connect(tb, params->bootstrap_addr);
        if (status != UCS_OK) {
            goto err_close;
        }
    }
    bs->oob.allgather = mgi_tcp_allgather;
    bs->oob.arg       = tb;
    bs->oob.rank      = tb->rank;
    bs->oob.size      = tb->size;
    bs->tcp           = tb;
    ucs_debug("mgi bootstrap rank %d/%d: TCP via %s", tb->rank, tb->size,
              params->bootstrap_addr ? params->bootstrap_addr : "-");
    return UCS_OK;

err_close:
    mgi_tcp_close(tb);
    return status;
}

void mgi_bootstrap_fini(mgi_bootstrap_t *bs)
{
    if (bs->tcp != NULL) {
        mgi_tcp_close(bs->tcp);
        bs->tcp = NULL;
    }
}

ucs_status_t mgi_bootstrap_allgather(mgi_bootstrap_t *bs, const void *sbuf,
                                     void *rbuf, size_t len)
{
    if (bs->oob.allgather(sbuf, rbuf, len, bs->oob.arg) != 0) {
        ucs_error("mgi bootstrap rank %d: allgather of %zu bytes failed",
                  bs->oob.rank, len);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}
