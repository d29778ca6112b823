/**
 * cuda_mgi GPU tests through UCP: tag send/recv, put and get of CUDA buffers
 * of every size, with UCX_TLS naming cuda_mgi; every byte checked, and the
 * endpoint's lanes checked to include cuda_mgi.
 * See file LICENSE for terms.
 */

#include "pair.h"

#include <ucp/api/ucp.h>

#include <sstream>

using namespace mgi_test;

namespace {

const std::vector<size_t> sizes = {
    1, 2, 7, 8, 63, 64, 127, 128, 129, 1000, 4096, 8191, 16 * KiB - 1,
    16 * KiB, 16 * KiB + 1, 64 * KiB + 3, 256 * KiB, 1 * MiB + 5,
    4 * MiB + 7, 16 * MiB, 64 * MiB + 1, 256 * MiB
};


class ucp_side {
public:
    ucp_side(int rank, peer_link &link, size_t buf_size);
    ~ucp_side();

    void wait(ucs_status_ptr_t req, const char *what, size_t len);
    void flush();
    std::string ep_info();
    ucs_memory_type_t mem_type();

    ucp_worker_h worker;
    ucp_ep_h     ep;
    ucp_rkey_h   rkey = nullptr;
    uint64_t     remote_buf = 0;
    void         *buf;

private:
    ucp_context_h m_context;
    ucp_mem_h     m_memh;
};


ucp_side::ucp_side(int rank, peer_link &link, size_t buf_size)
{
    ucp_params_t params = {};
    ucp_worker_params_t wparams = {};
    ucp_address_t *addr;
    size_t addr_len;
    void *rkey_buf;
    size_t rkey_len;

    select_gpu(rank);
    MGI_CUDA(cudaMalloc(&buf, buf_size));

    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features   = UCP_FEATURE_TAG | UCP_FEATURE_RMA;
    MGI_UCS(ucp_init(&params, NULL, &m_context));

    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    MGI_UCS(ucp_worker_create(m_context, &wparams, &worker));
    MGI_UCS(ucp_worker_get_address(worker, &addr, &addr_len));
    link.send_blob(std::vector<uint8_t>((uint8_t*)addr,
                                        (uint8_t*)addr + addr_len));
    ucp_worker_release_address(worker, addr);

    auto peer_addr = link.recv_blob();
    ucp_ep_params_t ep_params = {};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = (ucp_address_t*)peer_addr.data();
    MGI_UCS(ucp_ep_create(worker, &ep_params, &ep));

    ucp_mem_map_params_t mparams = {};
    mparams.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                         UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mparams.address    = buf;
    mparams.length     = buf_size;
    MGI_UCS(ucp_mem_map(m_context, &mparams, &m_memh));
    MGI_UCS(ucp_rkey_pack(m_context, m_memh, &rkey_buf, &rkey_len));
    link.send_blob(std::vector<uint8_t>((uint8_t*)rkey_buf,
                                        (uint8_t*)rkey_buf + rkey_len));
    link.send_val<uint64_t>((uintptr_t)buf);
    ucp_rkey_buffer_release(rkey_buf);

    auto peer_rkey = link.recv_blob();
    remote_buf     = link.recv_val<uint64_t>();
    MGI_UCS(ucp_ep_rkey_unpack(ep, peer_rkey.data(), &rkey));
    link.barrier();
}


ucp_side::~ucp_side()
{
    ucp_request_param_t param = {};
    ucs_status_ptr_t req;

    ucp_rkey_destroy(rkey);
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
    req = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(req)) {
        double deadline = now_sec() + 10;
        while ((ucp_request_check_status(req) == UCS_INPROGRESS) &&
               (now_sec() < deadline)) {
            ucp_worker_progress(worker);
        }
        ucp_request_free(req);
    }
    ucp_mem_unmap(m_context, m_memh);
    ucp_worker_destroy(worker);
    ucp_cleanup(m_context);
    cudaFree(buf);
}


void ucp_side::wait(ucs_status_ptr_t req, const char *what, size_t len)
{
    double deadline = now_sec() + MGI_TEST_TIMEOUT_SEC;
    ucs_status_t status;

    if (!UCS_PTR_IS_PTR(req)) {
        status = UCS_PTR_STATUS(req);
        MGI_CHECK(status == UCS_OK, "%s of %zu bytes: %s", what, len,
                  ucs_status_string(status));
        return;
    }

    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
        MGI_CHECK(now_sec() < deadline, "%s of %zu bytes: not complete in "
                  "%.0f s", what, len, MGI_TEST_TIMEOUT_SEC);
    }
    ucp_request_free(req);
    MGI_CHECK(status == UCS_OK, "%s of %zu bytes: %s", what, len,
              ucs_status_string(status));
}


void ucp_side::flush()
{
    ucp_request_param_t param = {};
    wait(ucp_ep_flush_nbx(ep, &param), "flush", 0);
}


std::string ucp_side::ep_info()
{
    char *text  = nullptr;
    size_t size = 0;
    FILE *f     = open_memstream(&text, &size);

    ucp_ep_print_info(ep, f);
    fclose(f);
    std::string s(text, size);
    free(text);
    return s;
}


/* The memory type UCP found for the mapped buffer. */
ucs_memory_type_t ucp_side::mem_type()
{
    ucp_mem_attr_t attr = {};

    attr.field_mask = UCP_MEM_ATTR_FIELD_MEM_TYPE;
    MGI_UCS(ucp_mem_query(m_memh, &attr));
    return attr.mem_type;
}


const std::vector<std::pair<std::string, std::string>> ucp_env = {
    {"UCX_TLS", "sm,cuda_mgi,cuda_copy"},
    {"UCX_WARN_UNUSED_ENV_VARS", "n"}
};

/* Where UCP prints its protocol tables (its second protocol layer), no
 * protocol for messages from host memory may run on cuda_mgi: it moves GPU
 * memory, and a host message staged through GPU fragments to use it is
 * slower than the shared-memory transports */
void host_protocols_avoid_cuda_mgi(const std::string &info)
{
    std::istringstream in(info);
    std::string line, title;
    unsigned tables = 0;

    while (std::getline(in, line)) {
        if (line.find(" by ucp_") != std::string::npos) {
            title = line;
            ++tables;
        } else if ((title.find("from host memory") != std::string::npos) &&
                   (line.find("cuda_mgi") != std::string::npos)) {
            MGI_CHECK(false, "UCP offers cuda_mgi for host memory:\n%s\n%s",
                      title.c_str(), line.c_str());
        }
    }
    printf("  %u protocol tables: none sends host memory with cuda_mgi\n",
           tables);
}

} // namespace


/* rank 0 sends CUDA buffers to rank 1 with tags; rank 1 checks them */
TEST(ucp_cuda_mgi, tag_send_recv_all_sizes) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        ucp_side side(rank, link, sizes.back() + 64);
        ucp_request_param_t param = {};

        for (size_t len : sizes) {
            uint8_t *p = (uint8_t*)side.buf + 3;
            if (rank == 0) {
                fill_device_pattern(p, len, len);
                link.barrier();
                side.wait(ucp_tag_send_nbx(side.ep, p, len, len, &param),
                          "tag send", len);
            } else {
                MGI_CUDA(cudaMemset(side.buf, 0, len + 8));
                link.barrier();
                side.wait(ucp_tag_recv_nbx(side.worker, p, len, len,
                                           (ucp_tag_t)-1, &param),
                          "tag recv", len);
                MGI_CHECK(check_device_pattern(p, len, len, "tag recv"),
                          "tag message of %zu bytes arrived wrong", len);
            }
        }
        link.barrier();
        if (rank == 0) {
            printf("  tag send/recv: %zu sizes, 1 B .. 256 MiB, byte-exact\n",
                   sizes.size());
        }
    }, ucp_env);
}


/* ucp_put_nbx / ucp_get_nbx between CUDA buffers: UCX 1.13 without an RMA
 * lane for CUDA memory emulates them by reading the GPU buffer on the CPU
 * and crashes; cuda_mgi must be that lane. */
TEST(ucp_cuda_mgi, put_get_all_sizes) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        ucp_side side(rank, link, 2 * (sizes.back() + 64));
        ucp_request_param_t param = {};
        size_t half = sizes.back() + 64;
        uint8_t *p  = (uint8_t*)side.buf;
        ucs_memory_type_t mem_type = side.mem_type();

        MGI_CHECK(mem_type == UCS_MEMORY_TYPE_CUDA,
                  "UCP took the cudaMalloc buffer for %s memory",
                  ucs_memory_type_names[mem_type]);
        if (rank == 0) {
            std::string info = side.ep_info();
            MGI_CHECK(info.find("cuda_mgi") != std::string::npos,
                      "the UCP endpoint has no cuda_mgi lane:\n%s",
                      info.c_str());
        }

        for (size_t len : sizes) {
            /* put: rank 0's p+5 -> rank 1's p+7 */
            if (rank == 0) {
                fill_device_pattern(p + 5, len, len + 1);
            } else {
                MGI_CUDA(cudaMemset(p, 0, len + 16));
                /* get source for rank 0, in the second half */
                fill_device_pattern(p + half + 9, len, len + 2);
            }
            link.barrier();
            if (rank == 0) {
                side.wait(ucp_put_nbx(side.ep, p + 5, len,
                                      side.remote_buf + 7, side.rkey, &param),
                          "put", len);
                side.flush();
                side.wait(ucp_get_nbx(side.ep, p + half + 11, len,
                                      side.remote_buf + half + 9, side.rkey,
                                      &param), "get", len);
                side.flush();
                MGI_CHECK(check_device_pattern(p + half + 11, len, len + 2,
                                               "ucp get"),
                          "get of %zu bytes arrived wrong", len);
            }
            link.barrier();
            if (rank == 1) {
                MGI_CHECK(check_device_pattern(p + 7, len, len + 1,
                                               "ucp put"),
                          "put of %zu bytes arrived wrong", len);
            }
            link.barrier();
        }
        if (rank == 0) {
            std::string info = side.ep_info();
            printf("  ucp put/get: %zu sizes, 1 B .. 256 MiB, byte-exact\n",
                   sizes.size());
            printf("%s", info.c_str());
            host_protocols_avoid_cuda_mgi(info);
        }
    }, ucp_env);
}
