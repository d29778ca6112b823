/**
 * The UCP contexts of an MGI context: their transports and settings (each
 * set unless the user set its UCX_ variable), opened for the context and
 * for each of its rails (mgi_rail.c), which differ in their network
 * devices only.
 */
#include "mgi_int.h"

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* characters of a UCX device name (a NUL ends one too) */
#define MGI_DEV_NAME_CHARS \
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-"

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

/* UCP's setting KEY (its variable UCX_ENV_KEY) to VALUE in config, unless
 * the user set UCX_ENV_KEY; WHY says what is lost where UCP refuses it */
static void mgi_ucp_config_default(mgi_context_t *ctx, ucp_config_t *config,
                                   const char *env_key, const char *key,
                                   const char *value, const char *why)
{
    char env[80];
    ucs_status_t status;

    snprintf(env, sizeof(env), "UCX_%s", env_key);
    if (getenv(env) != NULL) {
        return;
    }
    status = ucp_config_modify(config, key, value);
    if (status != UCS_OK) {
        ucs_debug("mgi context %p: %s=%s refused by UCP (%s): %s", ctx,
                  env_key, value, ucs_status_string(status), why);
    }
}

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
    char key[64];

    snprintf(key, sizeof(key), "%s_%s", tl, field);
    ucp_get_version(&major, &minor, &release);
    mgi_ucp_config_default(ctx, config, key,
                           (!own_table || (major > 1) || (minor >= 17)) ?
                           key : field, value, why);
}

/* UCP's settings for ranks that span hosts (none on one host), each
 * unless the user set its UCX_ variable.
 * - A rank of another host that ends is noticed through UCP's keepalive
 *   (ranks of this host through the peer watch): at UCP's default round of
 *   20 s the others waited about that long for their calls to fail, at
 *   2 s they fail within about 2 s, for a few bytes a second an endpoint.
 * - Cross-host traffic leaves through the NIC nearest this process's GPU
 *   (the one current at context create), or the CPU it runs on without a
 *   GPU, in this host's graph (mgi_route.c says how): UCP's NET_DEVICES,
 *   which it reads at ucp_init only, names that NIC's UCX devices; a NIC
 *   without UCX devices (no PCI function in sysfs, as a veth) leaves UCX's
 *   choice. */
static void mgi_ucp_config_hosts(mgi_context_t *ctx, ucp_config_t *config,
                                 const char *rail_devs)
{
    char devs[MGI_NET_DEVS_MAX], why[256], bus_id[32] = "";
    int dev = -1, nic = -1;
    ucs_status_t status;

    if (!mgi_context_spans_hosts(ctx)) {
        return;   /* one host: no cross-host traffic */
    }
    mgi_ucp_config_default(ctx, config, "KEEPALIVE_INTERVAL",
                           "KEEPALIVE_INTERVAL", "2s",
                           "a rank of another host that ends is noticed at "
                           "UCP's own keepalive round");
    if (rail_devs != NULL) {
        (void)ucp_config_modify(config, "NET_DEVICES", rail_devs);
        return;   /* the rail's NIC, whose devices the context's took */
    }
    if (getenv("UCX_NET_DEVICES") != NULL) {
        ucs_debug("mgi context %p: cross-host traffic through "
                  "UCX_NET_DEVICES=%s as set", ctx, getenv("UCX_NET_DEVICES"));
        return;
    }
    if (mgi_machine_has_gpu()) {
        if ((cudaGetDevice(&dev) != cudaSuccess) ||
            (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), dev) !=
             cudaSuccess)) {
            (void)cudaGetLastError();
            bus_id[0] = '\0';
        }
    }
    if (mgi_route_net_devices((bus_id[0] != '\0') ? bus_id : NULL, dev,
                              NULL, devs, sizeof(devs), why,
                              sizeof(why), &ctx->host_graph, &nic) == 0) {
        ucs_info("mgi context %p: cross-host traffic through UCX's own "
                 "choice of devices: %s", ctx, why);
        return;
    }
    status = ucp_config_modify(config, "NET_DEVICES", devs);
    if (status != UCS_OK) {
        ucs_info("mgi context %p: NET_DEVICES=%s refused by UCP (%s): "
                 "cross-host traffic through UCX's own choice", ctx, devs,
                 ucs_status_string(status));
        return;
    }
    ctx->nic = nic;
    snprintf(ctx->net_devs, sizeof(ctx->net_devs), "%s", devs);
    ucs_info("mgi context %p: cross-host traffic through %s: "
             "NET_DEVICES=%s", ctx, why, devs);
}

/* The transports of the context's own UCP: the caller's (ucx_tls,
 * MGI_UCX_TLS) as they are; else UCX_TLS, with cuda_mgi added where GPU
 * endpoints of several processes of this host will need it (a GPU here,
 * another rank on this host) and the list names transports without it:
 * UCX_TLS is the application's choice for its own UCP, and without
 * cuda_mgi the movers' puts of GPU memory to the other processes have no
 * transport (mgi_ep_create refuses then). Where UCX_TLS is not set, there,
 * every transport but cuda_ipc: cuda_mgi moves the same memory, and a
 * cuda_ipc mapping outlives ucp_cleanup in UCX's process-wide cache, which
 * UCX 1.22 closes after the CUDA driver has shut down at exit (an error
 * line of cuDevicePrimaryCtxGetState in every process). NULL: UCP's own
 * choice. */
static const char *mgi_context_tls(mgi_context_t *ctx,
                                   const mgi_context_params_t *params,
                                   char *buf, size_t len)
{
    const char *env = getenv("UCX_TLS");

    if ((params->ucx_tls != NULL) && (params->ucx_tls[0] != '\0')) {
        return params->ucx_tls;
    }
    if ((ctx->host_peers == 0) || !mgi_machine_has_gpu()) {
        return NULL;
    }
    if ((env == NULL) || (env[0] == '\0')) {
        ucs_info("mgi context %p: transports ^cuda_ipc (UCX_TLS is not set; "
                 "cuda_mgi serves the GPU endpoints of the %d other "
                 "process(es) on this host)", ctx, ctx->host_peers);
        return "^cuda_ipc";
    }
    if ((env[0] == '^') || mgi_tls_names(env, "cuda_mgi") ||
        mgi_tls_names(env, "all")) {
        return NULL;
    }
    snprintf(buf, len, "%s,cuda_mgi", env);
    ucs_info("mgi context %p: transports %s: cuda_mgi added to UCX_TLS=%s "
             "for the GPU endpoints of the %d other process(es) on this "
             "host (MGI_UCX_TLS sets the context's own list)", ctx, buf, env,
             ctx->host_peers);
    return buf;
}

/* A UCP context and worker with the context's transports and settings:
 * the context's own (net_devs NULL: its NIC choice), or a rail's
 * (mgi_rail.c: net_devs its NIC's devices) */
ucs_status_t mgi_ucp_open(mgi_context_t *ctx, const char *net_devs,
                          ucp_context_h *ucp_p, ucp_worker_h *worker_p)
{
    ucp_params_t ucp_params;
    ucp_worker_params_t wparams;
    ucp_config_t *config;
    char tls_buf[512];
    const char *tls, *tls_in;
    ucs_status_t status;

    tls = mgi_context_tls(ctx, &ctx->params, tls_buf, sizeof(tls_buf));
    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) {
        return status;
    }
    if (tls != NULL) {
        status = ucp_config_modify(config, "TLS", tls);
        if (status != UCS_OK) {
            ucs_error("mgi context %p: transports \"%s\" (ucx_tls, "
                      "MGI_UCX_TLS, else UCX_TLS) refused by UCP: %s", ctx,
                      tls, ucs_status_string(status));
            ucp_config_release(config);
            return status;
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
    mgi_ucp_config_hosts(ctx, config, net_devs);
    memset(&ucp_params, 0, sizeof(ucp_params));
    ucp_params.field_mask        = UCP_PARAM_FIELD_FEATURES |
                                   UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    ucp_params.features          = UCP_FEATURE_RMA;
    ucp_params.mt_workers_shared = 1;
    status = ucp_init(&ucp_params, config, ucp_p);
    ucp_config_release(config);
    if (status != UCS_OK) {
        ucs_error("mgi context %p: ucp_init: %s", ctx,
                  ucs_status_string(status));
        return status;
    }

    /* the mover progresses the worker; channel creation unpacks rkeys on
     * the application's thread at the same time */
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_MULTI;
    status = ucp_worker_create(*ucp_p, &wparams, worker_p);
    if (status != UCS_OK) {
        ucs_error("mgi context %p: ucp_worker_create: %s", ctx,
                  ucs_status_string(status));
        ucp_cleanup(*ucp_p);
        return status;
    }
    return UCS_OK;
}

int mgi_ucp_has(ucp_context_h ucp, const char *tl, const char *dev)
{
    char *info = NULL, pat[MGI_NET_DEVS_MAX + 8], *p;
    size_t info_len = 0, plen;
    FILE *f;
    int found = 0;

    f = open_memstream(&info, &info_len);
    if (f == NULL) {
        return 1;   /* cannot tell: assume it is there */
    }
    ucp_context_print_info(ucp, f);
    fclose(f);
    /* resource lines name each one as " tl/device" */
    if (tl != NULL) {
        snprintf(pat, sizeof(pat), " %s/", tl);
    } else {
        snprintf(pat, sizeof(pat), "/%s", dev);
    }
    plen = strlen(pat);
    for (p = info; !found && (p != NULL) && ((p = strstr(p, pat)) != NULL);
         p += plen) {
        /* a device's whole name: "/eth1" is not "/eth10" */
        found = (tl != NULL) || (p[plen] == '\0') ||
                (strchr(MGI_DEV_NAME_CHARS, p[plen]) == NULL);
    }
    free(info);
    return found;
}
