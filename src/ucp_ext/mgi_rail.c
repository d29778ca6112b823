/**
 * Rails: the NIC of each endpoint's cross-host traffic.
 *
 * A context's UCP takes its network devices at ucp_init, and UCP takes one
 * RMA lane per endpoint, chosen at wire-up: one NIC for everything the
 * process sends to other hosts (the one nearest the GPU current at context
 * create, mgi_context.c). A process whose endpoints sit nearer other NICs
 * (GPUs under different PCIe switches) gets a rail for each such NIC: a
 * UCP context and worker of its own whose NET_DEVICES are that NIC's
 * (the same transports and settings as the context's). The endpoint's
 * receive ring is registered there too, its rkey travels beside the other
 * in the channel allgather, and the rail's worker address is exchanged at
 * the first channel create that sees a rank with rails not known yet.
 *
 * NICs are numbered per host in the order of the host's graph, so that
 * the same NIC of hosts alike has the same number: a rail of the fabric
 * (in a rail-optimized network NIC n of every host reaches NIC n of the
 * others through its own switch). An endpoint's puts to an endpoint of
 * another host whose NIC has its NIC's number go from the local worker on
 * that NIC (the context's or a rail's) to the remote one (the rank's or
 * its rail's); every other pair goes between the contexts' own workers,
 * as without rails. The lane's tail still goes through the context's own
 * endpoint: the mover flushes every link a flush put to before it
 * publishes tails (mgi_mover.c), so data is complete before its tail.
 * The mover progresses the rails' workers with its own.
 */
#include "mgi_int.h"
#include "mgi_bootstrap.h"

#include <ucs/sys/math.h>
#include <stdlib.h>
#include <string.h>

#define MGI_RAIL_ADDRS  (MGI_NICS_MAX + 1)  /* a rank's own + one per NIC */
/* a rank's packed rail addresses at most: a UCP worker address over a few
 * network devices takes hundreds of bytes */
#define MGI_RAILS_BLOB_MAX  (MGI_NICS_MAX * 65536)
/* a link that could not be made: not tried again, nor said again */
#define MGI_LINK_NONE       ((ucp_ep_h)(uintptr_t)1)

ucs_status_t mgi_rails_init(mgi_context_t *ctx, const char *addrs,
                            const uint64_t *lens, size_t stride)
{
    int r;

    if (!mgi_context_spans_hosts(ctx)) {
        return UCS_OK;
    }
    ctx->addrs       = calloc((size_t)ctx->size * MGI_RAIL_ADDRS,
                              sizeof(*ctx->addrs));
    ctx->rank_nrails = calloc(ctx->size, sizeof(*ctx->rank_nrails));
    ctx->links       = calloc((size_t)ctx->size * MGI_NICS_MAX,
                              sizeof(*ctx->links));
    if ((ctx->addrs == NULL) ||
        (ctx->rank_nrails == NULL) || (ctx->links == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    for (r = 0; r < ctx->size; ++r) {
        ctx->addrs[r * MGI_RAIL_ADDRS] = malloc(lens[r]);
        if (ctx->addrs[r * MGI_RAIL_ADDRS] == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        memcpy(ctx->addrs[r * MGI_RAIL_ADDRS], addrs + r * stride, lens[r]);
    }
    return UCS_OK;
}

/* The rail of NIC number nic, or NULL */
static mgi_rail_t *mgi_rail_find(mgi_context_t *ctx, int nic)
{
    unsigned i;

    for (i = 0; i < ctx->nrails; ++i) {
        if (ctx->rails[i].nic == nic) {
            return &ctx->rails[i];
        }
    }
    return NULL;
}

/* This process's worker on NIC number nic: the context's, a rail's, or
 * NULL where it has none there */
static ucp_worker_h mgi_rail_worker(mgi_context_t *ctx, int nic)
{
    mgi_rail_t *rail;

    if ((nic >= 0) && (nic == ctx->nic)) {
        return ctx->worker;
    }
    rail = mgi_rail_find(ctx, nic);
    return (rail != NULL) ? rail->worker : NULL;
}

/* Whether the rail's UCP has one of its devices (a topology file's dev=
 * may name one this host lacks, or one of no transport of UCX_TLS) */
static int mgi_rail_has_devs(const mgi_rail_t *rail)
{
    char devs[MGI_NET_DEVS_MAX], *dev, *save = NULL;
    int found = 0;

    snprintf(devs, sizeof(devs), "%s", rail->devs);
    for (dev = strtok_r(devs, ",", &save); (dev != NULL) && !found;
         dev = strtok_r(NULL, ",", &save)) {
        found = mgi_ucp_has(rail->ucp, NULL, dev);
    }
    return found;
}

static ucs_status_t mgi_rail_create(mgi_context_t *ctx, int nic,
                                    const char *devs, mgi_rail_t **rail_p)
{
    mgi_rail_t *rail;
    ucs_status_t status;

    /* room: one rail a NIC, and only NICs below MGI_NICS_MAX get one */
    rail      = &ctx->rails[ctx->nrails];
    rail->nic = nic;
    snprintf(rail->devs, sizeof(rail->devs), "%s", devs);
    status = mgi_ucp_open(ctx, rail->devs, &rail->ucp, &rail->worker);
    if (status != UCS_OK) {
        return status;
    }
    if (!mgi_rail_has_devs(rail)) {
        ucs_warn("mgi context %p: NIC %d's devices %s are none of UCX's "
                 "network devices here (UCX_TLS and the host's): no rail "
                 "there", ctx, nic, rail->devs);
        ucp_worker_destroy(rail->worker);
        ucp_cleanup(rail->ucp);
        return UCS_ERR_NO_DEVICE;
    }
    /* the mover progresses it from now on */
    __atomic_store_n(&ctx->nrails, ctx->nrails + 1, __ATOMIC_RELEASE);
    *rail_p = rail;
    return UCS_OK;
}

ucs_status_t mgi_rail_ep_nic(mgi_ep_t *ep, mgi_rail_t **rail_p)
{
    mgi_context_t *ctx = ep->ctx;
    char devs[MGI_NET_DEVS_MAX], why[256];
    mgi_rail_t *rail;
    ucs_status_t status;
    int nic;

    ep->nic = ctx->nic;
    *rail_p = NULL;
    if ((ctx->links == NULL) || (ctx->host_graph == NULL) ||
        (mgi_route_ep_net_devices(ctx, ep, devs, sizeof(devs), why,
                                  sizeof(why), &nic) == 0) ||
        (nic == ctx->nic)) {
        return UCS_OK;   /* the context's own NIC */
    }
    if ((nic >= MGI_NICS_MAX) || (ctx->nics_refused & (1u << nic))) {
        ucs_info("mgi ep %u: %s: no rail there (%s %d), cross-host "
                 "traffic through the context's NIC", ep->id, why,
                 (nic >= MGI_NICS_MAX) ? "rails are kept for NICs below" :
                 "refused before: NIC", (nic >= MGI_NICS_MAX) ?
                 MGI_NICS_MAX : nic);
        return UCS_OK;
    }
    rail = mgi_rail_find(ctx, nic);
    if (rail == NULL) {
        status = mgi_rail_create(ctx, nic, devs, &rail);
        if (status != UCS_OK) {
            ctx->nics_refused |= 1u << nic;
            ucs_warn("mgi ep %u: no rail of its own on %s: cross-host "
                     "traffic through the context's NET_DEVICES=%s", ep->id,
                     why, ctx->net_devs);
            return UCS_OK;
        }
    }
    ep->nic = nic;
    *rail_p = rail;
    ucs_info("mgi ep %u: cross-host traffic through %s: a rail of its own, "
             "NET_DEVICES=%s (the context's: %s)", ep->id, why, rail->devs,
             (ctx->net_devs[0] != '\0') ? ctx->net_devs : "UCX's choice");
    return UCS_OK;
}

/* ------------------------------------------------------------ exchange */

/* This rank's rails' addresses as [u32 nic][u32 len][bytes]..., into a
 * malloc'd *buf_p of *len_p bytes */
static ucs_status_t mgi_rails_pack(mgi_context_t *ctx, unsigned nrails,
                                   char **buf_p, uint64_t *len_p)
{
    ucp_worker_attr_t wattr;
    uint32_t hdr[2];
    size_t len = 0;
    char *buf = NULL, *p;
    ucs_status_t status;
    unsigned i;

    for (i = 0; i < nrails; ++i) {
        wattr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
        status = ucp_worker_query(ctx->rails[i].worker, &wattr);
        if (status != UCS_OK) {
            free(buf);
            return status;
        }
        p = realloc(buf, len + sizeof(hdr) + wattr.address_length);
        if (p == NULL) {
            ucp_worker_release_address(ctx->rails[i].worker, wattr.address);
            free(buf);
            return UCS_ERR_NO_MEMORY;
        }
        buf    = p;
        hdr[0] = ctx->rails[i].nic;
        hdr[1] = wattr.address_length;
        memcpy(buf + len, hdr, sizeof(hdr));
        memcpy(buf + len + sizeof(hdr), wattr.address, hdr[1]);
        len += sizeof(hdr) + hdr[1];
        ucp_worker_release_address(ctx->rails[i].worker, wattr.address);
    }
    *buf_p = buf;
    *len_p = len;
    return UCS_OK;
}

/* Rank r's packed rails into ctx->addrs; UCS_ERR_INVALID_PARAM where the
 * bytes do not parse */
static ucs_status_t mgi_rails_unpack(mgi_context_t *ctx, int r,
                                     const char *buf, uint64_t len,
                                     uint32_t nrails)
{
    uint32_t hdr[2], i;
    uint64_t off = 0;
    size_t k;

    for (i = 0; i < nrails; ++i) {
        if (len - off < sizeof(hdr)) {
            break;
        }
        memcpy(hdr, buf + off, sizeof(hdr));
        off += sizeof(hdr);
        if ((hdr[0] >= MGI_NICS_MAX) || (hdr[1] > len - off)) {
            break;
        }
        k = (size_t)r * MGI_RAIL_ADDRS + hdr[0] + 1;
        if (ctx->addrs[k] == NULL) {
            ctx->addrs[k] = malloc(hdr[1]);
            if (ctx->addrs[k] == NULL) {
                return UCS_ERR_NO_MEMORY;
            }
            memcpy(ctx->addrs[k], buf + off, hdr[1]);
        }
        off += hdr[1];
    }
    if (i < nrails) {
        ucs_error("mgi context %p: rank %d's rail addresses do not parse "
                  "(%u of %u)", ctx, r, i, nrails);
        return UCS_ERR_INVALID_PARAM;
    }
    ctx->rank_nrails[r] = nrails;
    return UCS_OK;
}

ucs_status_t mgi_rails_exchange(mgi_context_t *ctx, const uint32_t *nrails,
                                unsigned mine)
{
    uint64_t len = 0, max_len = 0, *lens;
    char *buf = NULL, *all = NULL;
    ucs_status_t status;
    size_t stride;
    int r, need = 0;

    if (ctx->links == NULL) {
        return UCS_OK;
    }
    for (r = 0; r < ctx->size; ++r) {
        need |= (nrails[r] != ctx->rank_nrails[r]);
    }
    if (!need) {
        return UCS_OK;   /* the same at every rank: all saw these counts */
    }
    lens = calloc(ctx->size, sizeof(*lens));
    if (lens == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    if (mgi_rails_pack(ctx, mine, &buf, &len) != UCS_OK) {
        len = 0;   /* said below by every rank: no rails of this one */
    }
    status = mgi_bootstrap_allgather(&ctx->bs, &len, lens, sizeof(len));
    if (status != UCS_OK) {
        goto out;
    }
    /* bounded before it sizes an allocation */
    for (r = 0; r < ctx->size; ++r) {
        if (lens[r] > MGI_RAILS_BLOB_MAX) {
            ucs_error("mgi context %p: rank %d's rail addresses have %llu "
                      "bytes, at most %d", ctx, r,
                      (unsigned long long)lens[r], MGI_RAILS_BLOB_MAX);
            status = UCS_ERR_INVALID_PARAM;
            goto out;
        }
        max_len = ucs_max(max_len, lens[r]);
    }
    stride = max_len + 1;
    all    = calloc(ctx->size + 1, stride);
    if (all == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    memcpy(all + (size_t)ctx->size * stride, buf, len);
    status = mgi_bootstrap_allgather(&ctx->bs, all + (size_t)ctx->size * stride,
                                     all, stride);
    for (r = 0; (status == UCS_OK) && (r < ctx->size); ++r) {
        status = mgi_rails_unpack(ctx, r, all + (size_t)r * stride, lens[r],
                                  (lens[r] > 0) ? nrails[r] : 0);
    }
out:
    free(all);
    free(buf);
    free(lens);
    return status;
}

/* ---------------------------------------------------------------- links */

/* UCP's notice that a link failed: its rank's, as the context's own
 * endpoint's */
static void mgi_rail_link_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    mgi_context_t *ctx = arg;
    size_t i, n = (size_t)ctx->size * MGI_NICS_MAX;

    for (i = 0; (i < n) && (ctx->links[i] != ep); ++i) {
    }
    mgi_context_rank_failed(ctx, (i < n) ? (int)(i % ctx->size) : ctx->size,
                            status);
}

/* The link to rank r through NIC number nic (created from this process's
 * worker there to rank r's there), or NULL where either has none or it
 * cannot be made (said once) */
static ucp_ep_h mgi_rail_link(mgi_context_t *ctx, int r, int nic,
                              int remote_rail)
{
    size_t k = (size_t)r * MGI_RAIL_ADDRS + (remote_rail ? nic + 1 : 0);
    ucp_ep_h *link = &ctx->links[(size_t)nic * ctx->size + r];
    ucp_ep_params_t ep_params;
    ucp_worker_h worker;
    ucs_status_t status;

    if (*link != NULL) {
        return (*link == MGI_LINK_NONE) ? NULL : *link;
    }
    worker = mgi_rail_worker(ctx, nic);
    if ((worker == NULL) || (ctx->addrs[k] == NULL)) {
        return NULL;
    }
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep_params.address         = (const ucp_address_t*)ctx->addrs[k];
    ep_params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    ep_params.err_handler.cb  = mgi_rail_link_failed;
    ep_params.err_handler.arg = ctx;
    status = ucp_ep_create(worker, &ep_params, link);
    if (status != UCS_OK) {
        *link = MGI_LINK_NONE;
        ucs_warn("mgi context %p: no link to rank %d through NIC %d (%s): "
                 "through the contexts' own NICs", ctx, r, nic,
                 ucs_status_string(status));
        return NULL;
    }
    ucs_debug("mgi context %p: link to rank %d through NIC %d", ctx, r, nic);
    return *link;
}

ucs_status_t mgi_rail_peer_learn(mgi_context_t *ctx, mgi_peer_ep_t *peer,
                                 int nic, int on_rail, const void *rkey_buf)
{
    ucp_rkey_h rkey;
    ucp_ep_h link;
    ucs_status_t status;

    if ((ctx->links == NULL) || (nic < 0) || (nic >= MGI_NICS_MAX) ||
        !ctx->peer_procs[peer->rank].other_host ||
        (peer->nic_rkey != NULL)) {
        return UCS_OK;
    }
    peer->nic = nic;
    if ((nic == ctx->nic) && !on_rail) {
        return UCS_OK;   /* the contexts' own workers: peers[] */
    }
    link = mgi_rail_link(ctx, peer->rank, nic, on_rail);
    if (link == NULL) {
        return UCS_OK;
    }
    status = ucp_ep_rkey_unpack(link, rkey_buf, &rkey);
    if (status != UCS_OK) {
        ucs_error("mgi context %p: rkey of a receive ring of rank %d on "
                  "NIC %d: %s", ctx, peer->rank, nic,
                  ucs_status_string(status));
        return status;
    }
    /* the mover reads it with acquire: the link is set before */
    __atomic_store_n(&peer->nic_rkey, rkey, __ATOMIC_RELEASE);
    return UCS_OK;
}

ucp_ep_h mgi_rail_put_ep(mgi_context_t *ctx, const mgi_ep_t *ep,
                         const mgi_peer_ep_t *peer, ucp_rkey_h *rkey_p,
                         int *flush_p)
{
    ucp_rkey_h rkey = __atomic_load_n(&peer->nic_rkey, __ATOMIC_ACQUIRE);

    if ((rkey == NULL) || (ep->nic != peer->nic)) {
        *rkey_p  = peer->rkey;
        *flush_p = peer->rank;
        return ctx->peers[peer->rank];
    }
    *rkey_p  = rkey;
    *flush_p = (peer->nic + 1) * ctx->size + peer->rank;
    return ctx->links[(size_t)peer->nic * ctx->size + peer->rank];
}

ucp_ep_h mgi_rail_flush_ep(mgi_context_t *ctx, int flush)
{
    return (flush < ctx->size) ? ctx->peers[flush] :
           ctx->links[flush - ctx->size];
}

void mgi_rails_disconnect(mgi_context_t *ctx, int apart)
{
    size_t i;

    for (i = 0; (ctx->links != NULL) &&
                (i < (size_t)ctx->size * MGI_NICS_MAX); ++i) {
        if (ctx->links[i] == MGI_LINK_NONE) {
            ctx->links[i] = NULL;
        } else if (ctx->links[i] != NULL) {
            /* links have peer error handling */
            mgi_context_ep_close(ctx, &ctx->links[i], (int)(i % ctx->size),
                                 apart, 1);
        }
    }
}

void mgi_rails_fini(mgi_context_t *ctx)
{
    unsigned i;

    for (i = 0; i < ctx->nrails; ++i) {
        ucp_worker_destroy(ctx->rails[i].worker);
        ucp_cleanup(ctx->rails[i].ucp);
    }
    ctx->nrails = 0;
    for (i = 0; (ctx->addrs != NULL) &&
                (i < (unsigned)ctx->size * MGI_RAIL_ADDRS); ++i) {
        free(ctx->addrs[i]);
    }
    free(ctx->addrs);
    free(ctx->rank_nrails);
    free(ctx->links);
    ctx->addrs       = NULL;
    ctx->rank_nrails = NULL;
    ctx->links       = NULL;
}
