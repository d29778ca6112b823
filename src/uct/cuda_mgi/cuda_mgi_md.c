/**
 * cuda_mgi: MGI multi-GPU transport for UCX.
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_md.h"
#include "cuda_mgi_ep.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/profile/profile.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/uid.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/type/class.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <unistd.h>


static ucs_config_field_t uct_cuda_mgi_md_config_table[] = {
    {"", "", NULL,
     ucs_offsetof(uct_cuda_mgi_md_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},

    {NULL}
};


static ucs_status_t
uct_cuda_mgi_query_md_resources(uct_component_t *component,
                                uct_md_resource_desc_t **resources_p,
                                unsigned *num_resources_p)
{
    int num_gpus = 0;
    CUresult cu_err;

    cu_err = cuInit(0);
    if (cu_err == CUDA_SUCCESS) {
        cu_err = cuDeviceGetCount(&num_gpus);
    }

    if (cu_err != CUDA_SUCCESS) {
        ucs_debug("cuda_mgi: reporting no devices: cuInit/cuDeviceGetCount: "
                  "%s", uct_cuda_mgi_cu_error(cu_err));
        return uct_md_query_empty_md_resource(resources_p, num_resources_p);
    }

    if (num_gpus == 0) {
        ucs_debug("cuda_mgi: reporting no devices: the CUDA driver sees no "
                  "GPU (check CUDA_VISIBLE_DEVICES)");
        return uct_md_query_empty_md_resource(resources_p, num_resources_p);
    }

    ucs_debug("cuda_mgi: %d CUDA device(s)", num_gpus);
    return uct_md_query_single_md_resource(component, resources_p,
                                           num_resources_p);
}


static ucs_status_t
uct_cuda_mgi_md_query(uct_md_h uct_md, uct_cuda_mgi_md_attr_t *md_attr)
{
    uct_cuda_mgi_md_t *md = ucs_derived_of(uct_md, uct_cuda_mgi_md_t);

#if UCT_CUDA_MGI_HAVE_MD_ATTR_V2
    uct_md_base_md_query(md_attr);
#else
    memset(md_attr, 0, sizeof(*md_attr));
#endif
    UCT_CUDA_MGI_MD_CAP(md_attr, flags)            = UCT_MD_FLAG_REG       |
                                                    UCT_MD_FLAG_NEED_RKEY |
                                                    UCT_CUDA_MGI_MD_FLAGS_INVALIDATE;
    UCT_CUDA_MGI_MD_CAP(md_attr, reg_mem_types)    =
            UCS_BIT(UCS_MEMORY_TYPE_CUDA) |
            (md->reg_host ? UCS_BIT(UCS_MEMORY_TYPE_HOST) : 0);
    UCT_CUDA_MGI_MD_CAP(md_attr, alloc_mem_types)  = 0;
    UCT_CUDA_MGI_MD_CAP(md_attr, access_mem_types) =
            UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    UCT_CUDA_MGI_MD_CAP(md_attr, detect_mem_types) =
            UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    UCT_CUDA_MGI_MD_CAP(md_attr, max_alloc)        = 0;
    UCT_CUDA_MGI_MD_CAP(md_attr, max_reg)          = ULONG_MAX;
    md_attr->rkey_packed_size = sizeof(uct_cuda_mgi_rkey_t);
    md_attr->reg_cost         = ucs_linear_func_make(0, 0);
    memset(&md_attr->local_cpus, 0xff, sizeof(md_attr->local_cpus));
    return UCS_OK;
}


int uct_cuda_mgi_is_device_ptr(const void *address, CUdevice *dev_p)
{
    CUmemorytype mem_type = (CUmemorytype)0;
    uint32_t is_managed   = 0;
    int ordinal           = -1;
    CUpointer_attribute attr_type[3];
    void *attr_data[3];

    attr_type[0] = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    attr_data[0] = &mem_type;
    attr_type[1] = CU_POINTER_ATTRIBUTE_IS_MANAGED;
    attr_data[1] = &is_managed;
    attr_type[2] = CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL;
    attr_data[2] = &ordinal;

    if ((cuPointerGetAttributes(3, attr_type, attr_data,
                                (CUdeviceptr)address) != CUDA_SUCCESS) ||
        (mem_type != CU_MEMORYTYPE_DEVICE) || is_managed) {
        return 0;
    }

    if (dev_p != NULL) {
        *dev_p = ordinal;
    }
    return 1;
}


static ucs_status_t
uct_cuda_mgi_md_detect_memory_type(uct_md_h md, const void *address,
                                   size_t length,
                                   ucs_memory_type_t *mem_type_p)
{
    if (!uct_cuda_mgi_is_device_ptr(address, NULL)) {
        return UCS_ERR_INVALID_ADDR;
    }

    *mem_type_p = UCS_MEMORY_TYPE_CUDA;
    return UCS_OK;
}


/* The system device (PCI bus id) of a GPU, for UCX's topology */
static ucs_sys_device_t uct_cuda_mgi_sys_dev(CUdevice device)
{
    ucs_sys_device_t sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    int domain, bus, slot;
    ucs_sys_bus_id_t bus_id;

    if ((cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
                              device) != CUDA_SUCCESS) ||
        (cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                              device) != CUDA_SUCCESS) ||
        (cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
                              device) != CUDA_SUCCESS)) {
        return UCS_SYS_DEVICE_ID_UNKNOWN;
    }

    bus_id.domain   = (uint16_t)domain;
    bus_id.bus      = (uint8_t)bus;
    bus_id.slot     = (uint8_t)slot;
    bus_id.function = 0;
    if (ucs_topo_find_device_by_bus_id(&bus_id, &sys_dev) != UCS_OK) {
        return UCS_SYS_DEVICE_ID_UNKNOWN;
    }
    return sys_dev;
}


/* Type, allocation and device of a buffer, for UCP's memory detection (it
 * asks the MDs that detect CUDA memory, this one among them, for a buffer
 * its memtype cache does not know). UCX's uct_cuda_base_mem_query reads
 * cuda_copy's MD configuration, so it is not for this MD. Not CUDA device
 * memory: UCS_ERR_INVALID_ADDR, and UCP asks the next MD. */
static ucs_status_t
uct_cuda_mgi_md_mem_query(uct_md_h md, const void *address, size_t length,
                          uct_cuda_mgi_mem_attr_t *mem_attr)
{
    ucs_sys_device_t sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    CUdeviceptr base         = (CUdeviceptr)address;
    size_t alloc_length      = length;
    CUdevice device;

    if (!uct_cuda_mgi_is_device_ptr(address, &device)) {
        return UCS_ERR_INVALID_ADDR;
    }
    if (cuMemGetAddressRange(&base, &alloc_length, (CUdeviceptr)address) !=
        CUDA_SUCCESS) {
        base         = (CUdeviceptr)address;
        alloc_length = length;
    }
    sys_dev = uct_cuda_mgi_sys_dev(device);

    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_MEM_TYPE) {
        mem_attr->mem_type = UCS_MEMORY_TYPE_CUDA;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_SYS_DEV) {
        mem_attr->sys_dev = sys_dev;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS) {
        mem_attr->base_address = (void*)base;
    }
    if (mem_attr->field_mask & UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH) {
        mem_attr->alloc_length = alloc_length;
    }
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_mem_reg(uct_md_h md, void *address, size_t length,
                     UCT_CUDA_MGI_MEM_REG_ARG, uct_mem_h *memh_p)
{
    unsigned reg_flags    = UCT_CUDA_MGI_MEM_REG_FLAGS;
    ucs_log_level_t level = (reg_flags & UCT_MD_MEM_FLAG_HIDE_ERRORS) ?
                            UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_ERROR;
    uct_cuda_mgi_memh_t *memh;
    unsigned sync_memops;
    CUdevice device;
    ucs_status_t status;

    memh = ucs_calloc(1, sizeof(*memh), "uct_cuda_mgi_memh");
    if (memh == NULL) {
        ucs_error("cuda_mgi md %p: failed to allocate a memory handle", md);
        return UCS_ERR_NO_MEMORY;
    }

    memh->fd = -1;
    if ((length == 0) || !uct_cuda_mgi_is_device_ptr(address, &device)) {
        /* host memory: a key of no handle, unreachable from elsewhere */
        memh->key.magic       = UCT_CUDA_MGI_RKEY_MAGIC;
        memh->key.version     = UCT_CUDA_MGI_RKEY_VERSION;
        memh->key.handle_type = UCT_CUDA_MGI_HANDLE_NONE;
        memh->key.pid         = getpid();
        goto out;
    }

    status = uct_cuda_mgi_ipc_export(address, device, memh, level);
    if (status != UCS_OK) {
        ucs_free(memh);
        return status;
    }

    /* Make the user's synchronous copies into this memory (cudaMemcpy from
     * pageable host memory returns before its DMA lands otherwise) complete
     * before they return, so that a put issued next reads or overwrites what
     * the user expects, as UCX does for the memory it detects.  Memory of
     * cuMemCreate (a POSIX fd or fabric handle) does not take the attribute
     * (CUDA_ERROR_NOT_SUPPORTED): its writers synchronize their own copies,
     * as the CUDA documentation asks of such memory. */
    sync_memops = 1;
    if ((memh->key.handle_type == UCT_CUDA_MGI_HANDLE_LEGACY) &&
        (cuPointerSetAttribute(&sync_memops, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                               memh->key.base) != CUDA_SUCCESS)) {
        ucs_debug("cuda_mgi md %p: no CU_POINTER_ATTRIBUTE_SYNC_MEMOPS for "
                  "%p", md, address);
    }

    ucs_trace("cuda_mgi md %p: registered %p..%p on GPU%d (allocation "
              "0x%llx, %zu bytes, %s handle)", md, address,
              UCS_PTR_BYTE_OFFSET(address, length), (int)device,
              (unsigned long long)memh->key.base, (size_t)memh->key.length,
              uct_cuda_mgi_handle_type_name(memh->key.handle_type));
out:
    *memh_p = memh;
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_mem_dereg(uct_md_h md, const uct_md_mem_dereg_params_t *params)
{
    uct_cuda_mgi_memh_t *memh;
    uct_completion_t *comp;

    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 1);

    /* Invalidation (UCP asks for it for a peer it found failed) completes
     * at once: the handle's export is released here, and a process that
     * mapped the memory before keeps its mapping until it unmaps it, as
     * with UCX's own cuda_ipc */
    memh = params->memh;
    comp = UCT_MD_MEM_DEREG_FIELD_VALUE(params, comp, FIELD_COMPLETION, NULL);
    uct_cuda_mgi_ipc_export_release(memh);
    ucs_free(memh);
    if ((UCT_MD_MEM_DEREG_FIELD_VALUE(params, flags, FIELD_FLAGS, 0) &
         UCT_MD_MEM_DEREG_FLAG_INVALIDATE) && (comp != NULL)) {
        uct_invoke_completion(comp, UCS_OK);
    }
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_mkey_pack(uct_md_h md, uct_mem_h memh,
                       UCT_CUDA_MGI_MKEY_PACK_RANGE_ARGS
                       const uct_md_mkey_pack_params_t *params,
                       void *rkey_buffer)
{
    memcpy(rkey_buffer, &((uct_cuda_mgi_memh_t*)memh)->key,
           sizeof(uct_cuda_mgi_rkey_t));
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_rkey_unpack(uct_component_t *component, const void *rkey_buffer,
                         UCT_CUDA_MGI_RKEY_UNPACK_PARAMS_ARG
                         uct_rkey_t *rkey_p, void **handle_p)
{
    const uct_cuda_mgi_rkey_t *packed = rkey_buffer;
    uct_cuda_mgi_remote_t *remote;
    CUcontext ctx = NULL;
    ucs_status_t status;

    status = uct_cuda_mgi_ipc_check_key(packed);
    if (status != UCS_OK) {
        return status;
    }

    /* The process's own GPU memory unpacks too (it is used in place): UCP
     * never asks, since is_reachable calls a process unreachable from
     * itself and cuda_copy serves it, but a UCT user with both ends in one
     * process may */
    if ((packed->handle_type == UCT_CUDA_MGI_HANDLE_NONE) ||
        (packed->system_id != ucs_get_system_id())) {
        /* host memory, memory no handle exports, another host's memory */
        return UCS_ERR_UNREACHABLE;
    }

    if ((cuCtxGetCurrent(&ctx) != CUDA_SUCCESS) || (ctx == NULL)) {
        ucs_debug("cuda_mgi: no current CUDA context, cannot map remote "
                  "memory of pid %d", packed->pid);
        return UCS_ERR_UNREACHABLE;
    }

    remote = ucs_malloc(sizeof(*remote), "uct_cuda_mgi_remote");
    if (remote == NULL) {
        ucs_error("cuda_mgi: failed to allocate a remote key");
        return UCS_ERR_NO_MEMORY;
    }

    /* Map now: an unmappable handle (peer GPU not visible here, no peer
     * access) makes the remote memory unreachable rather than failing the
     * first put.  The mapping stays with the key for the operations. */
    remote->key = *packed;
    remote->ctx = ctx;
    status      = UCS_PROFILE_CALL(uct_cuda_mgi_ipc_map, &remote->key, ctx,
                                   &remote->mapping);
    if (status != UCS_OK) {
        ucs_debug("cuda_mgi: cannot map memory of pid %d (0x%llx): %s",
                  packed->pid, (unsigned long long)packed->base,
                  ucs_status_string(status));
        ucs_free(remote);
        return UCS_ERR_UNREACHABLE;
    }

    *handle_p = NULL;
    *rkey_p   = (uintptr_t)remote;
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_rkey_release(uct_component_t *component, uct_rkey_t rkey,
                          void *handle)
{
    uct_cuda_mgi_remote_t *remote = (uct_cuda_mgi_remote_t*)rkey;

    if (remote->mapping != NULL) {
        uct_cuda_mgi_ipc_unmap(remote->mapping);
    }
    ucs_free(remote);
    return UCS_OK;
}


static void uct_cuda_mgi_md_close(uct_md_h uct_md)
{
    ucs_free(ucs_derived_of(uct_md, uct_cuda_mgi_md_t));
}


/* UCP's first protocol layer takes an RMA lane for CUDA memory only from an
 * MD that registers host memory too (such keys are never reachable from
 * another process).  Its second layer needs no such thing, and there a
 * host registration would offer UCP this transport for host-memory
 * messages (staged through GPU fragments), which it must not take. */
static int uct_cuda_mgi_md_reg_host(void)
{
    const char *proto = getenv("UCX_PROTO_ENABLE");

    if ((proto == NULL) || (proto[0] == '\0')) {
        return !UCT_CUDA_MGI_HAVE_PROTO_V2_DEFAULT;
    }
    return (strchr("nN0", proto[0]) != NULL) ||
           (strncasecmp(proto, "off", 3) == 0);
}


static ucs_status_t
uct_cuda_mgi_md_open(uct_component_t *component, const char *md_name,
                     const uct_md_config_t *config, uct_md_h *md_p)
{
    static uct_md_ops_t md_ops = {
        .close                  = uct_cuda_mgi_md_close,
        .query                  = uct_cuda_mgi_md_query,
        .mkey_pack              = uct_cuda_mgi_mkey_pack,
        .mem_reg                = uct_cuda_mgi_mem_reg,
        .mem_dereg              = uct_cuda_mgi_mem_dereg,
#if UCT_CUDA_MGI_HAVE_MD_SOCKADDR
        .is_sockaddr_accessible = ucs_empty_function_return_zero_int,
#endif
#if UCT_CUDA_MGI_HAVE_MD_MEM_ATTACH
        .mem_attach             = (uct_md_mem_attach_func_t)
                                  ucs_empty_function_return_unsupported,
#endif
#if UCT_CUDA_MGI_HAVE_MD_MEM_ELEM_PACK
        .mem_elem_pack          = (uct_md_mem_elem_pack_func_t)
                                  ucs_empty_function_return_unsupported,
#endif
        .detect_memory_type     = uct_cuda_mgi_md_detect_memory_type,
        /* an MD that detects a memory type answers mem_query too: UCP
         * calls it without a check for NULL */
        .mem_query              = uct_cuda_mgi_md_mem_query
    };
    uct_cuda_mgi_md_t *md;

    md = ucs_calloc(1, sizeof(*md), "uct_cuda_mgi_md");
    if (md == NULL) {
        ucs_error("cuda_mgi: failed to allocate a memory domain");
        return UCS_ERR_NO_MEMORY;
    }

    md->super.ops       = &md_ops;
    md->super.component = &uct_cuda_mgi_component;
    md->reg_host        = uct_cuda_mgi_md_reg_host();
    *md_p               = &md->super;
    return UCS_OK;
}


uct_component_t uct_cuda_mgi_component = {
    .query_md_resources = uct_cuda_mgi_query_md_resources,
    .md_open            = uct_cuda_mgi_md_open,
    .cm_open            = (uct_component_cm_open_func_t)
                          ucs_empty_function_return_unsupported,
    .rkey_unpack        = uct_cuda_mgi_rkey_unpack,
    .rkey_ptr           = (uct_component_rkey_ptr_func_t)
                          ucs_empty_function_return_unsupported,
    .rkey_release       = uct_cuda_mgi_rkey_release,
#if UCT_CUDA_MGI_HAVE_RKEY_COMPARE
    .rkey_compare       = uct_base_rkey_compare,
#endif
    .name               = UCT_CUDA_MGI_COMPONENT_NAME,
    .md_config          = {
        .name           = "CUDA-MGI memory domain",
        .prefix         = "CUDA_MGI_",
        .table          = uct_cuda_mgi_md_config_table,
        .size           = sizeof(uct_cuda_mgi_md_config_t),
    },
    .cm_config          = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list            = UCT_COMPONENT_TL_LIST_INITIALIZER(
                                  &uct_cuda_mgi_component),
    .flags              = 0,
    .md_vfs_init        = (uct_component_md_vfs_init_func_t)
                                  ucs_empty_function
};
UCT_COMPONENT_REGISTER(&uct_cuda_mgi_component);
