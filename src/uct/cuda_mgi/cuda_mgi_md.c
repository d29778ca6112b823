/**
 * cuda_mgi: MGI multi-GPU transport for UCX.
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_md.h"
#include "cuda_mgi_ep.h"

#include <uct/cuda/base/cuda_iface.h>
#include <uct/cuda/cuda_ipc/cuda_ipc_cache.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/type/class.h>
#include <string.h>
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


static ucs_status_t uct_cuda_mgi_md_query(uct_md_h md, uct_md_attr_t *md_attr)
{
    md_attr->cap.flags            = UCT_MD_FLAG_REG       |
                                    UCT_MD_FLAG_NEED_RKEY |
                                    UCT_MD_FLAG_INVALIDATE;
    /* Host registration only makes UCX 1.13's RMA lane lookup accept this
     * transport for CUDA memory; host keys are never reachable remotely. */
    md_attr->cap.reg_mem_types    = UCS_BIT(UCS_MEMORY_TYPE_HOST) |
                                    UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    md_attr->cap.alloc_mem_types  = 0;
    md_attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    md_attr->cap.detect_mem_types = UCS_BIT(UCS_MEMORY_TYPE_CUDA);
    md_attr->cap.max_alloc        = 0;
    md_attr->cap.max_reg          = ULONG_MAX;
    md_attr->rkey_packed_size     = sizeof(uct_cuda_mgi_key_t);
    md_attr->reg_cost             = ucs_linear_func_make(0, 0);
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


/* Type, allocation and device of a buffer, for UCP's memory detection (it
 * asks the MDs that detect CUDA memory, this one among them, for a buffer
 * its memtype cache does not know). UCX's uct_cuda_base_mem_query reads
 * cuda_copy's MD configuration, so it is not for this MD. Not CUDA device
 * memory: UCS_ERR_INVALID_ADDR, and UCP asks the next MD. */
static ucs_status_t
uct_cuda_mgi_md_mem_query(uct_md_h md, const void *address, size_t length,
                          uct_md_mem_attr_t *mem_attr)
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
    if (uct_cuda_base_get_sys_dev(device, &sys_dev) != UCS_OK) {
        sys_dev = UCS_SYS_DEVICE_ID_UNKNOWN;
    }

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
                     unsigned flags, uct_mem_h *memh_p)
{
    ucs_log_level_t level = (flags & UCT_MD_MEM_FLAG_HIDE_ERRORS) ?
                            UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_ERROR;
    unsigned sync_memops;
    uct_cuda_mgi_key_t *key;
    CUdevice device;
    ucs_status_t status;

    key = ucs_calloc(1, sizeof(*key), "uct_cuda_mgi_key");
    if (key == NULL) {
        ucs_error("cuda_mgi md %p: failed to allocate a memory key", md);
        return UCS_ERR_NO_MEMORY;
    }

    if ((length == 0) || !uct_cuda_mgi_is_device_ptr(address, &device)) {
        key->type = UCT_CUDA_MGI_KEY_HOST;
        goto out;
    }

    key->type = UCT_CUDA_MGI_KEY_CUDA;
    status    = UCT_CUDADRV_FUNC(cuIpcGetMemHandle(&key->ipc.ph,
                                                   (CUdeviceptr)address),
                                 level);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = UCT_CUDADRV_FUNC(cuMemGetAddressRange(&key->ipc.d_bptr,
                                                   &key->ipc.b_len,
                                                   (CUdeviceptr)address),
                              level);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = UCT_CUDADRV_FUNC(cuDeviceGetUuid(&key->ipc.uuid, device), level);
    if (status != UCS_OK) {
        goto err_free;
    }

    /* Make the user's synchronous copies into this memory (cudaMemcpy from
     * pageable host memory returns before its DMA lands otherwise) complete
     * before they return, so that a put issued next reads or overwrites what
     * the user expects, as UCX does for the memory it detects. */
    sync_memops = 1;
    status      = UCT_CUDADRV_FUNC(cuPointerSetAttribute(
                                           &sync_memops,
                                           CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                           key->ipc.d_bptr),
                                   UCS_LOG_LEVEL_WARN);
    (void)status; /* only a safety net: registration goes on without it */

    key->ipc.dev_num = (int)device;
    key->ipc.pid     = getpid();
    ucs_trace("cuda_mgi md %p: registered %p..%p on GPU%d (allocation "
              "0x%llx, %zu bytes)", md, address,
              UCS_PTR_BYTE_OFFSET(address, length), (int)device,
              (unsigned long long)key->ipc.d_bptr, key->ipc.b_len);
out:
    *memh_p = key;
    return UCS_OK;

err_free:
    ucs_free(key);
    return status;
}


static ucs_status_t
uct_cuda_mgi_mem_dereg(uct_md_h md, const uct_md_mem_dereg_params_t *params)
{
    UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);

    ucs_free(params->memh);
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_mkey_pack(uct_md_h md, uct_mem_h memh,
                       const uct_md_mkey_pack_params_t *params,
                       void *rkey_buffer)
{
    memcpy(rkey_buffer, memh, sizeof(uct_cuda_mgi_key_t));
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_rkey_unpack(uct_component_t *component, const void *rkey_buffer,
                         uct_rkey_t *rkey_p, void **handle_p)
{
    const uct_cuda_mgi_key_t *packed = rkey_buffer;
    uct_cuda_mgi_key_t *key;
    ucs_status_t status;
    void *mapped;

    if (packed->type == UCT_CUDA_MGI_KEY_HOST) {
        /* host memory of another process: not this transport's business */
        return UCS_ERR_UNREACHABLE;
    }

    if (packed->type != UCT_CUDA_MGI_KEY_CUDA) {
        ucs_error("cuda_mgi: remote key of unknown type 0x%x (peer runs a "
                  "different cuda_mgi build?)", packed->type);
        return UCS_ERR_INVALID_PARAM;
    }

    if (packed->ipc.pid == getpid()) {
        /* the process's own memory: cuda_copy serves it */
        return UCS_ERR_UNREACHABLE;
    }

    if (!uct_cuda_base_is_context_active()) {
        ucs_debug("cuda_mgi: no current CUDA context, cannot map remote "
                  "memory of pid %d", packed->ipc.pid);
        return UCS_ERR_UNREACHABLE;
    }

    key = ucs_malloc(sizeof(*key), "uct_cuda_mgi_rkey");
    if (key == NULL) {
        ucs_error("cuda_mgi: failed to allocate a remote key");
        return UCS_ERR_NO_MEMORY;
    }

    *key = *packed;

    /* Map now: an unmappable handle (peer GPU not visible here, no peer
     * access) makes the remote memory unreachable rather than failing the
     * first put.  The mapping stays in the cache for the operations. */
    status = uct_cuda_ipc_map_memhandle(&key->ipc, &mapped);
    if (status != UCS_OK) {
        ucs_debug("cuda_mgi: cannot map memory of pid %d GPU%d (0x%llx): %s",
                  key->ipc.pid, key->ipc.dev_num,
                  (unsigned long long)key->ipc.d_bptr,
                  ucs_status_string(status));
        ucs_free(key);
        return UCS_ERR_UNREACHABLE;
    }

    uct_cuda_ipc_unmap_memhandle(key->ipc.pid, key->ipc.d_bptr, mapped, 1);

    *handle_p = NULL;
    *rkey_p   = (uintptr_t)key;
    return UCS_OK;
}


static ucs_status_t
uct_cuda_mgi_rkey_release(uct_component_t *component, uct_rkey_t rkey,
                          void *handle)
{
    ucs_free((void*)rkey);
    return UCS_OK;
}


static void uct_cuda_mgi_md_close(uct_md_h uct_md)
{
    ucs_free(ucs_derived_of(uct_md, uct_cuda_mgi_md_t));
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
        .is_sockaddr_accessible = ucs_empty_function_return_zero_int,
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
    *md_p               = &md->super;
    return UCS_OK;
}


uct_component_t uct_cuda_mgi_component = {
    .query_md_resources = uct_cuda_mgi_query_md_resources,
    .md_open            = uct_cuda_mgi_md_open,
    .cm_open            = ucs_empty_function_return_unsupported,
    .rkey_unpack        = uct_cuda_mgi_rkey_unpack,
    .rkey_ptr           = ucs_empty_function_return_unsupported,
    .rkey_release       = uct_cuda_mgi_rkey_release,
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
