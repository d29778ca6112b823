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
 *
 * This file: the options, the ranks (bootstrap, or --oob's forked children
 * and relay) and each rank's context, endpoints and scenario. The parts:
 * mgi_channel_tuples.c (tuples made and checked), mgi_channel_run.c (the
 * data scenarios), mgi_channel_misuse.c, mgi_channel_ids.c,
 * mgi_channel_faults.c (peer_dies, ring_budget), mgi_channel_util.c.
 */
#include "mgi_channel_test.h"

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
int ctx_open(test_t *t, const mgi_context_params_t *params,
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
            vertex_name(t, t->rank * t->eps_per_rank + e, vertex,
                        sizeof(vertex));
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
    t.spread_dst   = -1;
    memset(t.spread, 1, sizeof(t.spread));   /* one next hop a pair */
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
        } else if (!strcmp(argv[i], "--expect-spread") && (i + 1 < argc)) {
            t.spread_dst = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--ordered")) {
            t.ordered = 1;
        } else if (!strcmp(argv[i], "--expect-split")) {
            t.expect_split = 1;
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
                "[-r RECV_BYTES (1..%d)] [--oob N] [-V VERTEX_FMT|V0,V1,.. [--expect-path R,R,..] [--expect-spread RANK] [--ordered] [--expect-split]] shuffle|zipf|broadcast|explicit|many2one|"
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
