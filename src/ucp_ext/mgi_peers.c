/**
 * The context's peers: which ranks run on this host and whether their
 * processes live, UCP's notice that an endpoint failed, the cause of a
 * transfer's error, and whether the context still delivers.
 */
#include "mgi_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* UCP's notice that the endpoint to a rank failed (the rank ended or
 * cannot be reached): the mover stops on it at its next round. */
void mgi_context_ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    mgi_context_t *ctx = arg;
    int r;

    for (r = 0; (r < ctx->size) && (ctx->peers[r] != ep); ++r) {
    }
    mgi_context_rank_failed(ctx, r, status);
}

void mgi_context_ep_close(mgi_context_t *ctx, ucp_ep_h *ep_p, int r,
                          int apart, int err_mode)
{
    ucp_request_param_t param;
    int lost = apart || (ctx->mover_status != UCS_OK) ||
               ((ctx->peer_procs != NULL) && ctx->peer_procs[r].ended);

    param.op_attr_mask = 0;
    if (lost && err_mode) {
        /* a forced close discards the transfers still queued to it */
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
    } else if (lost && (r != ctx->rank)) {
        /* no confirmation can come: ucp_worker_destroy releases it */
        *ep_p = NULL;
        return;
    }
    mgi_ucp_wait(ctx, ucp_ep_close_nbx(*ep_p, &param), "ep close", *ep_p);
    *ep_p = NULL;
}

void mgi_context_rank_failed(mgi_context_t *ctx, int r, ucs_status_t status)
{
    if (ctx->leaving) {
        ucs_debug("mgi context %p: endpoint to rank %d failed during the "
                  "destroy: %s", ctx, r, ucs_status_string(status));
    } else {
        ucs_error("mgi context %p: the endpoint to rank %d failed (%s): "
                  "this context delivers nothing any more; its calls fail "
                  "with %s: destroy it", ctx, r, ucs_status_string(status),
                  ucs_status_string(UCS_ERR_CONNECTION_RESET));
    }
    if ((r < ctx->size) && (ctx->peer_procs != NULL)) {
        ctx->peer_procs[r].ended = 1;
    }
    __atomic_store_n(&ctx->ep_failed, 1, __ATOMIC_RELEASE);
}

/* State and start time (clock ticks since boot) of process pid, from
 * /proc/<pid>/stat: 0, or -1 where there is no such process. */
static int mgi_proc_stat(int pid, char *state, uint64_t *start)
{
    char path[64], buf[1024], *p;
    unsigned long long st;
    size_t n;
    FILE *f;
    int i;

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');        /* the command name may hold anything */
    if ((p == NULL) || (sscanf(p + 1, " %c", state) != 1)) {
        return -1;
    }
    for (i = 3; (i <= 22) && (p != NULL); ++i) {  /* the blank before
                                                    * field i */
        p = strchr(p + 1, ' ');
    }
    if ((p == NULL) || (sscanf(p, " %llu", &st) != 1)) {
        return -1;
    }
    *start = st;
    return 0;
}

/* Who runs where: how many other processes of the job run on this host
 * (by host name), and which of them the mover can watch (their pid shows
 * the same process here). */
ucs_status_t mgi_context_hosts(mgi_context_t *ctx)
{
    struct {
        char     host[MGI_HOST_NAME_MAX];
        int32_t  pid;
        uint64_t start;
    } mine, *all;
    ucs_status_t status;
    uint64_t start;
    char state;
    int r;

    memset(&mine, 0, sizeof(mine));
    if (gethostname(mine.host, sizeof(mine.host) - 1) != 0) {
        snprintf(mine.host, sizeof(mine.host), "?");
    }
    mine.pid = getpid();
    if (mgi_proc_stat(mine.pid, &state, &mine.start) != 0) {
        mine.start = 0;               /* no /proc: not watched */
    }
    all             = calloc(ctx->size, sizeof(mine));
    ctx->peer_procs = calloc(ctx->size, sizeof(*ctx->peer_procs));
    if ((all == NULL) || (ctx->peer_procs == NULL)) {
        free(all);
        return UCS_ERR_NO_MEMORY;
    }
    status = mgi_bootstrap_allgather(&ctx->bs, &mine, all, sizeof(mine));
    if (status == UCS_OK) {
        ctx->host_peers = 0;
        for (r = 0; r < ctx->size; ++r) {
            if (r == ctx->rank) {
                continue;
            }
            if (strncmp(all[r].host, mine.host, sizeof(mine.host))) {
                ctx->peer_procs[r].other_host = 1;
                continue;
            }
            ++ctx->host_peers;
            if ((all[r].start != 0) &&
                (mgi_proc_stat(all[r].pid, &state, &start) == 0) &&
                (start == all[r].start)) {
                ctx->peer_procs[r].pid   = all[r].pid;
                ctx->peer_procs[r].start = start;
            }
        }
    }
    free(all);
    return status;
}

ucs_status_t mgi_context_peers_alive(mgi_context_t *ctx)
{
    const uint64_t now = mgi_time_ns();
    struct mgi_peer_proc *pp;
    uint64_t start;
    char state;
    int r;

    if (ctx->leaving || (ctx->params.peer_watch_ms == 0) ||
        (now - ctx->peers_seen_ns <
         (uint64_t)ctx->params.peer_watch_ms * 1000000ull)) {
        return UCS_OK;
    }
    ctx->peers_seen_ns = now;
    for (r = 0; r < ctx->size; ++r) {
        pp = &ctx->peer_procs[r];
        if ((pp->pid == 0) ||
            ((mgi_proc_stat(pp->pid, &state, &start) == 0) &&
             (start == pp->start) && (state != 'Z') && (state != 'X'))) {
            continue;
        }
        if (ctx->leaving) {          /* it left with its destroy */
            return UCS_OK;
        }
        ucs_error("mgi context %p: rank %d (pid %d on this host) has ended "
                  "before the context's destroy: this context delivers "
                  "nothing any more; its calls fail with %s: destroy it "
                  "(mgi_context_params_t.peer_watch_ms = 0 stops this watch)", ctx, r,
                  (int)pp->pid, ucs_status_string(UCS_ERR_CONNECTION_RESET));
        pp->pid   = 0;
        pp->ended = 1;
        return UCS_ERR_CONNECTION_RESET;
    }
    return UCS_OK;
}

/* how long a transfer's error waits for its cause to show */
#define MGI_ERROR_CAUSE_GRACE_NS 200000000ull

ucs_status_t mgi_context_error_cause(mgi_context_t *ctx, ucs_status_t status)
{
    const uint64_t deadline = mgi_time_ns() + MGI_ERROR_CAUSE_GRACE_NS;
    ucs_status_t peers;

    if ((status == UCS_OK) || (status == UCS_ERR_CONNECTION_RESET)) {
        return status;
    }
    do {
        /* UCP reports a failed endpoint from its progress */
        ucp_worker_progress(ctx->worker);
        if (__atomic_load_n(&ctx->ep_failed, __ATOMIC_ACQUIRE)) {
            return UCS_ERR_CONNECTION_RESET;
        }
        ctx->peers_seen_ns = 0;     /* look now */
        peers = mgi_context_peers_alive(ctx);
        if (peers != UCS_OK) {
            return peers;
        }
        usleep(1000);
    } while (mgi_time_ns() < deadline);
    return status;
}

ucs_status_t mgi_context_failed(mgi_context_t *ctx, const char *what,
                                unsigned ch, mgi_ep_id_t ep)
{
    ucs_status_t status = ctx->mover_status;

    if ((status != UCS_OK) &&
        !__atomic_exchange_n(&ctx->failed_said, 1, __ATOMIC_RELAXED)) {
        ucs_error("mgi channel %u: %s at endpoint %u: the context's mover "
                  "stopped on %s (said above): nothing is delivered any "
                  "more", ch, what, ep, ucs_status_string(status));
    }
    return status;
}
