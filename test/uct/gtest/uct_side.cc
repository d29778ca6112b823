/**
 * cuda_mgi GPU tests: one process's side of a UCT pair (uct_side.h).
 * See file LICENSE for terms.
 */

#include "uct_side.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace mgi_test {

uct_side::uct_side(int rank, peer_link &link, size_t buf_size, mem_kind kind) :
    m_kind(kind), m_size(buf_size)
{
    uct_component_h *components;
    unsigned num_components;
    uct_md_attr_t md_attr;
    uct_md_config_t *md_config;
    uct_iface_config_t *iface_config;
    uct_tl_resource_desc_t *resources;
    unsigned num_resources;
    std::string dev_name;

    select_gpu(rank);

    MGI_UCS(uct_query_components(&components, &num_components));
    for (unsigned i = 0; i < num_components; ++i) {
        uct_component_attr_t attr = {};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        MGI_UCS(uct_component_query(components[i], &attr));
        if (!strcmp(attr.name, "cuda_mgi")) {
            m_component = components[i];
        }
    }
    uct_release_component_list(components);
    MGI_CHECK(m_component != nullptr, "UCX did not load the cuda_mgi "
              "component (is libuct_cuda_mgi.so in UCX's module directory?)");

    MGI_UCS(uct_md_config_read(m_component, NULL, NULL, &md_config));
    MGI_UCS(uct_md_open(m_component, "cuda_mgi", md_config, &m_md));
    uct_config_release(md_config);
    MGI_UCS(uct_md_query(m_md, &md_attr));

    MGI_UCS(uct_md_query_tl_resources(m_md, &resources, &num_resources));
    for (unsigned i = 0; i < num_resources; ++i) {
        if (!strcmp(resources[i].tl_name, "cuda_mgi")) {
            dev_name = resources[i].dev_name;
        }
    }
    uct_release_tl_resource_list(resources);
    MGI_CHECK(!dev_name.empty(), "no cuda_mgi transport resource");

    MGI_UCS(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                     &m_async));
    MGI_UCS(uct_worker_create(m_async, UCS_THREAD_MODE_SINGLE, &m_worker));

    uct_iface_params_t params = {};
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = "cuda_mgi";
    params.mode.device.dev_name = dev_name.c_str();
    MGI_UCS(uct_md_iface_config_read(m_md, "cuda_mgi", NULL, NULL,
                                     &iface_config));
    MGI_UCS(uct_iface_open(m_md, m_worker, &params, iface_config, &m_iface));
    uct_config_release(iface_config);
    MGI_UCS(uct_iface_query(m_iface, &m_attr));
    uct_iface_progress_enable(m_iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    m_buf       = alloc_device(kind, buf_size);
    m_rkey_size = md_attr.rkey_packed_size;
    MGI_UCS(uct_md_mem_reg(m_md, m_buf, buf_size, UCT_MD_MEM_ACCESS_ALL,
                           &m_memh));

    std::vector<uint8_t> dev_addr(m_attr.device_addr_len);
    std::vector<uint8_t> iface_addr(m_attr.iface_addr_len);
    MGI_UCS(uct_iface_get_device_address(
            m_iface, (uct_device_addr_t*)dev_addr.data()));
    MGI_UCS(uct_iface_get_address(m_iface,
                                  (uct_iface_addr_t*)iface_addr.data()));
    link.send_blob(dev_addr);
    link.send_blob(iface_addr);
    auto peer_dev   = link.recv_blob();
    auto peer_iface = link.recv_blob();

    MGI_CHECK(uct_iface_is_reachable(m_iface,
                                     (uct_device_addr_t*)peer_dev.data(),
                                     (uct_iface_addr_t*)peer_iface.data()),
              "cuda_mgi says the peer process is unreachable");

    uct_ep_params_t ep_params = {};
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_DEV_ADDR |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR;
    ep_params.iface      = m_iface;
    ep_params.dev_addr   = (uct_device_addr_t*)peer_dev.data();
    ep_params.iface_addr = (uct_iface_addr_t*)peer_iface.data();
    MGI_UCS(uct_ep_create(&ep_params, &m_ep));
    exchange_keys(link);
}


uct_side::~uct_side()
{
    if (m_has_rkey) {
        uct_rkey_release(m_component, &m_rkey);
    }
    uct_ep_destroy(m_ep);
    uct_md_mem_dereg(m_md, m_memh);
    free_device(m_kind, m_buf, m_size);
    uct_iface_close(m_iface);
    uct_worker_destroy(m_worker);
    ucs_async_context_destroy(m_async);
    uct_md_close(m_md);
}


void uct_side::wait(uct_completion_t *comp, const char *what)
{
    double deadline = now_sec() + MGI_TEST_TIMEOUT_SEC;

    while (comp->count > 0) {
        progress();
        MGI_CHECK(now_sec() < deadline, "%s did not complete in %.0f s", what,
                  MGI_TEST_TIMEOUT_SEC);
    }
    MGI_CHECK(comp->status == UCS_OK, "%s completed with %s", what,
              ucs_status_string(comp->status));
}


void uct_side::flush()
{
    double deadline = now_sec() + MGI_TEST_TIMEOUT_SEC;
    ucs_status_t status;

    while ((status = uct_ep_flush(m_ep, 0, NULL)) != UCS_OK) {
        MGI_CHECK((status == UCS_INPROGRESS) || (status == UCS_ERR_NO_RESOURCE),
                  "uct_ep_flush: %s", ucs_status_string(status));
        progress();
        MGI_CHECK(now_sec() < deadline, "flush did not complete in %.0f s",
                  MGI_TEST_TIMEOUT_SEC);
    }
}


unsigned uct_side::zcopy(bool put, void *local, size_t len, uint64_t remote,
                         uct_completion_t *comp)
{
    return zcopy(put, local, len, remote, comp, m_memh);
}


/* Returns how often the transport said UCS_ERR_NO_RESOURCE first */
unsigned uct_side::zcopy(bool put, void *local, size_t len, uint64_t remote,
                         uct_completion_t *comp, uct_mem_h memh)
{
    double deadline = now_sec() + MGI_TEST_TIMEOUT_SEC;
    uct_iov_t iov   = {local, len, memh, 0, 1};
    unsigned refused = 0;
    ucs_status_t status;

    for (;; ++refused) {
        status = put ? uct_ep_put_zcopy(m_ep, &iov, 1, remote, rkey(), comp) :
                       uct_ep_get_zcopy(m_ep, &iov, 1, remote, rkey(), comp);
        if (status != UCS_ERR_NO_RESOURCE) {
            break;
        }
        progress();
        MGI_CHECK(now_sec() < deadline, "no resources for %.0f s",
                  MGI_TEST_TIMEOUT_SEC);
    }

    if (status == UCS_OK) {
        --comp->count; /* completed at once */
    } else {
        MGI_CHECK(status == UCS_INPROGRESS, "%s_zcopy of %zu bytes: %s",
                  put ? "put" : "get", len, ucs_status_string(status));
    }
    return refused;
}


void comp_cb(uct_completion_t *comp) {}

uct_completion_t make_comp(int count)
{
    uct_completion_t comp;
    comp.func   = comp_cb;
    comp.count  = count;
    comp.status = UCS_OK;
    return comp;
}

size_t max_size(const std::vector<size_t> &sizes)
{
    return *std::max_element(sizes.begin(), sizes.end());
}


/* The peer's buffer address and remote key; memory of a kind no other
 * process can map is unreachable, any other refusal fails the test */
void uct_side::exchange_keys(peer_link &link)
{
    std::vector<uint8_t> rkey_buf(m_rkey_size);

    MGI_UCS(uct_md_mkey_pack(m_md, m_memh, rkey_buf.data()));
    link.send_blob(rkey_buf);
    link.send_val<uint64_t>((uintptr_t)m_buf);
    auto peer_rkey = link.recv_blob();
    m_remote_buf   = link.recv_val<uint64_t>();

    if (m_has_rkey) {
        uct_rkey_release(m_component, &m_rkey);
        m_has_rkey = false;
    }
    m_unpack_status = uct_rkey_unpack(m_component, peer_rkey.data(),
                                      &m_rkey);
    m_has_rkey      = (m_unpack_status == UCS_OK);
    MGI_CHECK((m_unpack_status == UCS_OK) || (m_kind == mem_kind::pool),
              "uct_rkey_unpack of the peer's %s buffer: %s",
              mem_kind_name(m_kind), ucs_status_string(m_unpack_status));
    link.barrier();
}


bool uct_side::renew_buffer(peer_link &link)
{
    void *old = m_buf;

    link.barrier();
    MGI_UCS(uct_md_mem_dereg(m_md, m_memh));
    free_device(m_kind, m_buf, m_size);
    m_buf = alloc_device(m_kind, m_size);
    MGI_UCS(uct_md_mem_reg(m_md, m_buf, m_size, UCT_MD_MEM_ACCESS_ALL,
                           &m_memh));
    exchange_keys(link);
    return m_buf == old;
}


const char *mem_kind_name(mem_kind kind)
{
    switch (kind) {
    case mem_kind::cuda_malloc:
        return "cudaMalloc";
    case mem_kind::vmm_fd:
        return "cuMemCreate (POSIX file descriptor)";
    default:
        return "cudaMallocAsync";
    }
}


static size_t vmm_granularity(CUmemAllocationProp *prop)
{
    size_t gran = 0;
    CUresult r  = cuMemGetAllocationGranularity(
            &gran, prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    MGI_CHECK(r == CUDA_SUCCESS, "cuMemGetAllocationGranularity: %d", r);
    return gran;
}


static void vmm_prop(CUmemAllocationProp *prop)
{
    int dev;

    MGI_CUDA(cudaGetDevice(&dev));
    memset(prop, 0, sizeof(*prop));
    prop->type                 = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->location.type        = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id          = dev;
    prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
}


void *alloc_device(mem_kind kind, size_t size)
{
    CUmemGenericAllocationHandle handle;
    CUmemAllocationProp prop;
    CUmemAccessDesc access = {};
    CUdeviceptr ptr;
    size_t gran;
    void *p;

    switch (kind) {
    case mem_kind::cuda_malloc:
        MGI_CUDA(cudaMalloc(&p, size));
        return p;
    case mem_kind::pool:
        MGI_CUDA(cudaMallocAsync(&p, size, 0));
        MGI_CUDA(cudaStreamSynchronize(0));
        return p;
    default:
        break;
    }

    vmm_prop(&prop);
    gran = vmm_granularity(&prop);
    size = (size + gran - 1) / gran * gran;
    MGI_CHECK(cuMemCreate(&handle, size, &prop, 0) == CUDA_SUCCESS,
              "cuMemCreate of %zu bytes", size);
    MGI_CHECK(cuMemAddressReserve(&ptr, size, gran, 0, 0) == CUDA_SUCCESS,
              "cuMemAddressReserve of %zu bytes", size);
    MGI_CHECK(cuMemMap(ptr, size, 0, handle, 0) == CUDA_SUCCESS, "cuMemMap");
    cuMemRelease(handle);
    access.location = prop.location;
    access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    MGI_CHECK(cuMemSetAccess(ptr, size, &access, 1) == CUDA_SUCCESS,
              "cuMemSetAccess");
    return (void*)ptr;
}


void free_device(mem_kind kind, void *ptr, size_t size)
{
    CUmemAllocationProp prop;
    size_t gran;

    switch (kind) {
    case mem_kind::cuda_malloc:
        cudaFree(ptr);
        return;
    case mem_kind::pool:
        cudaFreeAsync(ptr, 0);
        cudaStreamSynchronize(0);
        return;
    default:
        break;
    }

    vmm_prop(&prop);
    gran = vmm_granularity(&prop);
    size = (size + gran - 1) / gran * gran;
    cuMemUnmap((CUdeviceptr)ptr, size);
    cuMemAddressFree((CUdeviceptr)ptr, size);
}

} // namespace mgi_test
