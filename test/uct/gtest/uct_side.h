/**
 * cuda_mgi GPU tests: one process's side of a UCT pair, a cuda_mgi
 * interface, a GPU buffer registered with its MD, and an endpoint and
 * remote key for the peer's buffer.
 * See file LICENSE for terms.
 */

#ifndef MGI_TEST_UCT_SIDE_H
#define MGI_TEST_UCT_SIDE_H

#include "pair.h"

#include <uct/api/uct.h>
#include <ucs/async/async_fwd.h>

#include <cuda.h>
#include <vector>

namespace mgi_test {

/* How the side's GPU buffer is allocated */
enum class mem_kind {
    cuda_malloc,   /* cudaMalloc: legacy IPC handle */
    vmm_fd,        /* cuMemCreate allowing a POSIX file descriptor */
    pool           /* cudaMallocAsync from the default pool: no handle */
};

const char *mem_kind_name(mem_kind kind);

/* Device memory of kind, size bytes (rounded up for VMM); freed by
 * free_device */
void *alloc_device(mem_kind kind, size_t size);
void free_device(mem_kind kind, void *ptr, size_t size);

class uct_side {
public:
    uct_side(int rank, peer_link &link, size_t buf_size,
             mem_kind kind = mem_kind::cuda_malloc);
    ~uct_side();

    void *buf() const { return m_buf; }
    uint64_t remote_buf() const { return m_remote_buf; }
    uct_rkey_t rkey() const { return m_rkey.rkey; }
    uct_ep_h ep() const { return m_ep; }
    const uct_iface_attr_t &attr() const { return m_attr; }
    /* what uct_rkey_unpack said of the peer's key (the side checks it is
     * UCS_OK unless the kind cannot be shared) */
    ucs_status_t unpack_status() const { return m_unpack_status; }

    void progress() { uct_worker_progress(m_worker); }
    ucs_status_t mem_query(const void *addr, size_t len,
                           uct_md_mem_attr_t *attr) {
        return uct_md_mem_query(m_md, addr, len, attr);
    }
    void wait(uct_completion_t *comp, const char *what);
    void flush();
    unsigned zcopy(bool put, void *local, size_t len, uint64_t remote,
                   uct_completion_t *comp);
    unsigned zcopy(bool put, void *local, size_t len, uint64_t remote,
                   uct_completion_t *comp, uct_mem_h memh);
    uct_iface_h iface() const { return m_iface; }

    /* Both sides together: deregister and free the buffer, allocate one
     * of the same size again (cudaMalloc tends to hand back the same
     * address), register it and swap remote keys again.  Returns whether
     * this side's new buffer has its old address. */
    bool renew_buffer(peer_link &link);

private:
    void exchange_keys(peer_link &link);

    uct_component_h  m_component = nullptr;
    uct_md_h         m_md        = nullptr;
    ucs_async_context_t *m_async = nullptr;
    uct_worker_h     m_worker    = nullptr;
    uct_iface_h      m_iface     = nullptr;
    uct_ep_h         m_ep        = nullptr;
    uct_mem_h        m_memh      = nullptr;
    uct_rkey_bundle_t m_rkey     = {};
    bool             m_has_rkey  = false;
    ucs_status_t     m_unpack_status = UCS_OK;
    uct_iface_attr_t m_attr      = {};
    size_t           m_rkey_size = 0;
    mem_kind         m_kind;
    size_t           m_size;
    void             *m_buf      = nullptr;
    uint64_t         m_remote_buf = 0;
};

void comp_cb(uct_completion_t *comp);
uct_completion_t make_comp(int count);
size_t max_size(const std::vector<size_t> &sizes);

} // namespace mgi_test

#endif
