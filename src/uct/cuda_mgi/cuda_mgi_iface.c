/**
 * cuda_mgi: MGI multi-GPU transport for UCX.
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_iface.h"
#include "cuda_mgi_ep.h"
#include "gig/gig.h"

#include <ucs/arch/cpu.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ucs/type/class.h>
#include <ucs/time/time.h>
#include <string.h>
#include <unistd.h>
#include <nvml.h>


static ucs_config_field_t uct_cuda_mgi_iface_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_cuda_mgi_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"MAX_POLL", "16",
     "Most copy completions picked up by one progress call.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, max_poll),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_STREAMS", "16",
     "CUDA streams for copies; each peer GPU gets its own stream (peers\n"
     "beyond this number share them). At most 32.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, max_streams),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_OUTSTANDING", "1024",
     "Most copies in flight on one interface. Further operations return\n"
     "UCS_ERR_NO_RESOURCE and may be queued as pending requests.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, max_outstanding),
     UCS_CONFIG_TYPE_UINT},

    {"MAX_SHORT", "16k",
     "Largest put/get served synchronously (put_short/get_short). UCX 1.13\n"
     "sends RMA up to its 16k zero-copy threshold as short/bcopy; keeping\n"
     "this at or above that threshold keeps CUDA source buffers away from\n"
     "host-side packing.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, max_short),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_BCOPY", "64k",
     "Largest buffered-copy put/get; size of the pinned host bounce buffer.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, max_bcopy),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"BW", "auto",
     "Bandwidth of the direct path. \"auto\": the active NVLinks (NVML) of\n"
     "GPU 0 at the rate one copy engine achieves (83 % of the links' rate,\n"
     "measured on H200), or its PCIe link if it has none.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, bandwidth),
     UCS_CONFIG_TYPE_BW},

    {"PATHS", "direct,host",
     "Paths a large put/get may be striped over, a comma-separated list of:\n"
     " direct - the copy engine between the two GPUs (NVLink or PCIe)\n"
     " host   - through pinned host memory: the sending GPU copies out over\n"
     "          its PCIe link, the peer GPU copies in over its own\n"
     " gpu    - through staging memory on the GPUs of UCX_CUDA_MGI_RELAY_GPUS\n"
     "Without \"direct\" every zero-copy operation takes the other paths\n"
     "alone (for testing them).",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, paths),
     UCS_CONFIG_TYPE_BITMAP(uct_cuda_mgi_path_kind_names)},

    {"MULTIPATH_THRESH", "16m",
     "Smallest put/get that is striped over more than the direct path; one\n"
     "with nothing else in flight is striped from 4 times it. Below that\n"
     "the staging overhead costs more than the extra bandwidth brings\n"
     "(measured with bench/perftest_compare.sh and Open MPI on H200).",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, multipath_thresh),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"CHUNK_SIZE", "2m",
     "Pipeline chunk of the staged paths: the size of one bounce buffer\n"
     "(2m with 16 buffers measured best on H200: bench/multipath_sweep.sh).",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, chunk_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"STAGE_BUFS", "16",
     "Bounce buffers per staged path and direction (2..64); staging memory\n"
     "per peer GPU is 2 x STAGE_BUFS x CHUNK_SIZE per path, allocated once.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, stage_bufs),
     UCS_CONFIG_TYPE_UINT},

    {"HOST_BW", "auto",
     "Starting estimate of the host path's bandwidth. \"auto\": the\n"
     "planner's, or from the GPU's PCIe link (NVML; Gen5 x16 = 55 GB/s).",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, host_bandwidth),
     UCS_CONFIG_TYPE_BW},

    {"RELAY_GPUS", "",
     "CUDA device ordinals (as this process sees them) to relay through\n"
     "when PATHS has \"gpu\". Useful on direct NVLink meshes; on an\n"
     "NVSwitch a relay adds no bandwidth.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, relays),
     UCS_CONFIG_TYPE_STRING_ARRAY},

    {"TOPO_FILE", "",
     "A topology file (written by mgi_topo --write, and editable) to plan\n"
     "the paths with instead of discovering this machine: forces the path\n"
     "kinds it shows, e.g. a relay through a GPU on an NVSwitch host.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, topo_file),
     UCS_CONFIG_TYPE_STRING},

    {"BATCH", "y",
     "While copies are in flight, collect the next direct copies (up to 32)\n"
     "and post them at the next progress, flush or fence, up to 8 a\n"
     "cuMemcpyBatchAsync call: a copy costs the copy engine about 2.5 us\n"
     "besides its bytes when posted alone. Needs a CUDA 12.8 driver or later\n"
     "(else the copies go one by one); an idle interface posts at once. A\n"
     "copy that waits starts only when the caller progresses, flushes or\n"
     "fences: set n for a caller that posts many and progresses seldom.",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, batch),
     UCS_CONFIG_TYPE_BOOL},

    {"LAT", "4us",
     "Latency reported to UCX: a copy-engine launch plus its completion\n"
     "(measured with ucx_perftest -t put_lat on H200).",
     ucs_offsetof(uct_cuda_mgi_iface_config_t, latency),
     UCS_CONFIG_TYPE_TIME},

    {NULL}
};


static UCS_CLASS_DECLARE_DELETE_FUNC(uct_cuda_mgi_iface_t, uct_iface_t);


/* What one copy-engine stream achieves of the links' rate: 397 GB/s of the
 * 478 GB/s of NV18 on H200 (cuMemcpyDtoDAsync, 1 GiB) */
#define UCT_CUDA_MGI_NVLINK_EFFICIENCY 0.83

/* PCIe: the planner's table (measured D2H on H200 for Gen5 x16) */
static double uct_cuda_mgi_pcie_bw(unsigned gen, unsigned width)
{
    return gig_cap_pcie((int)gen, width) * 1e9;
}


/* NVLink generation of a GPU generation (compute capability major) */
static int uct_cuda_mgi_nvlink_gen(int cc_major)
{
    switch (cc_major) {
    case 6:
        return GIG_NVLINK_V1;
    case 7:
        return GIG_NVLINK_V2;
    case 8:
        return GIG_NVLINK_V3;
    case 9:
        return GIG_NVLINK_V4;
    default:
        return GIG_NVLINK_V5;
    }
}


static double uct_cuda_mgi_iface_auto_bw(uct_cuda_mgi_iface_t *iface,
                                         double *pcie_bw_p)
{
    static double bw = 0, pcie_bw = 0;
    unsigned links = 0, link, gen = 0, width = 0;
    nvmlEnableState_t active;
    nvmlDevice_t nvml_dev;
    CUdevice cu_dev;
    int cc_major = 0;

    if (bw != 0) {
        *pcie_bw_p = pcie_bw;
        return bw;
    }

    if ((cuDeviceGet(&cu_dev, 0) != CUDA_SUCCESS) ||
        (cuDeviceGetAttribute(&cc_major,
                              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              cu_dev) != CUDA_SUCCESS)) {
        cc_major = 0;
    }

    if (nvmlInit_v2() == NVML_SUCCESS) {
        if (nvmlDeviceGetHandleByIndex(0, &nvml_dev) == NVML_SUCCESS) {
            for (link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
                if ((nvmlDeviceGetNvLinkState(nvml_dev, link, &active) ==
                     NVML_SUCCESS) && (active == NVML_FEATURE_ENABLED)) {
                    ++links;
                }
            }
            if (nvmlDeviceGetCurrPcieLinkGeneration(nvml_dev, &gen) !=
                NVML_SUCCESS) {
                gen = 0;
            }
            if (nvmlDeviceGetCurrPcieLinkWidth(nvml_dev, &width) !=
                NVML_SUCCESS) {
                width = 0;
            }
        }
        nvmlShutdown();
    }

    pcie_bw = uct_cuda_mgi_pcie_bw(gen, width);
    bw      = (links > 0) ?
              gig_cap_nvlink(uct_cuda_mgi_nvlink_gen(cc_major), links) * 1e9 *
              UCT_CUDA_MGI_NVLINK_EFFICIENCY :
              pcie_bw;
    *pcie_bw_p = pcie_bw;

    ucs_debug("cuda_mgi iface %p: bandwidth %.1f GB/s (%u NVLinks, PCIe "
              "gen %u x%u, cc %d)", iface, bw / 1e9, links, gen, width,
              cc_major);
    return bw;
}


static ucs_status_t
uct_cuda_mgi_iface_get_device_address(uct_iface_t *tl_iface,
                                      uct_device_addr_t *addr)
{
    *(uint64_t*)addr = ucs_get_system_id();
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_iface_get_address(uct_iface_h tl_iface,
                               uct_iface_addr_t *iface_addr)
{
    *(pid_t*)iface_addr = getpid();
    return UCS_OK;
}


/* GPUs of other processes on this host; a process's own memory is
 * cuda_copy's.  NULL: reachable, else why not. */
static const char *
uct_cuda_mgi_iface_unreachable(const uct_device_addr_t *dev_addr,
                               const uct_iface_addr_t *iface_addr)
{
    if (ucs_get_system_id() != *(const uint64_t*)dev_addr) {
        return "another host";
    }
    if (getpid() == *(const pid_t*)iface_addr) {
        return "same process";
    }
    return NULL;
}


#if UCT_CUDA_MGI_HAVE_REACHABLE_V2
static int
uct_cuda_mgi_iface_is_reachable_v2(const uct_iface_h tl_iface,
                                   const uct_iface_is_reachable_params_t *params)
{
    const char *why;

    if (!uct_iface_is_reachable_params_addrs_valid(params)) {
        return 0;
    }

    why = uct_cuda_mgi_iface_unreachable(params->device_addr,
                                         params->iface_addr);
    if (why != NULL) {
        uct_iface_fill_info_str_buf(params, why);
        return 0;
    }
    return uct_iface_scope_is_reachable(tl_iface, params);
}
#else
static int
uct_cuda_mgi_iface_is_reachable(const uct_iface_h tl_iface,
                                const uct_device_addr_t *dev_addr,
                                const uct_iface_addr_t *iface_addr)
{
    return uct_cuda_mgi_iface_unreachable(dev_addr, iface_addr) == NULL;
}
#endif


#if UCT_CUDA_MGI_HAVE_EP_IS_CONNECTED
static int uct_cuda_mgi_ep_is_connected(const uct_ep_h tl_ep,
                                        const uct_ep_is_connected_params_t
                                        *params)
{
    const uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);

    return uct_base_ep_is_connected(tl_ep, params) &&
           (!(params->field_mask & UCT_EP_IS_CONNECTED_FIELD_IFACE_ADDR) ||
            (ep->remote_pid == *(const pid_t*)params->iface_addr));
}
#endif


/* What UCP should expect of a large transfer: the direct path plus the
 * staged paths the configuration allows (the striping engine adds them
 * above UCX_CUDA_MGI_MULTIPATH_THRESH) */
static double uct_cuda_mgi_iface_total_bw(uct_cuda_mgi_iface_t *iface)
{
    double bw = 0;

    if (iface->config.paths & UCS_BIT(UCT_CUDA_MGI_PATH_DIRECT)) {
        bw += iface->config.bandwidth;
    }
    if (iface->config.paths & UCS_BIT(UCT_CUDA_MGI_PATH_HOST)) {
        bw += iface->config.host_bandwidth;
    }
    if (iface->config.paths & UCS_BIT(UCT_CUDA_MGI_PATH_GPU)) {
        bw += iface->config.num_relays * iface->config.bandwidth;
    }
    return bw;
}


static ucs_status_t
uct_cuda_mgi_iface_query(uct_iface_h tl_iface, uct_iface_attr_t *iface_attr)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_cuda_mgi_iface_t);

    uct_base_iface_query(&iface->super, iface_attr);

    iface_attr->iface_addr_len          = sizeof(pid_t);
    iface_attr->device_addr_len         = sizeof(uint64_t);
    iface_attr->ep_addr_len             = 0;
    iface_attr->max_conn_priv           = 0;
    iface_attr->cap.flags               = UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                                          UCT_IFACE_FLAG_EP_CHECK               |
                                          UCT_IFACE_FLAG_CONNECT_TO_IFACE       |
                                          UCT_IFACE_FLAG_PENDING                |
                                          UCT_IFACE_FLAG_PUT_SHORT              |
                                          UCT_IFACE_FLAG_PUT_BCOPY              |
                                          UCT_IFACE_FLAG_PUT_ZCOPY              |
                                          UCT_IFACE_FLAG_GET_SHORT              |
                                          UCT_IFACE_FLAG_GET_BCOPY              |
                                          UCT_IFACE_FLAG_GET_ZCOPY;
    iface_attr->cap.event_flags         = 0;

    iface_attr->cap.put.max_short       = iface->config.max_short;
    iface_attr->cap.put.max_bcopy       = iface->config.max_bcopy;
    iface_attr->cap.put.min_zcopy       = 0;
    iface_attr->cap.put.max_zcopy       = SIZE_MAX;
    iface_attr->cap.put.opt_zcopy_align = 1;
    iface_attr->cap.put.align_mtu       = 1;
    iface_attr->cap.put.max_iov         = 1;

    iface_attr->cap.get.max_short       = iface->config.max_short;
    iface_attr->cap.get.max_bcopy       = iface->config.max_bcopy;
    iface_attr->cap.get.min_zcopy       = 0;
    iface_attr->cap.get.max_zcopy       = SIZE_MAX;
    iface_attr->cap.get.opt_zcopy_align = 1;
    iface_attr->cap.get.align_mtu       = 1;
    iface_attr->cap.get.max_iov         = 1;

    iface_attr->latency                 = ucs_linear_func_make(
                                                  iface->config.latency, 0);
    iface_attr->bandwidth.dedicated     = 0;
    iface_attr->bandwidth.shared        = uct_cuda_mgi_iface_total_bw(iface);
    iface_attr->overhead                = 0;
    iface_attr->priority                = 0;
    return UCS_OK;
}


int uct_cuda_mgi_iface_has_resources(uct_cuda_mgi_iface_t *iface)
{
    return iface->outstanding < iface->config.max_outstanding;
}


/* Copies on several streams (or striped over several paths) complete in
 * any order: operations after a fence wait (UCS_ERR_NO_RESOURCE, then
 * pending; uct_cuda_mgi_ep_fences_passed) until every copy before it
 * completed */
ucs_status_t uct_cuda_mgi_iface_fence(uct_iface_h tl_iface, unsigned flags)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_cuda_mgi_iface_t);

    uct_cuda_mgi_iface_post_waiting(iface);
    iface->fenced = (iface->outstanding > 0);
    UCT_TL_IFACE_STAT_FENCE(&iface->super);
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_iface_flush(uct_iface_h tl_iface, unsigned flags,
                         uct_completion_t *comp)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_cuda_mgi_iface_t);

    if (comp != NULL) {
        return UCS_ERR_UNSUPPORTED;
    }

    uct_cuda_mgi_iface_post_waiting(iface);

    if (ucs_queue_is_empty(&iface->outstanding_q) &&
        ucs_queue_is_empty(&iface->pending_q)) {
        UCT_TL_IFACE_STAT_FLUSH(&iface->super);
        return UCS_OK;
    }

    UCT_TL_IFACE_STAT_FLUSH_WAIT(&iface->super);
    return UCS_INPROGRESS;
}


/* Whether every part of desc has landed; notes when each part was first
 * seen done, for the striping engine's rates. *now: this progress call's
 * time, read at its first landed part (negative until then): the parts
 * one call sees landed all landed by then, and the rates take no sample
 * from the nanoseconds between two reads of the clock */
static CUresult uct_cuda_mgi_desc_query(uct_cuda_mgi_event_desc_t *desc,
                                        double *now)
{
    unsigned all = UCS_MASK(desc->num_events);
    CUresult cu_err;
    unsigned i;

    for (i = 0; i < desc->num_events; ++i) {
        if (desc->done_mask & UCS_BIT(i)) {
            continue;
        }
        cu_err = cuEventQuery(desc->event[i]);
        if (cu_err == CUDA_ERROR_NOT_READY) {
            continue;
        } else if (cu_err != CUDA_SUCCESS) {
            return cu_err;
        }
        desc->done_mask |= UCS_BIT(i);
        if (desc->stripe.route != NULL) {
            if (*now < 0) {
                *now = ucs_time_to_sec(ucs_get_time());
            }
            uct_cuda_mgi_stripe_part_done(&desc->stripe, i, *now);
        }
    }

    return (desc->done_mask == all) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}


/* The copies in flight, oldest first. A stream completes its work in
 * order, so behind a copy that is not done, later single copies of its
 * stream are not asked (cuEventQuery is a driver call each: asking every
 * copy in flight took a busy mover's progress calls 17 us on H200). */
static unsigned uct_cuda_mgi_iface_poll_events(uct_cuda_mgi_iface_t *iface)
{
    uint32_t busy = 0;   /* streams with a copy not done yet */
    double now    = -1;  /* uct_cuda_mgi_desc_query */
    uct_cuda_mgi_event_desc_t *desc;
    ucs_queue_iter_t iter;
    unsigned count = 0;
    CUresult cu_err;

    UCS_STATIC_ASSERT(UCT_CUDA_MGI_MAX_STREAMS <= 32);

    uct_cuda_mgi_iface_post_due(iface);

    ucs_queue_for_each_safe(desc, iter, &iface->outstanding_q, queue) {
        /* the event of a copy not posted yet would read as done */
        if (desc->waiting || (desc->stream_bit & busy)) {
            continue;
        }
        cu_err = uct_cuda_mgi_desc_query(desc, &now);
        if (cu_err == CUDA_ERROR_NOT_READY) {
            busy |= desc->stream_bit;
            continue;
        }

        ucs_queue_del_iter(&iface->outstanding_q, iter);
        --iface->outstanding;
        if (desc->stripe.route != NULL) {
            uct_cuda_mgi_stripe_done(iface, &desc->stripe);
        }
        if (cu_err != CUDA_SUCCESS) {
            ucs_error("cuda_mgi iface %p: copy to/from pid %d failed: %s",
                      iface, desc->mapping->pid,
                      uct_cuda_mgi_cu_error(cu_err));
        }
        uct_cuda_mgi_ipc_unmap(desc->mapping);
        uct_cuda_mgi_ep_op_done(desc->ep, desc->comp,
                                (cu_err == CUDA_SUCCESS) ? desc->status :
                                                           UCS_ERR_IO_ERROR);
        ucs_mpool_put(desc);

        if (++count >= iface->config.max_poll) {
            break;
        }
    }

    if (count > 0) {
        uct_cuda_mgi_iface_post_due(iface);
    }
    return count;
}


static unsigned uct_cuda_mgi_iface_progress(uct_iface_h tl_iface)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_pending_priv_t *priv;
    unsigned count;

    count = uct_cuda_mgi_iface_poll_events(iface);
    uct_pending_queue_dispatch(priv, &iface->pending_q,
                               uct_cuda_mgi_iface_has_resources(iface));
    return count;
}


static uct_iface_ops_t uct_cuda_mgi_iface_ops = {
    .ep_put_short             = uct_cuda_mgi_ep_put_short,
    .ep_put_bcopy             = uct_cuda_mgi_ep_put_bcopy,
    .ep_put_zcopy             = uct_cuda_mgi_ep_put_zcopy,
    .ep_get_short             = uct_cuda_mgi_ep_get_short,
    .ep_get_bcopy             = uct_cuda_mgi_ep_get_bcopy,
    .ep_get_zcopy             = uct_cuda_mgi_ep_get_zcopy,
    .ep_pending_add           = uct_cuda_mgi_ep_pending_add,
    .ep_pending_purge         = uct_cuda_mgi_ep_pending_purge,
    .ep_flush                 = uct_cuda_mgi_ep_flush,
    .ep_fence                 = uct_cuda_mgi_ep_fence,
    .ep_check                 = uct_cuda_mgi_ep_check,
    .ep_create                = UCS_CLASS_NEW_FUNC_NAME(uct_cuda_mgi_ep_t),
    .ep_destroy               = UCS_CLASS_DELETE_FUNC_NAME(uct_cuda_mgi_ep_t),
    .iface_flush              = uct_cuda_mgi_iface_flush,
    .iface_fence              = uct_cuda_mgi_iface_fence,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_cuda_mgi_iface_progress,
    .iface_close              = UCS_CLASS_DELETE_FUNC_NAME(uct_cuda_mgi_iface_t),
    .iface_query              = uct_cuda_mgi_iface_query,
    .iface_get_device_address = uct_cuda_mgi_iface_get_device_address,
    .iface_get_address        = uct_cuda_mgi_iface_get_address,
#if UCT_CUDA_MGI_HAVE_REACHABLE_V2
    .iface_is_reachable       = uct_base_iface_is_reachable,
#else
    .iface_is_reachable       = uct_cuda_mgi_iface_is_reachable,
#endif
};


static uct_iface_internal_ops_t uct_cuda_mgi_iface_internal_ops = {
#if UCT_CUDA_MGI_HAVE_IFACE_QUERY_V2
    .iface_query_v2         = uct_iface_base_query_v2,
#endif
    .iface_estimate_perf    = uct_base_iface_estimate_perf,
    .iface_vfs_refresh      = (uct_iface_vfs_refresh_func_t)ucs_empty_function,
    .ep_query               = (uct_ep_query_func_t)
                              ucs_empty_function_return_unsupported,
    .ep_invalidate          = (uct_ep_invalidate_func_t)
                              ucs_empty_function_return_unsupported,
#if UCT_CUDA_MGI_HAVE_EP_CONNECT_TO_EP_V2
    .ep_connect_to_ep_v2    = (uct_ep_connect_to_ep_v2_func_t)
                              ucs_empty_function_return_unsupported,
#endif
#if UCT_CUDA_MGI_HAVE_REACHABLE_V2
    .iface_is_reachable_v2  = uct_cuda_mgi_iface_is_reachable_v2,
#endif
#if UCT_CUDA_MGI_HAVE_EP_IS_CONNECTED
    .ep_is_connected        = uct_cuda_mgi_ep_is_connected,
#endif
#if UCT_CUDA_MGI_HAVE_EP_GET_DEVICE_EP
    .ep_get_device_ep       = (uct_ep_get_device_ep_func_t)
                              ucs_empty_function_return_unsupported,
#endif
#if UCT_CUDA_MGI_HAVE_EP_PUT_SGL_ZCOPY
    .ep_put_sgl_zcopy       = (uct_ep_put_sgl_zcopy_func_t)
                              ucs_empty_function_return_unsupported,
#endif
};


static void uct_cuda_mgi_event_desc_init(ucs_mpool_t *mp, void *obj,
                                         void *chunk)
{
    uct_cuda_mgi_event_desc_t *desc = obj;
    unsigned i;

    memset(desc, 0, sizeof(*desc));
    for (i = 0; i < UCT_CUDA_MGI_MAX_PATHS; ++i) {
        UCT_CUDA_MGI_CU_LOG_ERR(cuEventCreate(&desc->event[i],
                                               CU_EVENT_DISABLE_TIMING));
    }
}


static void uct_cuda_mgi_event_desc_cleanup(ucs_mpool_t *mp, void *obj)
{
    uct_cuda_mgi_event_desc_t *desc = obj;
    uct_cuda_mgi_iface_t *iface     = ucs_container_of(mp,
                                                       uct_cuda_mgi_iface_t,
                                                       event_mp);
    CUcontext ctx;
    unsigned i;

    if ((cuCtxGetCurrent(&ctx) == CUDA_SUCCESS) &&
        (ctx == iface->cuda_context)) {
        for (i = 0; i < UCT_CUDA_MGI_MAX_PATHS; ++i) {
            UCT_CUDA_MGI_CU_LOG_ERR(cuEventDestroy(desc->event[i]));
        }
    }
}


static ucs_mpool_ops_t uct_cuda_mgi_event_mpool_ops = {
    .chunk_alloc   = ucs_mpool_chunk_malloc,
    .chunk_release = ucs_mpool_chunk_free,
    .obj_init      = uct_cuda_mgi_event_desc_init,
    .obj_cleanup   = uct_cuda_mgi_event_desc_cleanup,
    .obj_str       = NULL
};


/* Streams, the bounce buffer and the events belong to the CUDA context that
 * is current at the first operation, as in UCX's cuda_ipc. */
/* cuMemcpyBatchAsync of CUDA 12.8 (its signature with fail_idx), when
 * UCX_CUDA_MGI_BATCH is on and the driver has it */
static void uct_cuda_mgi_iface_batch_init(uct_cuda_mgi_iface_t *iface)
{
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void *fn                             = NULL;

    iface->post.func = NULL;
    if (!iface->config.batch) {
        return;
    }

    if ((cuGetProcAddress("cuMemcpyBatchAsync", &fn, 12080,
                          CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
         CUDA_SUCCESS) || (found != CU_GET_PROC_ADDRESS_SUCCESS) ||
        (fn == NULL)) {
        ucs_debug("cuda_mgi iface %p: the driver has no cuMemcpyBatchAsync; "
                  "copies are posted one by one", iface);
        return;
    }
    iface->post.func = (uct_cuda_mgi_memcpy_batch_func_t)fn;
}


/* Posting a step of waiting copy k returned cu_err: on failure its
 * operation completes with UCS_ERR_IO_ERROR */
static void uct_cuda_mgi_post_failed(uct_cuda_mgi_iface_t *iface, unsigned k,
                                    const char *what, CUresult cu_err)
{
    if (cu_err == CUDA_SUCCESS) {
        return;
    }
    ucs_error("cuda_mgi iface %p: %s of a copy of %zu bytes could not be "
              "posted: %s", iface, what, iface->post.size[k],
              uct_cuda_mgi_cu_error(cu_err));
    iface->post.desc[k]->status = UCS_ERR_IO_ERROR;
}


/* Post the copies that wait, in their order: runs of one stream in one
 * cuMemcpyBatchAsync, then each copy's event. A batch the driver refuses
 * goes one by one (a copy it had started is only done again); a copy or
 * event that cannot be posted completes its operation with an error. */
void uct_cuda_mgi_iface_post(uct_cuda_mgi_iface_t *iface)
{
    CUmemcpyAttributes attr;
    size_t attr_idx = 0, fail_idx = 0;
    unsigned i, j, k;
    CUresult cu_err;

    memset(&attr, 0, sizeof(attr));
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    for (i = 0; i < iface->post.count; i = j) {
        for (j = i + 1; (j < iface->post.count) &&
                        (iface->post.stream[j] == iface->post.stream[i]) &&
                        (j - i < UCT_CUDA_MGI_BATCH_PART);
             ++j) {
        }

        cu_err = CUDA_ERROR_NOT_SUPPORTED;
        if (j - i > 1) {
            cu_err = iface->post.func(&iface->post.dst[i],
                                      &iface->post.src[i],
                                      &iface->post.size[i], j - i, &attr,
                                      &attr_idx, 1, &fail_idx,
                                      iface->post.stream[i]);
            if (cu_err == CUDA_SUCCESS) {
                ++iface->post.batches;
                iface->post.batched += j - i;
            } else {
                ucs_debug("cuda_mgi iface %p: a batch of %u copies was "
                          "refused (%s at copy %zu); they go one by one",
                          iface, j - i, uct_cuda_mgi_cu_error(cu_err),
                          fail_idx);
            }
        }

        for (k = i; k < j; ++k) {
            if (cu_err != CUDA_SUCCESS) {
                uct_cuda_mgi_post_failed(iface, k, "copy",
                        cuMemcpyDtoDAsync(iface->post.dst[k],
                                          iface->post.src[k],
                                          iface->post.size[k],
                                          iface->post.stream[k]));
            }
            uct_cuda_mgi_post_failed(iface, k, "completion event",
                    cuEventRecord(iface->post.desc[k]->event[0],
                                  iface->post.stream[k]));
            iface->post.desc[k]->waiting = 0;
        }
    }
    iface->post.count = 0;
}


ucs_status_t uct_cuda_mgi_iface_init_cuda(uct_cuda_mgi_iface_t *iface)
{
    ucs_status_t status;
    unsigned i;

    if (ucs_likely(iface->streams_initialized)) {
        return UCS_OK;
    }

    if ((cuCtxGetCurrent(&iface->cuda_context) != CUDA_SUCCESS) ||
        (iface->cuda_context == NULL)) {
        ucs_error("cuda_mgi iface %p: no current CUDA context; select the "
                  "GPU (cudaSetDevice) before communicating", iface);
        return UCS_ERR_IO_ERROR;
    }

    for (i = 0; i < iface->config.max_streams; ++i) {
        status = UCT_CUDA_MGI_CU_LOG_ERR(
                cuStreamCreate(&iface->streams[i], CU_STREAM_NON_BLOCKING));
        if (status != UCS_OK) {
            goto err_destroy_streams;
        }
    }

    status = UCT_CUDA_MGI_CU_LOG_ERR(
            cuStreamCreate(&iface->sync_stream, CU_STREAM_NON_BLOCKING));
    if (status != UCS_OK) {
        goto err_destroy_streams;
    }

    status = UCT_CUDA_MGI_CU_LOG_ERR(
            cuMemHostAlloc(&iface->bounce, iface->config.max_bcopy,
                           CU_MEMHOSTALLOC_PORTABLE));
    if (status != UCS_OK) {
        goto err_destroy_sync;
    }

    status = uct_cuda_mgi_stripe_init(iface);
    if (status != UCS_OK) {
        goto err_free_bounce;
    }

    uct_cuda_mgi_iface_batch_init(iface);
    iface->streams_initialized = 1;
    return UCS_OK;

err_free_bounce:
    cuMemFreeHost(iface->bounce);
err_destroy_sync:
    cuStreamDestroy(iface->sync_stream);
err_destroy_streams:
    while (i-- > 0) {
        cuStreamDestroy(iface->streams[i]);
    }
    return status;
}


/* The peer GPU's place in peer_uuid[] (a new one gets the next), or with
 * more peers than places a hash onto them */
static unsigned uct_cuda_mgi_iface_peer_slot(uct_cuda_mgi_iface_t *iface,
                                             const CUuuid *peer_uuid)
{
    unsigned i;

    for (i = 0; i < iface->num_peers; ++i) {
        if (!memcmp(&iface->peer_uuid[i], peer_uuid, sizeof(*peer_uuid))) {
            return i;
        }
    }

    if (iface->num_peers < UCT_CUDA_MGI_MAX_STREAMS) {
        iface->peer_uuid[iface->num_peers] = *peer_uuid;
        return iface->num_peers++;
    }

    return peer_uuid->bytes[0] % UCT_CUDA_MGI_MAX_STREAMS;
}


/* The index in streams[] of the copies to or from a peer GPU: each peer
 * has one stream (peers beyond MAX_STREAMS share), so a peer's direct
 * copies run in the order they were posted */
unsigned uct_cuda_mgi_iface_peer_stream(uct_cuda_mgi_iface_t *iface,
                                        const CUuuid *peer_uuid)
{
    return uct_cuda_mgi_iface_peer_slot(iface, peer_uuid) %
           iface->config.max_streams;
}


static UCS_CLASS_INIT_FUNC(uct_cuda_mgi_iface_t, uct_md_h md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    uct_cuda_mgi_iface_config_t *config =
            ucs_derived_of(tl_config, uct_cuda_mgi_iface_config_t);
    double auto_bw, pcie_bw;
    ucs_status_t status;
    unsigned i;

    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &uct_cuda_mgi_iface_ops,
                              &uct_cuda_mgi_iface_internal_ops, md, worker, params,
                              tl_config UCS_STATS_ARG(params->stats_root)
                              UCS_STATS_ARG(UCT_CUDA_MGI_TL_NAME));

    if (strncmp(params->mode.device.dev_name, UCT_CUDA_MGI_DEV_NAME,
                strlen(UCT_CUDA_MGI_DEV_NAME)) != 0) {
        ucs_error("cuda_mgi: no device \"%s\" (the device is \"%s\")",
                  params->mode.device.dev_name, UCT_CUDA_MGI_DEV_NAME);
        return UCS_ERR_NO_DEVICE;
    }

    status = uct_cuda_mgi_iface_config_check(config);
    if (status != UCS_OK) {
        return status;
    }

    for (i = 0; i < config->relays.count; ++i) {
        char *end;
        long ordinal = strtol(config->relays.names[i], &end, 10);
        if ((*end != '\0') || (ordinal < 0) ||
            (ordinal >= UCT_CUDA_MGI_MAX_GPUS)) {
            ucs_error("cuda_mgi: UCX_CUDA_MGI_RELAY_GPUS: \"%s\" is not a "
                      "CUDA device ordinal", config->relays.names[i]);
            return UCS_ERR_INVALID_PARAM;
        }
        self->config.relays[i] = (int)ordinal;
    }
    self->config.num_relays = config->relays.count;

    self->config.max_poll        = config->max_poll;
    self->config.max_streams     = config->max_streams;
    self->config.max_outstanding = config->max_outstanding;
    self->config.max_short       = config->max_short;
    self->config.max_bcopy       = config->max_bcopy;
    self->config.latency         = config->latency;
    self->config.paths            = config->paths;
    self->config.multipath_thresh = config->multipath_thresh;
    self->config.chunk_size       = config->chunk_size;
    self->config.stage_bufs       = config->stage_bufs;
    self->config.batch            = config->batch;
    auto_bw                       = uct_cuda_mgi_iface_auto_bw(self, &pcie_bw);
    self->config.bandwidth        = UCT_CUDA_MGI_CONFIG_IS_AUTO(config->bandwidth) ?
                                    auto_bw : config->bandwidth;
    self->config.host_bandwidth_auto =
            UCT_CUDA_MGI_CONFIG_IS_AUTO(config->host_bandwidth);
    self->config.host_bandwidth   = self->config.host_bandwidth_auto ?
                                    pcie_bw : config->host_bandwidth;
    strcpy(self->config.topo_file, config->topo_file);

    status = uct_cuda_mgi_mpool_init(&self->event_mp,
                                     sizeof(uct_cuda_mgi_event_desc_t), 128,
                                     &uct_cuda_mgi_event_mpool_ops,
                                     "cuda_mgi_event_desc");
    if (status != UCS_OK) {
        ucs_error("cuda_mgi: failed to create the event pool: %s",
                  ucs_status_string(status));
        return status;
    }

    self->outstanding         = 0;
    self->streams_initialized = 0;
    self->cuda_context        = NULL;
    self->bounce              = NULL;
    self->num_peers           = 0;
    self->fenced              = 0;
    memset(&self->post, 0, sizeof(self->post));
    ucs_queue_head_init(&self->outstanding_q);
    ucs_queue_head_init(&self->pending_q);
    ucs_debug("cuda_mgi iface %p: created (bandwidth %.1f GB/s)", self,
              self->config.bandwidth / 1e9);
    return UCS_OK;
}


static UCS_CLASS_CLEANUP_FUNC(uct_cuda_mgi_iface_t)
{
    CUcontext ctx;
    unsigned i;

    uct_base_iface_progress_disable(&self->super.super,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    uct_cuda_mgi_iface_post_waiting(self);
    if (!ucs_queue_is_empty(&self->outstanding_q)) {
        ucs_warn("cuda_mgi iface %p: closed with %u copies in flight", self,
                 self->outstanding);
    }
    if (self->post.batches > 0) {
        ucs_info("cuda_mgi iface %p: %lu copies posted in %lu batches "
                 "(cuMemcpyBatchAsync)", self, self->post.batched,
                 self->post.batches);
    }

    if (self->streams_initialized && (cuCtxGetCurrent(&ctx) == CUDA_SUCCESS) &&
        (ctx == self->cuda_context)) {
        uct_cuda_mgi_stripe_cleanup(self);
        for (i = 0; i < self->config.max_streams; ++i) {
            UCT_CUDA_MGI_CU_LOG_ERR(cuStreamDestroy(self->streams[i]));
        }
        UCT_CUDA_MGI_CU_LOG_ERR(cuStreamDestroy(self->sync_stream));
        UCT_CUDA_MGI_CU_LOG_ERR(cuMemFreeHost(self->bounce));
    }

    ucs_mpool_cleanup(&self->event_mp, 1);
}


static ucs_status_t
uct_cuda_mgi_query_devices(uct_md_h md,
                           uct_tl_device_resource_t **tl_devices_p,
                           unsigned *num_tl_devices_p)
{
    return uct_single_device_resource(md, UCT_CUDA_MGI_DEV_NAME,
                                      UCT_DEVICE_TYPE_SHM,
                                      UCS_SYS_DEVICE_ID_UNKNOWN, tl_devices_p,
                                      num_tl_devices_p);
}


UCS_CLASS_DEFINE(uct_cuda_mgi_iface_t, uct_base_iface_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_cuda_mgi_iface_t, uct_iface_t, uct_md_h,
                          uct_worker_h, const uct_iface_params_t*,
                          const uct_iface_config_t*);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_cuda_mgi_iface_t, uct_iface_t);

UCT_TL_DEFINE(&uct_cuda_mgi_component, cuda_mgi, uct_cuda_mgi_query_devices,
              uct_cuda_mgi_iface_t, "CUDA_MGI_",
              uct_cuda_mgi_iface_config_table, uct_cuda_mgi_iface_config_t);
