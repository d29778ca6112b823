/**
 * MGI's helpers for every layer: the clock, the periodic info log, the idle
 * policy of its threads, and a bounded wait for a UCP request.
 */
#include "mgi_int.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

uint64_t mgi_time_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int mgi_log_due(const mgi_context_t *ctx, uint64_t *last_ns, double *dt_p)
{
    uint64_t now = mgi_time_ns();
    double dt    = (now - *last_ns) / 1e9;

    if ((ctx->params.log_interval_ms == 0) ||
        (dt * 1000 < ctx->params.log_interval_ms) ||
        !ucs_log_is_enabled(UCS_LOG_LEVEL_INFO)) {
        return 0;
    }
    *last_ns = now;
    *dt_p    = dt;
    return 1;
}

ucs_status_t mgi_ucp_wait(mgi_context_t *ctx, ucs_status_ptr_t req,
                          const char *what, const void *obj)
{
    unsigned idle = 0;
    uint64_t deadline;
    ucs_status_t status;

    if (req == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        ucs_error("mgi %s %p: %s", what, obj,
                  ucs_status_string(UCS_PTR_STATUS(req)));
        return UCS_PTR_STATUS(req);
    }
    deadline = mgi_deadline_ns(ctx);
    /* Completion may need the peer to run: UCP emulates RMA on memory its
     * shared-memory transports cannot register (sm) with active messages
     * that the peer's mover serves. Spinning here would keep the core from
     * that peer on a loaded machine, a time slice per round trip. */
    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        /* a rail's request needs its worker's progress (mgi_rail.c) */
        if ((ucp_worker_progress(ctx->worker) +
             mgi_rails_progress(ctx)) == 0) {
            mgi_idle(ctx, &idle);
        } else {
            idle = 0;
        }
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi %s %p: not complete after %u ms", what, obj,
                      ctx->params.timeout_ms);
            ucp_request_cancel(ctx->worker, req);
            ucp_request_free(req);
            return UCS_ERR_TIMED_OUT;
        }
    }
    ucp_request_free(req);
    if (status != UCS_OK) {
        ucs_error("mgi %s %p: %s", what, obj, ucs_status_string(status));
    }
    return status;
}

void mgi_idle(mgi_context_t *ctx, unsigned *idle_rounds)
{
    if (++(*idle_rounds) < 64) {
        mgi_cpu_relax();
    } else if (ctx->params.idle_us > 0) {
        usleep(ctx->params.idle_us);
    } else {
        sched_yield();
    }
}
