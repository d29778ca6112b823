/**
 * MGI context: parameters, bootstrap, UCP context / worker and the
 * connections to every process of the job.
 */
#include "mgi_int.h"
#include "mgi_bootstrap.h"

#include <cuda_runtime.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The number in environment variable `name`, at most max: 1 and *val when
 * it is set to one (decimal, or hexadecimal / octal with 0x / 0, blanks
 * around it allowed), 0 when unset or empty, -1 when it is something else
 * (*val untouched: mgi_env_check refuses it at mgi_context_create). */
static int mgi_env_number(const char *name, unsigned long long max,
                          unsigned long long *val)
{
    const char *s = getenv(name);
    unsigned long long v;
    char *end;

    if ((s == NULL) || (*s == '\0')) {
        return 0;
    }
    s += strspn(s, " \t");
    if (!isdigit((unsigned char)*s)) {  /* no sign: strtoull takes "-1" */
        return -1;
    }
    errno = 0;
    v     = strtoull(s, &end, 0);
    end  += strspn(end, " \t");
    if ((errno != 0) || (*end != '\0') || (v > max)) {
        return -1;
    }
    *val = v;
    return 1;
}

static void mgi_env_uint(const char *name, unsigned *val)
{
    unsigned long long v;

    if (mgi_env_number(name, UINT_MAX, &v) == 1) {
        *val = (unsigned)v;
    }
}

static void mgi_env_int(const char *name, int *val)
{
    unsigned long long v;

    if (mgi_env_number(name, INT_MAX, &v) == 1) {
        *val = (int)v;
    }
}

/* The unsigned settings read from the environment by
 * mgi_context_params_init after the ring defaults, and checked by
 * mgi_env_check (MGI_GPU_DEFAULTS, MGI_SEG_SIZE, MGI_RANK and MGI_NRANKS
 * are read apart: before the ring defaults, or of another type). */
#define MGI_ENV_U(_var, _field) \
    {_var, offsetof(mgi_context_params_t, _field)}
static const struct {
    const char *var;
    size_t      offset;
} mgi_env_uints[] = {
    MGI_ENV_U("MGI_TUPLE_SIZE", tuple_size),
    MGI_ENV_U("MGI_PRODUCER_THREADS", producer_threads),
    MGI_ENV_U("MGI_BATCH", batch),
    MGI_ENV_U("MGI_MSG_BATCH", msg_batch),
    MGI_ENV_U("MGI_DEV_MSG_BATCH", dev_msg_batch),
    MGI_ENV_U("MGI_DEV_TILE_BATCH", dev_tile_batch),
    MGI_ENV_U("MGI_STAGE_DEPTH", stage_depth),
    MGI_ENV_U("MGI_STAGE_GROUPS", stage_groups),
    MGI_ENV_U("MGI_SORT_DEPTH", sort_depth),
    MGI_ENV_U("MGI_RECV_DEPTH", recv_depth),
    MGI_ENV_U("MGI_FINAL_DEPTH", final_depth),
    MGI_ENV_U("MGI_MAX_CHANNELS", max_channels),
    MGI_ENV_U("MGI_MOVER_BATCH", mover_batch),
    MGI_ENV_U("MGI_MOVER_FLUSHES", mover_flushes),
    MGI_ENV_U("MGI_MOVER_STREAMS", mover_streams),
    MGI_ENV_U("MGI_MOVER_COPY_BATCH", mover_copy_batch),
    MGI_ENV_U("MGI_TIMEOUT_MS", timeout_ms),
    MGI_ENV_U("MGI_IDLE_US", idle_us),
    MGI_ENV_U("MGI_LOG_INTERVAL_MS", log_interval_ms),
    MGI_ENV_U("MGI_SORT_MIRROR", sort_mirror),
    MGI_ENV_U("MGI_SORTER_BLOCKS", sorter_blocks),
    MGI_ENV_U("MGI_SORTER_THREADS", sorter_threads),
    MGI_ENV_U("MGI_SORTER_COALESCE", sorter_coalesce),
    MGI_ENV_U("MGI_SORT_RINGS", sort_rings),
    MGI_ENV_U("MGI_RECV_ZCOPY", recv_zcopy),
    MGI_ENV_U("MGI_LOOP_DIRECT", loop_direct),
    MGI_ENV_U("MGI_STAGE_ZCOPY", stage_zcopy),
    MGI_ENV_U("MGI_SEND_ZCOPY", send_zcopy),
    MGI_ENV_U("MGI_SEND_WAIT_ROUNDS", send_wait_rounds),
    MGI_ENV_U("MGI_LANE_APART", lane_apart),
    MGI_ENV_U("MGI_OWNER_HELP", owner_help),
    MGI_ENV_U("MGI_EOF_ALONE", eof_alone),
    MGI_ENV_U("MGI_CTL_SHM", ctl_shm),
    MGI_ENV_U("MGI_PEER_DIRECT", peer_direct),
    MGI_ENV_U("MGI_DIRECT_RINGS", direct_rings),
    MGI_ENV_U("MGI_DIRECT_RING_KB", direct_ring_kb),
    MGI_ENV_U("MGI_DIRECT_PUBLISH_KB", direct_publish_kb),
    MGI_ENV_U("MGI_PEER_WATCH_MS", peer_watch_ms),
};

/* Whether environment variable var is set to something other than a
 * number up to max (said). */
static int mgi_env_bad(const char *var, unsigned long long max)
{
    unsigned long long v;

    if (mgi_env_number(var, max, &v) >= 0) {
        return 0;
    }
    ucs_error("mgi context: %s=\"%s\" is not a number from 0 to %llu", var,
              getenv(var), max);
    return 1;
}

/* Every MGI_* number of the environment that mgi_context_params_init reads
 * is one: else the setting would have kept its default (or taken a value
 * cut to 32 bits) without a word. */
static ucs_status_t mgi_env_check(void)
{
    int bad = mgi_env_bad("MGI_RANK", INT_MAX) ||
              mgi_env_bad("MGI_NRANKS", INT_MAX) ||
              mgi_env_bad("MGI_GPU_DEFAULTS", UINT_MAX) ||
              mgi_env_bad("MGI_SEG_SIZE", UINT_MAX);
    size_t i;

    for (i = 0; !bad && (i < ucs_static_array_size(mgi_env_uints)); ++i) {
        bad = mgi_env_bad(mgi_env_uints[i].var, UINT_MAX);
    }
    return bad ? UCS_ERR_INVALID_PARAM : UCS_OK;
}

/* Whether the NVIDIA driver lists a GPU on this machine and the process
 * may see one (CUDA_VISIBLE_DEVICES not empty or negative): read from
 * /proc, without initializing CUDA, as a process may fork after
 * mgi_context_params_init and CUDA is not fork-safe. */
static int mgi_machine_has_gpu(void)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    struct dirent *e;
    int found = 0;
    DIR *d;

    if ((vis != NULL) && ((vis[0] == '\0') || (vis[0] == '-'))) {
        return 0;
    }
    d = opendir("/proc/driver/nvidia/gpus");
    if (d == NULL) {
        return 0;
    }
    while (!found && ((e = readdir(d)) != NULL)) {
        found = (e->d_name[0] != '.');
    }
    closedir(d);
    return found;
}

/* The ring settings of gpu_defaults: 1, sized for GPU endpoints (on 2 x
 * H200 device send of 64-byte tuples 86-89 GB/s against 1.8-1.9 with the
 * CPU endpoints' set: 128 KiB segments carried half of it, the 16 sorter
 * blocks most of the rest); 0, sized for CPU
 * endpoints: segments for a warp of producers, 8 credits a sender. */
static void mgi_params_ring_defaults(mgi_context_params_t *p, unsigned gpu)
{
    p->seg_size      = gpu ? MGI_GPU_SEG_SIZE : 0;
    p->stage_depth   = gpu ? 16 : 8;
    p->sort_depth    = gpu ? 256 : 8;
    p->recv_depth    = gpu ? 256 : 8;
    p->final_depth   = gpu ? 16 : 8;
    p->mover_batch   = gpu ? 32 : 16;
    p->sorter_blocks = gpu ? 16 : 2;
    p->sort_rings    = gpu ? 4 : 1;
}

void mgi_context_params_init(mgi_context_params_t *p)
{
    unsigned seg;
    size_t i;

    memset(p, 0, sizeof(*p));
    p->rank             = 0;
    p->size             = 1;
    p->tuple_size       = 24;
    p->producer_threads = 32;
    p->batch            = 16;
    p->msg_batch        = MGI_MSG_BATCH_BYTES;
    p->dev_msg_batch    = 0;
    p->dev_tile_batch   = 0;
    p->stage_groups     = 1;
    p->max_channels     = 256;
    p->mover_flushes    = 16;
    p->mover_streams    = 1;
    p->mover_copy_batch = 1;
    p->timeout_ms       = 60000;
    p->idle_us          = 50;
    p->log_interval_ms  = 1000;
    p->sort_mirror      = 0;
    p->sorter_threads   = 256;
    p->sorter_coalesce  = 2;
    p->recv_zcopy       = 0;
    p->loop_direct      = 1;
    p->stage_zcopy      = 1;
    p->send_zcopy       = 0;
    p->send_wait_rounds = 16;
    p->lane_apart       = 1;
    p->owner_help       = 0;
    p->eof_alone        = 1;
    p->ctl_shm          = 1;
    p->peer_direct      = 0;
    p->direct_rings     = 1;
    p->direct_ring_kb   = 512;
    p->direct_publish_kb = 128;
    p->peer_watch_ms    = 100;
    p->gpu_defaults     = mgi_machine_has_gpu();
    mgi_env_uint("MGI_GPU_DEFAULTS", &p->gpu_defaults);
    /* a bad value is refused at mgi_context_create; meanwhile the CPU
     * endpoints' set */
    mgi_params_ring_defaults(p, p->gpu_defaults == 1);

    p->bootstrap_addr = getenv("MGI_BOOTSTRAP");
    p->ucx_tls        = getenv("MGI_UCX_TLS");
    mgi_env_int("MGI_RANK", &p->rank);
    mgi_env_int("MGI_NRANKS", &p->size);
    seg = (unsigned)p->seg_size;
    mgi_env_uint("MGI_SEG_SIZE", &seg);
    p->seg_size = seg;
    for (i = 0; i < ucs_static_array_size(mgi_env_uints); ++i) {
        mgi_env_uint(mgi_env_uints[i].var,
                     (unsigned*)((char*)p + mgi_env_uints[i].offset));
    }
}

/* Does a UCX_TLS list name transport `tl` to use (not in a list that
 * starts with '^', which names the ones to leave out)? */
static int mgi_tls_names(const char *tls, const char *tl)
{
    const size_t len = strlen(tl);
    const char *p;

    if ((tls == NULL) || (tls[0] == '^')) {
        return 0;
    }
    for (p = tls; *p != '\0'; p += strcspn(p, ",")) {
        p += (*p == ',');
        if ((strncmp(p, tl, len) == 0) &&
            ((p[len] == ',') || (p[len] == '\0'))) {
            return 1;
        }
    }
    return 0;
}

/* The mover progresses its worker every round, so with cuda_mgi the
 * round's puts can go to the copy engine together: cuda_mgi's
 * UCX_CUDA_MGI_BATCH=y for this context's UCP alone, where its transports
 * name cuda_mgi and a GPU is there (else no cuda_mgi interface reads the
 * key, and UCP warns of it as unused), unless the user set the variable.
 * Between two processes on 2 x H200 the one-way flow of point-to-point
 * moved 205-206 against 167.5 GB/s with it, many-to-one and one-to-many
 * 4-5 % more, the Exchange the same. */
/* Set a transport's setting `field` (its name without the prefix `tl`) in
 * UCP's configuration unless the user set UCX_<TL>_<FIELD>. UCP hands the
 * key to each interface's configuration. A field of a table that several
 * transports share under its own prefix (MM_ of posix and sysv) matches the
 * key with that prefix on every version; a field of a transport's own table
 * matches it without the prefix before UCX 1.17 (`own_table`), with it from
 * 1.17 on. */
static void mgi_ucp_config_tl(mgi_context_t *ctx, ucp_config_t *config,
                              const char *tl, const char *field,
                              int own_table, const char *value,
                              const char *why)
{
    unsigned major, minor, release;
    char key[64], env[80];
    ucs_status_t status;

    snprintf(key, sizeof(key), "%s_%s", tl, field);
    snprintf(env, sizeof(env), "UCX_%s", key);
    if (getenv(env) != NULL) {
        return;
    }
    ucp_get_version(&major, &minor, &release);
    status = ucp_config_modify(config,
                               (!own_table || (major > 1) || (minor >= 17)) ?
                               key : field, value);
    if (status != UCS_OK) {
        ucs_debug("mgi context %p: %s=%s refused by UCP (%s): %s", ctx, key,
                  value, ucs_status_string(status), why);
    }
}

static void mgi_ucp_config_batch(mgi_context_t *ctx, ucp_config_t *config,
                                 const char *tls)
{
    int ndev = 0;

    if (!mgi_tls_names(tls, "cuda_mgi")) {
        return;
    }
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) {
        ndev = 0;
        (void)cudaGetLastError();
    }
    if (ndev == 0) {
        return;
    }
    /* no other transport has a BATCH field */
    mgi_ucp_config_tl(ctx, config, "CUDA_MGI", "BATCH", 1, "y",
                      "the mover's copies go one by one");
}

static int mgi_is_pow2(unsigned v)
{
    return (v != 0) && ((v & (v - 1)) == 0);
}

static ucs_status_t mgi_context_check_params(const mgi_context_params_t *p,
                                             size_t *seg_size_p)
{
    size_t seg = p->seg_size;

    if (mgi_env_check() != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (!mgi_is_pow2(p->stage_depth) || !mgi_is_pow2(p->sort_depth) ||
        !mgi_is_pow2(p->recv_depth) || !mgi_is_pow2(p->final_depth)) {
        ucs_error("mgi context: ring depths must be powers of two (stage %u "
                  "sort %u recv %u final %u)", p->stage_depth, p->sort_depth,
                  p->recv_depth, p->final_depth);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->gpu_defaults > 1) {
        ucs_error("mgi context: gpu_defaults (MGI_GPU_DEFAULTS) %u: 0 (ring "
                  "settings sized for CPU endpoints) or 1 (for GPU "
                  "endpoints)", p->gpu_defaults);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->sorter_coalesce > 2) {
        ucs_error("mgi context: sorter_coalesce (MGI_SORTER_COALESCE) %u: 0 "
                  "(a thread per message), 1 (coalesced) or 2 (runs in "
                  "segment order)", p->sorter_coalesce);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->stage_groups == 0) || (p->stage_groups > MGI_STAGE_GROUPS_MAX)) {
        ucs_error("mgi context: stage_groups (MGI_STAGE_GROUPS) %u out of "
                  "[1, %d]", p->stage_groups, MGI_STAGE_GROUPS_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->loop_direct > 1) {
        ucs_error("mgi context: loop_direct (MGI_LOOP_DIRECT) %u: 0 "
                  "(through the loopback lane) or 1 (straight to a final "
                  "ring)", p->loop_direct);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->mover_copy_batch > 1) {
        ucs_error("mgi context: mover_copy_batch (MGI_MOVER_COPY_BATCH) %u: "
                  "0 (a copy engine call per copy) or 1 (a flush's copies "
                  "in one batch)", p->mover_copy_batch);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->peer_direct > 1) {
        ucs_error("mgi context: peer_direct (MGI_PEER_DIRECT) %u: 0 "
                  "(through sort rings and the mover) or 1 (GPU endpoints "
                  "append to each other's receive lanes)", p->peer_direct);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->direct_rings > 1) {
        ucs_error("mgi context: direct_rings (MGI_DIRECT_RINGS) %u: 0 "
                  "(through stage rings, sorters and movers) or 1 (direct "
                  "rings between the GPU endpoints of one host)",
                  p->direct_rings);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->direct_ring_kb < 4) || (p->direct_ring_kb > (1u << 20))) {
        ucs_error("mgi context: direct_ring_kb (MGI_DIRECT_RING_KB) %u: "
                  "from 4 to 1048576 KiB of tuples a direct ring",
                  p->direct_ring_kb);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->direct_publish_kb > (1u << 20)) {
        ucs_error("mgi context: direct_publish_kb (MGI_DIRECT_PUBLISH_KB) "
                  "%u: from 0 (publish after every send) to 1048576 KiB "
                  "written to a direct ring before its tail is published",
                  p->direct_publish_kb);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->eof_alone > 1) {
        ucs_error("mgi context: eof_alone (MGI_EOF_ALONE) %u: 0 (an EOF in "
                  "its tuples' sort segment) or 1 (in a segment of its own)",
                  p->eof_alone);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->stage_zcopy > 1) {
        ucs_error("mgi context: stage_zcopy (MGI_STAGE_ZCOPY) %u: 0 (copy "
                  "whole stage segments into final rings) or 1 (by "
                  "reference)", p->stage_zcopy);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->send_zcopy > 1) {
        ucs_error("mgi context: send_zcopy (MGI_SEND_ZCOPY) %u: 0 (copy "
                  "whole stage segments into sort rings) or 1 (the mover "
                  "puts them from the stage ring)", p->send_zcopy);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->lane_apart > 1) {
        ucs_error("mgi context: lane_apart (MGI_LANE_APART) %u: 0 (the "
                  "owners of receive lanes take stage rings too) or 1 (they "
                  "do not)", p->lane_apart);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->owner_help > MGI_OWNER_HELP_MAX) {
        ucs_error("mgi context: owner_help (MGI_OWNER_HELP) %u: the whole "
                  "moves a lane's owner copies for others in a round its "
                  "lanes moved, 0..%u", p->owner_help, MGI_OWNER_HELP_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->recv_zcopy > 1) {
        ucs_error("mgi context: recv_zcopy (MGI_RECV_ZCOPY) %u: 0 (copy "
                  "whole segments into final rings) or 1 (by reference)",
                  p->recv_zcopy);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->sort_rings == 0) || (p->sort_rings > MGI_MAX_SORT_RINGS)) {
        ucs_error("mgi context: sort_rings (MGI_SORT_RINGS) %u out of "
                  "[1, %d]", p->sort_rings, MGI_MAX_SORT_RINGS);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->msg_batch > MGI_MSG_MAX_LEN) ||
        (p->dev_msg_batch > MGI_MSG_MAX_LEN) ||
        (p->dev_tile_batch > MGI_MSG_MAX_LEN)) {
        ucs_error("mgi context: msg_batch %u (MGI_MSG_BATCH), "
                  "dev_msg_batch %u (MGI_DEV_MSG_BATCH) or dev_tile_batch "
                  "%u (MGI_DEV_TILE_BATCH) is above the largest message "
                  "payload: set it to %u or less (0: a message per tuple)",
                  p->msg_batch, p->dev_msg_batch, p->dev_tile_batch,
                  MGI_MSG_MAX_LEN);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->batch == 0) || (p->producer_threads == 0) ||
        (p->mover_batch == 0) || (p->max_channels == 0) ||
        (p->max_channels > 0xffff)) {
        ucs_error("mgi context: batch, producer_threads, mover_batch and "
                  "max_channels (< 65536) must be positive");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->mover_flushes == 0) ||
        (p->mover_flushes > MGI_MOVER_FLUSHES_MAX)) {
        ucs_error("mgi context: mover_flushes %u (MGI_MOVER_FLUSHES) out of "
                  "[1, %u]", p->mover_flushes, MGI_MOVER_FLUSHES_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->mover_streams == 0) ||
        (p->mover_streams > MGI_MOVER_STREAMS_MAX)) {
        ucs_error("mgi context: mover_streams %u (MGI_MOVER_STREAMS) out of "
                  "[1, %u]", p->mover_streams, MGI_MOVER_STREAMS_MAX);
        return UCS_ERR_INVALID_PARAM;
    }
    if (seg == 0) {
        /* paper §5.3: |S| x producer threads per block x N; rings are
         * shared by the channels of an endpoint, so |S| is a hint */
        if ((p->tuple_size == 0) || (p->tuple_size > MGI_MSG_MAX_LEN)) {
            ucs_error("mgi context: tuple_size %u out of [1, %u]",
                      p->tuple_size, MGI_MSG_MAX_LEN);
            return UCS_ERR_INVALID_PARAM;
        }
        seg = MGI_SEG_HDR_SIZE + (size_t)mgi_msg_size(p->tuple_size) *
                                 p->producer_threads * p->batch;
    }
    seg = (seg + MGI_RING_LINE - 1) & ~(size_t)(MGI_RING_LINE - 1);
    if ((seg < 256) || (seg > (512u << 10))) {
        ucs_error("mgi context: segment size %zu out of [256, 512K]", seg);
        return UCS_ERR_INVALID_PARAM;
    }
    *seg_size_p = seg;
    return UCS_OK;
}


static ucs_status_t mgi_context_connect(mgi_context_t *ctx)
{
    ucp_worker_attr_t wattr = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    ucp_ep_params_t ep_params;
    uint64_t len, max_len = 0, *lens;
    char *addrs = NULL, errbuf[256];
    ucs_status_t status;
    int r;

    status = ucp_worker_query(ctx->worker, &wattr);
    if (status != UCS_OK) {
        ucs_error("mgi context %p: ucp_worker_query: %s", ctx,
                  ucs_status_string(status));
        return status;
    }

    lens = calloc(ctx->size, sizeof(*lens));
    if (lens == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out_release;
    }
    len    = wattr.address_length;
    status = mgi_bootstrap_allgather(&ctx->bs, &len, lens, sizeof(len));
    if (status != UCS_OK) {
        goto out_free_lens;
    }
    /* bounded before it sizes an allocation: only ranks that know the job
     * token (or the application's allgather) got here, but a rank that
     * runs other code must not make this one allocate terabytes */
    status = mgi_bootstrap_addr_lens_check(lens, ctx->size, &max_len, errbuf,
                                           sizeof(errbuf));
    if (status != UCS_OK) {
        ucs_error("mgi context %p: %s", ctx, errbuf);
        goto out_free_lens;
    }
    addrs = calloc(ctx->size + 1, max_len);
    if (addrs == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out_free_lens;
    }
    memcpy(addrs + ctx->size * max_len, wattr.address, len);
    status = mgi_bootstrap_allgather(&ctx->bs, addrs + ctx->size * max_len,
                                     addrs, max_len);
    if (status != UCS_OK) {
        goto out_free_addrs;
    }

    for (r = 0; r < ctx->size; ++r) {
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep_params.address    = (ucp_address_t*)(addrs + r * max_len);
        if (r != ctx->rank) {
            /* without peer error handling UCP aborts the process when a
             * transfer from a rank that ended fails */
            ep_params.field_mask    |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                       UCP_EP_PARAM_FIELD_ERR_HANDLER;
            ep_params.err_mode       = UCP_ERR_HANDLING_MODE_PEER;
            ep_params.err_handler.cb = mgi_context_ep_failed;
            ep_params.err_handler.arg = ctx;
            status = ucp_ep_create(ctx->worker, &ep_params, &ctx->peers[r]);
            if (status == UCS_OK) {
                ctx->peer_err_mode[r] = 1;
                continue;
            }
            ucs_warn("mgi context %p rank %d: no transport of UCX_TLS "
                     "reaches rank %d with peer failure handling (%s): if "
                     "that rank ends, UCX may abort this one", ctx,
                     ctx->rank, r, ucs_status_string(status));
            ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        }
        status = ucp_ep_create(ctx->worker, &ep_params, &ctx->peers[r]);
        if (status != UCS_OK) {
            ucs_error("mgi context %p rank %d: cannot connect to rank %d: %s",
                      ctx, ctx->rank, r, ucs_status_string(status));
            goto out_free_addrs;
        }
    }

out_free_addrs:
    free(addrs);
out_free_lens:
    free(lens);
out_release:
    ucp_worker_release_address(ctx->worker, wattr.address);
    return status;
}

/* Whether the context's UCP has transport `tl`: its resource lines name
 * each one as "tl/device" (UCP has no query for them). */
static int mgi_context_has_tl(mgi_context_t *ctx, const char *tl)
{
    char *info = NULL, pat[64];
    size_t info_len = 0;
    FILE *f;
    int found;

    f = open_memstream(&info, &info_len);
    if (f == NULL) {
        return 1;   /* cannot tell: assume it is there */
    }
    ucp_context_print_info(ctx->ucp, f);
    fclose(f);
    snprintf(pat, sizeof(pat), " %s/", tl);
    found = (info != NULL) && (strstr(info, pat) != NULL);
    free(info);
    return found;
}

/* The ring geometry every rank must share: movers address other ranks'
 * receive lanes by offset, and every rank makes the same direct rings. */
typedef struct {
    uint64_t seg_size;
    uint32_t recv_depth;
    uint32_t direct_rings;
    uint32_t direct_ring_kb;
    uint32_t gpu_defaults;
} mgi_ring_geometry_t;

/* One setting of rank r against rank 0's: an error naming its variable. */
static int mgi_context_differs(const mgi_ring_geometry_t *all, int r,
                               const char *var, uint64_t mine, uint64_t r0)
{
    if (mine == r0) {
        return 0;
    }
    ucs_error("mgi context: rank %d has %s=%llu, rank 0 %llu: set it alike "
              "on every rank%s", r, var, (unsigned long long)mine,
              (unsigned long long)r0,
              (all[r].gpu_defaults != all[0].gpu_defaults) ?
              " (their ring defaults differ too: MGI_GPU_DEFAULTS, 1 by "
              "default where the NVIDIA driver lists a GPU; set it alike)" :
              "");
    return 1;
}

/* Collective: refused at every rank alike (each sees every rank's) when a
 * rank's ring geometry differs from rank 0's. */
static ucs_status_t mgi_context_agree(mgi_context_t *ctx)
{
    mgi_ring_geometry_t mine, *all;
    ucs_status_t status;
    int r;

    memset(&mine, 0, sizeof(mine));
    mine.seg_size       = ctx->seg_size;
    mine.recv_depth     = ctx->params.recv_depth;
    mine.direct_rings   = ctx->params.direct_rings;
    mine.direct_ring_kb = ctx->params.direct_ring_kb;
    mine.gpu_defaults   = ctx->params.gpu_defaults;
    all = calloc(ctx->size, sizeof(mine));
    if (all == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    status = mgi_bootstrap_allgather(&ctx->bs, &mine, all, sizeof(mine));
    for (r = 1; (status == UCS_OK) && (r < ctx->size); ++r) {
        if (mgi_context_differs(all, r, "MGI_SEG_SIZE (segment bytes)",
                                all[r].seg_size, all[0].seg_size) ||
            mgi_context_differs(all, r, "MGI_RECV_DEPTH",
                                all[r].recv_depth, all[0].recv_depth) ||
            mgi_context_differs(all, r, "MGI_DIRECT_RINGS",
                                all[r].direct_rings, all[0].direct_rings) ||
            mgi_context_differs(all, r, "MGI_DIRECT_RING_KB",
                                all[r].direct_ring_kb,
                                all[0].direct_ring_kb)) {
            status = UCS_ERR_INVALID_PARAM;
        }
    }
    free(all);
    return status;
}

/* Close the UCP endpoints to the other ranks, each close waited for (it
 * needs the peer's progress), but not where `apart` (the ranks did not
 * meet at the destroy: some may have gone on and ended) or to a rank
 * whose process ended: they confirm no close (and a forced one needs peer
 * error handling); ucp_worker_destroy releases those endpoints. */
static void mgi_context_disconnect(mgi_context_t *ctx, int apart)
{
    ucp_request_param_t param;
    int r, lost;

    for (r = 0; r < ctx->size; ++r) {
        if (ctx->peers[r] == NULL) {
            continue;
        }
        lost = apart || (ctx->mover_status != UCS_OK) ||
               ((ctx->peer_procs != NULL) && ctx->peer_procs[r].ended);
        param.op_attr_mask = 0;
        if (lost && (ctx->peer_err_mode != NULL) && ctx->peer_err_mode[r]) {
            /* a forced close discards the transfers still queued to it */
            param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
        } else if (lost && (r != ctx->rank)) {
            /* no confirmation can come: ucp_worker_destroy releases it */
            ctx->peers[r] = NULL;
            continue;
        }
        mgi_ucp_wait(ctx, ucp_ep_close_nbx(ctx->peers[r], &param),
                     "ep close", ctx->peers[r]);
        ctx->peers[r] = NULL;
    }
}

/* The transports of the context's own UCP: the caller's (ucx_tls,
 * MGI_UCX_TLS) as they are; else UCX_TLS, with cuda_mgi added where GPU
 * endpoints of several processes of this host will need it (a GPU here,
 * another rank on this host) and the list names transports without it:
 * UCX_TLS is the application's choice for its own UCP, and without
 * cuda_mgi the movers' puts of GPU memory to the other processes have no
 * transport (mgi_ep_create refuses then). NULL: UCP's own choice. */
static const char *mgi_context_tls(mgi_context_t *ctx,
                                   const mgi_context_params_t *params,
                                   char *buf, size_t len)
{
    const char *env = getenv("UCX_TLS");

    if ((params->ucx_tls != NULL) && (params->ucx_tls[0] != '\0')) {
        return params->ucx_tls;
    }
    if ((env == NULL) || (env[0] == '\0') || (env[0] == '^') ||
        mgi_tls_names(env, "cuda_mgi") || mgi_tls_names(env, "all") ||
        (ctx->host_peers == 0) || !mgi_machine_has_gpu()) {
        return NULL;
    }
    snprintf(buf, len, "%s,cuda_mgi", env);
    ucs_info("mgi context %p: transports %s: cuda_mgi added to UCX_TLS=%s "
             "for the GPU endpoints of the %d other process(es) on this "
             "host (MGI_UCX_TLS sets the context's own list)", ctx, buf, env,
             ctx->host_peers);
    return buf;
}

ucs_status_t mgi_context_create(const mgi_context_params_t *params,
                                mgi_context_h *ctx_p)
{
    ucp_params_t ucp_params;
    ucp_worker_params_t wparams;
    ucp_config_t *config;
    char tls_buf[512];
    const char *tls, *tls_in;
    mgi_context_t *ctx;
    ucs_status_t status;
    int dummy = 0, *all;
    size_t seg;

    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ctx->params       = *params;
    ctx->mover_device = MGI_EP_HOST;
    status      = mgi_context_check_params(params, &ctx->seg_size);
    if (status != UCS_OK) {
        goto err_free;
    }
    if (params->gpu_defaults && (params->seg_size == MGI_GPU_SEG_SIZE) &&
        (getenv("MGI_SEG_SIZE") == NULL)) {
        /* the default for GPU endpoints, halved where a GPU's sorter
         * would not hold it in shared memory (one with less than H100's) */
        seg = mgi_gpu_seg_fit(ctx->seg_size);
        if (seg != ctx->seg_size) {
            ucs_info("mgi context: segments of %zu bytes (the GPU default "
                     "%zu does not fit a sorter block's shared memory on "
                     "every GPU here)", seg, ctx->seg_size);
            ctx->seg_size = seg;
        }
    }
    pthread_mutex_init(&ctx->lock, NULL);

    status = mgi_bootstrap_init(&ctx->bs, params);
    if (status != UCS_OK) {
        goto err_free;
    }
    ctx->rank = ctx->bs.oob.rank;
    ctx->size = ctx->bs.oob.size;
    if (ctx->size > MGI_MAX_RANKS) {
        ucs_error("mgi context: %d processes, at most %d", ctx->size,
                  MGI_MAX_RANKS);
        status = UCS_ERR_INVALID_PARAM;
        goto err_bootstrap;
    }

    ctx->peers    = calloc(ctx->size, sizeof(*ctx->peers));
    ctx->peer_err_mode = calloc(ctx->size, sizeof(*ctx->peer_err_mode));
    ctx->peer_eps = calloc(MGI_MAX_EPS, sizeof(*ctx->peer_eps));
    ctx->lanes    = calloc(MGI_MAX_EPS, sizeof(*ctx->lanes));
    ctx->chs      = calloc(params->max_channels, sizeof(*ctx->chs));
    if ((ctx->peers == NULL) || (ctx->peer_err_mode == NULL) ||
        (ctx->peer_eps == NULL) ||
        (ctx->chs == NULL) || (ctx->lanes == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_arrays;
    }

    /* who shares this host decides the transports the context needs */
    status = mgi_context_hosts(ctx);
    if (status != UCS_OK) {
        goto err_arrays;
    }
    tls = mgi_context_tls(ctx, params, tls_buf, sizeof(tls_buf));
    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        goto err_arrays;
    }
    if (tls != NULL) {
        status = ucp_config_modify(config, "TLS", tls);
        if (status != UCS_OK) {
            ucs_error("mgi context %p: transports \"%s\" (ucx_tls, "
                      "MGI_UCX_TLS, else UCX_TLS) refused by UCP: %s", ctx,
                      tls, ucs_status_string(status));
            ucp_config_release(config);
            goto err_arrays;
        }
    }
    /* Shared memory offers peer failure handling only when asked: without
     * it UCP cannot create endpoints that survive a rank that ends (it
     * aborts the process when a transfer from that rank fails). Asked only
     * where shared memory may be used: UCP warns about a setting no
     * transport took. */
    tls_in = (tls != NULL) ? tls : getenv("UCX_TLS");
    if ((tls_in == NULL) || (tls_in[0] == '\0') || (tls_in[0] == '^') ||
        mgi_tls_names(tls_in, "all") || mgi_tls_names(tls_in, "sm") ||
        mgi_tls_names(tls_in, "shm") || mgi_tls_names(tls_in, "mm") ||
        mgi_tls_names(tls_in, "posix") || mgi_tls_names(tls_in, "sysv")) {
        mgi_ucp_config_tl(ctx, config, "MM", "ERROR_HANDLING", 0, "y",
                          "a rank that ends may abort the others");
    }
    mgi_ucp_config_batch(ctx, config, tls_in);
    memset(&ucp_params, 0, sizeof(ucp_params));
    ucp_params.field_mask        = UCP_PARAM_FIELD_FEATURES |
                                   UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    ucp_params.features          = UCP_FEATURE_RMA;
    ucp_params.mt_workers_shared = 1;
    status = ucp_init(&ucp_params, config, &ctx->ucp);
    ucp_config_release(config);
    if (status != UCS_OK) {
        ucs_error("mgi context %p: ucp_init: %s", ctx,
                  ucs_status_string(status));
        goto err_arrays;
    }

    /* the mover progresses the worker; channel creation unpacks rkeys on
     * the application's thread at the same time */
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_MULTI;
    status = ucp_worker_create(ctx->ucp, &wparams, &ctx->worker);
    if (status != UCS_OK) {
        ucs_error("mgi context %p: ucp_worker_create: %s", ctx,
                  ucs_status_string(status));
        goto err_ucp;
    }

    ctx->has_cuda_mgi = mgi_context_has_tl(ctx, "cuda_mgi");
    status = mgi_context_agree(ctx);
    if (status != UCS_OK) {
        goto err_worker;
    }
    if (ctx->params.peer_direct && (ctx->host_peers != ctx->size - 1)) {
        /* every rank answers the same: no one goes on to connect */
        ucs_error("mgi context: MGI_PEER_DIRECT=1 needs every rank on one "
                  "host; %d of the %d ranks share this one's host name: "
                  "unset MGI_PEER_DIRECT", ctx->host_peers + 1, ctx->size);
        status = UCS_ERR_UNSUPPORTED;
        goto err_worker;
    }
    status = mgi_context_connect(ctx);
    if (status != UCS_OK) {
        goto err_worker;
    }

    status = mgi_mover_start(ctx);
    if (status != UCS_OK) {
        goto err_disconnect;
    }

    /* nobody returns before every rank is connected and moving */
    all = calloc(ctx->size, sizeof(int));
    if (all == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_mover;
    }
    status = mgi_bootstrap_allgather(&ctx->bs, &dummy, all, sizeof(int));
    free(all);
    if (status != UCS_OK) {
        goto err_mover;
    }

    ucs_info("mgi context %p: rank %d of %d, segment %zu bytes, stage/sort/"
             "recv/final depth %u/%u/%u/%u, %u sorter block(s); ring "
             "defaults sized for %s endpoints (MGI_GPU_DEFAULTS=%u)", ctx,
             ctx->rank, ctx->size, ctx->seg_size, params->stage_depth,
             params->sort_depth, params->recv_depth, params->final_depth,
             params->sorter_blocks, params->gpu_defaults ? "GPU" : "CPU",
             params->gpu_defaults);
    *ctx_p = ctx;
    return UCS_OK;

err_mover:
    mgi_mover_stop(ctx);
err_disconnect:
    mgi_context_disconnect(ctx, 0);
err_worker:
    ucp_worker_destroy(ctx->worker);
err_ucp:
    ucp_cleanup(ctx->ucp);
err_arrays:
    free(ctx->lanes);
    free(ctx->chs);
    free(ctx->peer_eps);
    free(ctx->peers);
    free(ctx->peer_err_mode);
    free(ctx->peer_procs);
err_bootstrap:
    mgi_bootstrap_fini(&ctx->bs);
err_free:
    free(ctx);
    return status;
}

void mgi_context_destroy(mgi_context_h ctx)
{
    mgi_channel_t *ch;
    unsigned i;
    int dummy = 0, apart = 0, *all;

    /* peers may still read our rings: leave together (and once they
     * passed this, they may end before the mover stops) */
    ctx->leaving = 1;
    all = calloc(ctx->size, sizeof(int));
    if (all != NULL) {
        apart = (mgi_bootstrap_allgather(&ctx->bs, &dummy, all,
                                         sizeof(int)) != UCS_OK);
        free(all);
    }

    mgi_region_fini_all(ctx);   /* their proxies use the worker */
    for (i = 0; i < ctx->neps; ++i) {
        if (ctx->eps[i] != NULL) {
            mgi_sorter_stop(ctx->eps[i]);
        }
    }
    for (i = 0; i < ctx->params.max_channels; ++i) {
        if (ctx->chs[i] != NULL) {
            mgi_channel_free(ctx->chs[i]);
            ctx->chs[i] = NULL;
        }
    }
    while ((ch = ctx->dead) != NULL) {  /* deleted ones: no sorter runs */
        ctx->dead = ch->dead_next;
        mgi_channel_free(ch);
    }
    for (i = 0; i < ctx->ndmaps; ++i) { /* no sorter runs now */
        mgi_gpu_peer_unmap(ctx->dmaps[i].p);
    }
    free(ctx->dmaps);
    mgi_route_fini(ctx);
    ctx->dmaps  = NULL;
    ctx->ndmaps = 0;
    mgi_mover_quiesce(ctx);
    for (i = 0; i < MGI_MAX_EPS; ++i) {
        if (ctx->peer_eps[i].valid) {
            ucp_rkey_destroy(ctx->peer_eps[i].rkey);
            if (ctx->peer_eps[i].dmap != NULL) {
                mgi_gpu_peer_unmap(ctx->peer_eps[i].dmap);
                ctx->peer_eps[i].dmap = NULL;
            }
            if (ctx->peer_eps[i].ctl_map != NULL) {
                munmap(ctx->peer_eps[i].ctl_map, ctx->peer_eps[i].ctl_map_len);
                ctx->peer_eps[i].ctl_map = NULL;
            }
            if (ctx->peer_eps[i].has_ctl) {
                ucp_rkey_destroy(ctx->peer_eps[i].ctl_rkey);
            }
            ctx->peer_eps[i].valid = 0;
        }
    }
    /* the mover, idle now, keeps progressing the worker until every peer
     * closed too: a TCP close completes only with the peer's progress */
    mgi_context_disconnect(ctx, apart);
    all = calloc(ctx->size, sizeof(int));
    if ((all != NULL) && !apart) {
        mgi_bootstrap_allgather(&ctx->bs, &dummy, all, sizeof(int));
    }
    free(all);
    mgi_mover_stop(ctx);
    for (i = 0; i < ctx->neps; ++i) {
        if (ctx->eps[i] != NULL) {
            mgi_ep_destroy(ctx->eps[i]);
        }
    }
    /* after the sorter kernels: its pinned memory is freed here */
    mgi_mover_cuda_fini(ctx);
    mgi_gpu_host_free(ctx->fail_word);
    ucp_worker_destroy(ctx->worker);
    ucp_cleanup(ctx->ucp);
    mgi_bootstrap_fini(&ctx->bs);
    for (i = 0; i < MGI_MAX_EPS; ++i) {
        free(ctx->lanes[i]);
    }
    free(ctx->lanes);
    free(ctx->chs);
    free(ctx->peer_eps);
    free(ctx->peers);
    free(ctx->peer_err_mode);
    free(ctx->peer_procs);
    free(ctx);
}

ucs_status_t mgi_params_seg_size(const mgi_context_params_t *params,
                                 size_t *seg_size_p)
{
    return mgi_context_check_params(params, seg_size_p);
}

size_t mgi_context_seg_size(mgi_context_h ctx)
{
    return ctx->seg_size;
}

int mgi_context_rank(mgi_context_h ctx)
{
    return ctx->rank;
}

int mgi_context_size(mgi_context_h ctx)
{
    return ctx->size;
}

ucs_status_t mgi_context_allgather(mgi_context_h ctx, const void *sbuf,
                                   void *rbuf, size_t len)
{
    return mgi_bootstrap_allgather(&ctx->bs, sbuf, rbuf, len);
}
