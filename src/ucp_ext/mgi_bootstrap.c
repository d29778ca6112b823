/**
 * MGI bootstrap: the application's out-of-band allgather, or a small TCP
 * star: rank 0 listens on host:port, the others connect; an allgather is a
 * gather to rank 0 followed by a broadcast of the result.
 */
#include "mgi_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct mgi_tcp_bootstrap {
    int      rank, size;
    int      listen_fd;
    int      *fds;          /* rank 0: [size] (fds[0] unused); others: [1] */
    unsigned timeout_ms;
} mgi_tcp_bootstrap_t;

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
        n = send_dir ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n == 0) {
            ucs_error("mgi bootstrap fd %d: peer closed the connection", fd);
            return UCS_ERR_CONNECTION_RESET;
        } else if (n < 0) {
            if ((errno == EINTR) || (errno == EAGAIN)) {
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

static int mgi_tcp_allgather(const void *sbuf, void *rbuf, size_t len,
                             void *arg)
{
    mgi_tcp_bootstrap_t *tb = arg;
    ucs_status_t status;
    int r;

    if (tb->rank != 0) {
        status = mgi_tcp_io(tb->fds[0], (void*)sbuf, len, 1, tb->timeout_ms);
        if (status == UCS_OK) {
            status = mgi_tcp_io(tb->fds[0], rbuf, len * tb->size, 0,
                                tb->timeout_ms);
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
        status = mgi_tcp_io(tb->fds[r], (char*)rbuf + r * len, len, 0,
                            tb->timeout_ms);
        if (status != UCS_OK) {
            goto err_abort;
        }
    }
    for (r = 1; r < tb->size; ++r) {
        status = mgi_tcp_io(tb->fds[r], rbuf, len * tb->size, 1,
                            tb->timeout_ms);
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
    char host[256];
    const char *colon = strrchr(addr, ':');
    struct addrinfo hints, *res;
    size_t hlen;

    if ((colon == NULL) || ((hlen = colon - addr) >= sizeof(host))) {
        ucs_error("mgi bootstrap: address '%s' is not host:port", addr);
        return UCS_ERR_INVALID_PARAM;
    }
    memcpy(host, addr, hlen);
    host[hlen] = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_family   = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0) {
        ucs_error("mgi bootstrap: cannot resolve '%s'", addr);
        return UCS_ERR_INVALID_ADDR;
    }
    memcpy(sa, res->ai_addr, sizeof(*sa));
    freeaddrinfo(res);
    return UCS_OK;
}

static ucs_status_t mgi_tcp_root_accept(mgi_tcp_bootstrap_t *tb,
                                        const char *addr)
{
    uint64_t deadline = mgi_time_ns() +
                        (uint64_t)tb->timeout_ms * 1000000ull;
    struct sockaddr_in sa;
    struct pollfd pfd;
    int one = 1, nconn = 0, fd, peer_rank;
    ucs_status_t status;

    status = mgi_tcp_resolve(addr, &sa);
    if (status != UCS_OK) {
        return status;
    }
    tb->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (tb->listen_fd < 0) {
        ucs_error("mgi bootstrap: socket() failed: %m");
        return UCS_ERR_IO_ERROR;
    }
    setsockopt(tb->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((bind(tb->listen_fd, (struct sockaddr*)&sa, sizeof(sa)) < 0) ||
        (listen(tb->listen_fd, tb->size) < 0)) {
        ucs_error("mgi bootstrap rank 0: cannot listen on %s: %m", addr);
        return UCS_ERR_IO_ERROR;
    }

    while (nconn < tb->size - 1) {
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi bootstrap rank 0: only %d of %d ranks connected "
                      "to %s within %u ms", nconn + 1, tb->size, addr,
                      tb->timeout_ms);
            return UCS_ERR_TIMED_OUT;
        }
        pfd.fd     = tb->listen_fd;
        pfd.events = POLLIN;
        if (poll(&pfd, 1, 100) <= 0) {
            continue;
        }
        fd = accept(tb->listen_fd, NULL, NULL);
        if (fd < 0) {
            continue;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        status = mgi_tcp_io(fd, &peer_rank, sizeof(peer_rank), 0,
                            tb->timeout_ms);
        if ((status != UCS_OK) || (peer_rank <= 0) ||
            (peer_rank >= tb->size) || (tb->fds[peer_rank] >= 0)) {
            ucs_error("mgi bootstrap rank 0: bad hello (rank %d) on %s",
                      peer_rank, addr);
            close(fd);
            return UCS_ERR_INVALID_PARAM;
        }
        tb->fds[peer_rank] = fd;
        ++nconn;
    }
    /* every rank is in: a rank that goes on to its next context's create
     * before this context is destroyed must find no listener here (it
     * retries until the next one is up), not one that resets it */
    close(tb->listen_fd);
    tb->listen_fd = -1;
    return UCS_OK;
}

static ucs_status_t mgi_tcp_connect(mgi_tcp_bootstrap_t *tb, const char *addr)
{
    uint64_t deadline = mgi_time_ns() +
                        (uint64_t)tb->timeout_ms * 1000000ull;
    struct sockaddr_in sa;
    ucs_status_t status;
    int fd, one = 1;

    status = mgi_tcp_resolve(addr, &sa);
    if (status != UCS_OK) {
        return status;
    }
    for (;;) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
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
    return mgi_tcp_io(fd, &tb->rank, sizeof(tb->rank), 1, tb->timeout_ms);
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
            (params->oob.rank >= params->oob.size)) {
            ucs_error("mgi bootstrap: bad OOB rank %d / size %d",
                      params->oob.rank, params->oob.size);
            return UCS_ERR_INVALID_PARAM;
        }
        bs->oob = params->oob;
        bs->tcp = NULL;
        return UCS_OK;
    }

    if ((params->size <= 0) || (params->rank < 0) ||
        (params->rank >= params->size)) {
        ucs_error("mgi bootstrap: bad rank %d / size %d (set MGI_RANK and "
                  "MGI_NRANKS, or pass an OOB allgather)", params->rank,
                  params->size);
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
