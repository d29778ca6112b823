/**
 * Fork launcher + allgather hub, UCX-only all-to-all, NCCL loader.
 */
#include "mgi_wl_comm.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ bootstrap */

static int mgi_wl_io(int fd, void *buf, size_t len, int wr)
{
    char *p = (char*)buf;
    ssize_t n;

    while (len > 0) {
        n = wr ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p   += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One round: a length and the bytes from every rank, then everything to
 * every rank.  Returns -1 when a rank has gone (normally: all are done). */
static int mgi_wl_hub_round(const int *fds, int size)
{
    uint64_t len, len0 = 0;
    char *all = NULL;
    int r;

    for (r = 0; r < size; ++r) {
        if (mgi_wl_io(fds[r], &len, sizeof(len), 0) != 0) {
            goto err;
        }
        if (r == 0) {
            len0 = len;
            all  = (char*)malloc(len0 * size + 1);
            if (all == NULL) {
                goto err;
            }
        } else if (len != len0) {
            fprintf(stderr, "mgi_wl hub: rank %d gave %llu bytes to an "
                    "allgather of %llu\n", r, (unsigned long long)len,
                    (unsigned long long)len0);
            goto err;
        }
        if (mgi_wl_io(fds[r], all + r * len0, len0, 0) != 0) {
            goto err;
        }
    }
    for (r = 0; r < size; ++r) {
        if (mgi_wl_io(fds[r], all, len0 * size, 1) != 0) {
            goto err;
        }
    }
    free(all);
    return 0;

err:
    free(all);
    return -1;
}

int mgi_wl_boot_run(int size, mgi_wl_rank_main_t rank_main, void *arg)
{
    int pair[MGI_WL_MAX_RANKS][2], hub_fd[MGI_WL_MAX_RANKS];
    pid_t pid[MGI_WL_MAX_RANKS];
    mgi_wl_boot_t boot;
    int r, q, status, failed = 0, left;
    pid_t done;

    if ((size < 1) || (size > MGI_WL_MAX_RANKS)) {
        fprintf(stderr, "mgi_wl: %d ranks (1..%d)\n", size,
                MGI_WL_MAX_RANKS);
        return 1;
    }
    for (r = 0; r < size; ++r) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair[r]) != 0) {
            perror("mgi_wl: socketpair");
            return 1;
        }
    }
    fflush(stdout);
    fflush(stderr);
    for (r = 0; r < size; ++r) {
        pid[r] = fork();
        if (pid[r] < 0) {
            perror("mgi_wl: fork");
            for (q = 0; q < r; ++q) {
                kill(pid[q], SIGKILL);
            }
            return 1;
        }
        if (pid[r] == 0) {
            /* a rank never outlives the launcher (timeouts kill it; GPU
             * processes left behind would hold the GPUs) */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() == 1) {
                _exit(1);
            }
            for (q = 0; q < size; ++q) {
                close(pair[q][0]);
                if (q != r) {
                    close(pair[q][1]);
                }
            }
            boot.rank = r;
            boot.size = size;
            boot.fd   = pair[r][1];
            status    = rank_main(&boot, arg);
            fflush(stdout);
            fflush(stderr);
            close(boot.fd);
            _exit(status == 0 ? 0 : 1);
        }
    }
    for (r = 0; r < size; ++r) {
        close(pair[r][1]);
        hub_fd[r] = pair[r][0];
    }
    while (mgi_wl_hub_round(hub_fd, size) == 0) {
    }
    /* A rank left: the others either are done too or wait in a collective
     * that can no longer complete; closing our ends wakes them with EOF. */
    for (r = 0; r < size; ++r) {
        close(hub_fd[r]);
    }
    for (left = size; left > 0; --left) {
        done = waitpid(-1, &status, 0);
        for (r = 0; (r < size) && (pid[r] != done); ++r) {
        }
        if (r == size) {
            failed = 1;
            break;
        }
        pid[r] = 0;
        if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
            fprintf(stderr, "mgi_wl: rank %d %s %d\n", r,
                    WIFEXITED(status) ? "exited with" : "killed by signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) :
                                        WTERMSIG(status));
            if (!failed) {
                /* the others may wait on it inside UCX or NCCL */
                for (q = 0; q < size; ++q) {
                    if (pid[q] > 0) {
                        kill(pid[q], SIGKILL);
                    }
                }
            }
            failed = 1;
        }
    }
    return failed;
}

int mgi_wl_allgather(mgi_wl_boot_t *b, const void *send, size_t len,
                     void *recv)
{
    uint64_t l = len;

    if ((mgi_wl_io(b->fd, &l, sizeof(l), 1) != 0) ||
        (mgi_wl_io(b->fd, (void*)send, len, 1) != 0) ||
        (mgi_wl_io(b->fd, recv, len * b->size, 0) != 0)) {
        fprintf(stderr, "mgi_wl rank %d: allgather failed (a rank has "
                "gone)\n", b->rank);
        return -1;
    }
    return 0;
}

int mgi_wl_barrier(mgi_wl_boot_t *b)
{
    char c = 0, all[MGI_WL_MAX_RANKS];

    return mgi_wl_allgather(b, &c, 1, all);
}

/* ------------------------------------------------------------------ UCX */

int mgi_wl_ucx_init(mgi_wl_ucx_t *u, mgi_wl_boot_t *boot, const char *tls)
{
    ucp_params_t params;
    ucp_worker_params_t wparams;
    ucp_ep_params_t eparams;
    ucp_config_t *config;
    ucp_address_t *addr;
    size_t addr_len;
    uint64_t len, lens[MGI_WL_MAX_RANKS], max_len = 0;
    char *mine = NULL, *all = NULL;
    ucs_status_t status;
    int r;

    memset(u, 0, sizeof(*u));
    u->boot = boot;
    status  = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        goto err_status;
    }
    if (tls != NULL) {
        status = ucp_config_modify(config, "TLS", tls);
        if (status != UCS_OK) {
            ucp_config_release(config);
            goto err_status;
        }
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_TAG;
    status            = ucp_init(&params, config, &u->context);
    ucp_config_release(config);
    if (status != UCS_OK) {
        goto err_status;
    }
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(u->context, &wparams, &u->worker);
    if (status != UCS_OK) {
        goto err_cleanup_ctx;
    }
    status = ucp_worker_get_address(u->worker, &addr, &addr_len);
    if (status != UCS_OK) {
        goto err_destroy_worker;
    }
    len = addr_len;
    if (mgi_wl_allgather(boot, &len, sizeof(len), lens) != 0) {
        goto err_release_addr;
    }
    for (r = 0; r < boot->size; ++r) {
        max_len = (lens[r] > max_len) ? lens[r] : max_len;
    }
    mine = (char*)calloc(1, max_len);
    all  = (char*)malloc(max_len * boot->size);
    if ((mine == NULL) || (all == NULL)) {
        goto err_free;
    }
    memcpy(mine, addr, addr_len);
    if (mgi_wl_allgather(boot, mine, max_len, all) != 0) {
        goto err_free;
    }
    for (r = 0; r < boot->size; ++r) {
        if (r == boot->rank) {
            continue;
        }
        memset(&eparams, 0, sizeof(eparams));
        eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        eparams.address    = (const ucp_address_t*)(all + r * max_len);
        status = ucp_ep_create(u->worker, &eparams, &u->eps[r]);
        if (status != UCS_OK) {
            fprintf(stderr, "mgi_wl rank %d: ucp_ep_create to rank %d: "
                    "%s\n", boot->rank, r, ucs_status_string(status));
            goto err_free;
        }
    }
    free(mine);
    free(all);
    ucp_worker_release_address(u->worker, addr);
    return 0;

err_free:
    free(mine);
    free(all);
err_release_addr:
    ucp_worker_release_address(u->worker, addr);
err_destroy_worker:
    for (r = 0; r < boot->size; ++r) {
        if (u->eps[r] != NULL) {
            ucp_ep_destroy(u->eps[r]);
        }
    }
    ucp_worker_destroy(u->worker);
err_cleanup_ctx:
    ucp_cleanup(u->context);
err_status:
    fprintf(stderr, "mgi_wl rank %d: UCX setup failed: %s\n", boot->rank,
            ucs_status_string(status));
    return -1;
}

void mgi_wl_ucx_cleanup(mgi_wl_ucx_t *u, int sync)
{
    ucp_request_param_t param;
    void *req;
    int r;

    /* nobody may still be sending to an endpoint we close */
    if (sync) {
        mgi_wl_barrier(u->boot);
    }
    for (r = 0; r < u->boot->size; ++r) {
        if (u->eps[r] == NULL) {
            continue;
        }
        memset(&param, 0, sizeof(param));
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
        req = ucp_ep_close_nbx(u->eps[r], &param);
        if (UCS_PTR_IS_PTR(req)) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS) {
                ucp_worker_progress(u->worker);
            }
            ucp_request_free(req);
        }
        u->eps[r] = NULL;
    }
    if (sync) {
        mgi_wl_barrier(u->boot);
    }
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->context);
}

const char *mgi_wl_ucx_missing_tl(mgi_wl_ucx_t *u, const char *tls,
                                  char *buf, size_t len)
{
    char *info = NULL, *list, *tok, *save = NULL, pat[64];
    const char *missing = NULL;
    size_t info_len = 0;
    FILE *f;

    if (tls == NULL) {
        return NULL;
    }
    f = open_memstream(&info, &info_len);
    if (f == NULL) {
        return NULL;
    }
    /* its resource lines name each transport as "tl/device" */
    ucp_context_print_info(u->context, f);
    fclose(f);
    list = strdup(tls);
    for (tok = strtok_r(list, ",", &save); (tok != NULL) && (list != NULL);
         tok = strtok_r(NULL, ",", &save)) {
        if (strncmp(tok, "cuda", 4) != 0) {
            continue;
        }
        snprintf(pat, sizeof(pat), " %s/", tok);
        if (strstr(info, pat) == NULL) {
            snprintf(buf, len, "%s", tok);
            missing = buf;
            break;
        }
    }
    free(list);
    free(info);
    return missing;
}

static ucp_tag_t mgi_wl_tag(uint32_t round, int src)
{
    return ((ucp_tag_t)round << 32) | (uint32_t)src;
}

/* Wait for one request; returns 0 or -1. */
static int mgi_wl_ucx_wait(mgi_wl_ucx_t *u, void *req, const char *what,
                           int peer)
{
    ucs_status_t status;

    if (req == NULL) {
        return 0;
    }
    if (UCS_PTR_IS_ERR(req)) {
        status = UCS_PTR_STATUS(req);
    } else {
        while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
            ucp_worker_progress(u->worker);
        }
        ucp_request_free(req);
    }
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_wl rank %d: %s rank %d: %s\n", u->boot->rank,
                what, peer, ucs_status_string(status));
        return -1;
    }
    return 0;
}

int mgi_wl_ucx_alltoallv(mgi_wl_ucx_t *u, const void *send,
                         const uint64_t *send_off, void *recv,
                         const uint64_t *recv_off)
{
    void *rreq[MGI_WL_MAX_RANKS], *sreq[MGI_WL_MAX_RANKS];
    ucp_tag_recv_info_t info[MGI_WL_MAX_RANKS];
    ucp_request_param_t param;
    int me = u->boot->rank, size = u->boot->size, r, rc = 0;
    uint32_t round = ++u->round;
    uint64_t len;

    memset(rreq, 0, sizeof(rreq));
    memset(sreq, 0, sizeof(sreq));
    memset(info, 0, sizeof(info));
    /* receives first, so sends mostly find them posted */
    for (r = 0; r < size; ++r) {
        len = recv_off[r + 1] - recv_off[r];
        if ((r == me) || (len == 0)) {
            continue;
        }
        memset(&param, 0, sizeof(param));
        /* always a request, so its length is read from one place */
        param.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
        rreq[r] = ucp_tag_recv_nbx(u->worker, (char*)recv + recv_off[r], len,
                                   mgi_wl_tag(round, r), (ucp_tag_t)-1,
                                   &param);
    }
    for (r = 0; r < size; ++r) {
        len = send_off[r + 1] - send_off[r];
        if ((r == me) || (len == 0)) {
            continue;
        }
        memset(&param, 0, sizeof(param));
        sreq[r] = ucp_tag_send_nbx(u->eps[r],
                                   (const char*)send + send_off[r], len,
                                   mgi_wl_tag(round, me), &param);
    }
    for (r = 0; r < size; ++r) {
        if (UCS_PTR_IS_PTR(rreq[r])) {
            while (ucp_tag_recv_request_test(rreq[r], &info[r]) ==
                   UCS_INPROGRESS) {
                ucp_worker_progress(u->worker);
            }
        }
        if (mgi_wl_ucx_wait(u, rreq[r], "receive from", r) != 0) {
            rc = -1;
        } else if ((r != me) && (recv_off[r + 1] != recv_off[r]) &&
                   (info[r].length != recv_off[r + 1] - recv_off[r])) {
            fprintf(stderr, "mgi_wl rank %d: %zu bytes from rank %d, "
                    "expected %llu\n", me, info[r].length, r,
                    (unsigned long long)(recv_off[r + 1] - recv_off[r]));
            rc = -1;
        }
    }
    for (r = 0; r < size; ++r) {
        if (mgi_wl_ucx_wait(u, sreq[r], "send to", r) != 0) {
            rc = -1;
        }
    }
    return rc;
}

int mgi_wl_ucx_alltoall_u64(mgi_wl_ucx_t *u, const uint64_t *send,
                            uint64_t *recv)
{
    uint64_t off[MGI_WL_MAX_RANKS + 1];
    int r;

    for (r = 0; r <= u->boot->size; ++r) {
        off[r] = (uint64_t)r * sizeof(uint64_t);
    }
    recv[u->boot->rank] = send[u->boot->rank];
    return mgi_wl_ucx_alltoallv(u, send, off, recv, off);
}

/* ----------------------------------------------------------------- NCCL */

int mgi_wl_nccl_load(mgi_wl_nccl_t *n)
{
    const char *path = getenv("MGI_NCCL_LIB");

    memset(n, 0, sizeof(*n));
    if ((path == NULL) || (path[0] == '\0')) {
        path = "libnccl.so.2";
    }
    n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (n->lib == NULL) {
        fprintf(stderr, "mgi_wl: cannot load NCCL (%s): %s; set "
                "MGI_NCCL_LIB to libnccl.so.2\n", path, dlerror());
        return -1;
    }
    snprintf(n->path, sizeof(n->path), "%s", path);
#define MGI_WL_NCCL_SYM(_name) \
    do { \
        *(void**)&n->_name = dlsym(n->lib, "nccl" #_name); \
        if (n->_name == NULL) { \
            fprintf(stderr, "mgi_wl: %s has no nccl" #_name "\n", path); \
            goto err; \
        } \
    } while (0)
    MGI_WL_NCCL_SYM(GetVersion);
    MGI_WL_NCCL_SYM(GetUniqueId);
    MGI_WL_NCCL_SYM(CommInitRank);
    MGI_WL_NCCL_SYM(CommDestroy);
    MGI_WL_NCCL_SYM(GroupStart);
    MGI_WL_NCCL_SYM(GroupEnd);
    MGI_WL_NCCL_SYM(Send);
    MGI_WL_NCCL_SYM(Recv);
    MGI_WL_NCCL_SYM(GetErrorString);
#undef MGI_WL_NCCL_SYM
    if (n->GetVersion(&n->version) != ncclSuccess) {
        fprintf(stderr, "mgi_wl: ncclGetVersion failed in %s\n", path);
        goto err;
    }
    return 0;

err:
    dlclose(n->lib);
    n->lib = NULL;
    return -1;
}
