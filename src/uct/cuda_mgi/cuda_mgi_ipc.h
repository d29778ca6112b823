/**
 * cuda_mgi: GPU memory shared between the processes of one host.
 *
 * The exporting side packs a remote key (uct_cuda_mgi_rkey_t) per
 * registered allocation: a versioned, self-describing struct with the
 * allocation's handle, where it lives and which process and GPU own it.
 * The importing side maps the handle once per CUDA context and keeps the
 * mapping in a process-wide cache (the rules are in cuda_mgi_ipc.c).
 *
 * Handle kinds, chosen by what the allocation allows:
 *   legacy    memory of cudaMalloc / cuMemAlloc: cuIpcGetMemHandle
 *   fabric    memory of cuMemCreate that allows CU_MEM_HANDLE_TYPE_FABRIC
 *   posix_fd  memory of cuMemCreate that allows a POSIX file descriptor;
 *             the importer takes the descriptor from the exporting process
 *             with pidfd_getfd (the same rule as ptrace: same user, and
 *             kernel.yama.ptrace_scope 0 or a related process)
 *   none      host memory, or GPU memory no handle can export (e.g. from a
 *             cudaMallocAsync pool without IPC handle types): such a key
 *             is unreachable from other processes, and UCX takes another
 *             transport for it
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_IPC_H
#define UCT_CUDA_MGI_IPC_H

#include <ucs/type/status.h>
#include <ucs/debug/log_def.h>
#include <cuda.h>
#include <stdint.h>
#include <sys/types.h>


#define UCT_CUDA_MGI_RKEY_MAGIC    0x474d  /* "MG" */
/* 1 was the earlier format, which carried UCX's cuda_ipc key */
#define UCT_CUDA_MGI_RKEY_VERSION  2


typedef enum {
    UCT_CUDA_MGI_HANDLE_NONE     = 0,
    UCT_CUDA_MGI_HANDLE_LEGACY   = 1,
    UCT_CUDA_MGI_HANDLE_POSIX_FD = 2,
    UCT_CUDA_MGI_HANDLE_FABRIC   = 3,
    UCT_CUDA_MGI_HANDLE_LAST
} uct_cuda_mgi_handle_type_t;


/**
 * The packed remote key: what a peer needs to map one allocation.  Fields
 * are naturally aligned, so the layout is the same on every compiler; a
 * peer with another version of this layout is refused by name.
 */
typedef struct uct_cuda_mgi_rkey {
    uint16_t magic;        /* UCT_CUDA_MGI_RKEY_MAGIC */
    uint8_t  version;      /* UCT_CUDA_MGI_RKEY_VERSION */
    uint8_t  handle_type;  /* uct_cuda_mgi_handle_type_t */
    int32_t  pid;          /* exporting process ... */
    uint64_t proc_start;   /* ... and its start time: a reused pid is
                              another process */
    uint64_t system_id;    /* host of that process */
    uint64_t base;         /* the allocation, in the exporter's space */
    uint64_t length;
    uint64_t buffer_id;    /* CU_POINTER_ATTRIBUTE_BUFFER_ID: memory freed
                              and allocated again at the same address has
                              another */
    CUuuid   uuid;         /* the GPU the memory is on */
    union {
        CUipcMemHandle legacy;
        int32_t        fd;         /* in the exporting process */
        uint8_t        fabric[64]; /* CUmemFabricHandle */
    } handle;
} uct_cuda_mgi_rkey_t;


/* A local registration: the key it packs, and the descriptor it owns */
typedef struct uct_cuda_mgi_memh {
    uct_cuda_mgi_rkey_t key;
    int                 fd;   /* posix_fd export, else -1 */
} uct_cuda_mgi_memh_t;


/* One remote allocation mapped here */
typedef struct uct_cuda_mgi_mapping uct_cuda_mgi_mapping_t;

struct uct_cuda_mgi_mapping {
    CUdeviceptr ptr;      /* the allocation's base, in this process */
    CUcontext   ctx;      /* where it was opened (legacy handles map per
                             context); NULL: every context (VMM) */
    /* below: the cache's (cuda_mgi_ipc.c) */
    int32_t     pid;
    uint64_t    proc_start;
    uint64_t    base;
    uint64_t    length;
    uint64_t    buffer_id;
    uint8_t     handle_type;
    int         own;           /* this process's memory, used in place */
    uint64_t    access_mask;   /* VMM: devices given access so far */
    unsigned    refcount;      /* the cache's own + users' */
    int         stale;         /* out of the cache: closed at refcount 0 */
};


const char *uct_cuda_mgi_handle_type_name(unsigned type);

/* Name of a driver error (also where the stub libcuda cannot say) */
const char *uct_cuda_mgi_cu_error(CUresult cu_err);

/* A driver call whose failure is logged as an error with the call's name;
 * evaluates to UCS_OK or UCS_ERR_IO_ERROR */
#define UCT_CUDA_MGI_CU_LOG_ERR(_call) \
    ({ \
        CUresult _cu_err = (_call); \
        if (_cu_err != CUDA_SUCCESS) { \
            ucs_error("cuda_mgi: %s failed: %s", #_call, \
                      uct_cuda_mgi_cu_error(_cu_err)); \
        } \
        (_cu_err == CUDA_SUCCESS) ? UCS_OK : UCS_ERR_IO_ERROR; \
    })

/* Fill memh for the GPU allocation that holds address, on device */
ucs_status_t uct_cuda_mgi_ipc_export(void *address, CUdevice device,
                                     uct_cuda_mgi_memh_t *memh,
                                     ucs_log_level_t level);

void uct_cuda_mgi_ipc_export_release(uct_cuda_mgi_memh_t *memh);

/* UCS_OK if a peer's packed key is one this build reads, else
 * UCS_ERR_INVALID_PARAM with an error naming the difference */
ucs_status_t uct_cuda_mgi_ipc_check_key(const void *packed);

/* Whether key is memory of this very process */
int uct_cuda_mgi_ipc_key_is_own(const uct_cuda_mgi_rkey_t *key);

/* Map key's allocation for use from ctx (pushed if not current) and take a
 * reference to the mapping; repeated calls find it in the cache.  Memory
 * of this process itself is used at its own address. */
ucs_status_t uct_cuda_mgi_ipc_map(const uct_cuda_mgi_rkey_t *key,
                                  CUcontext ctx,
                                  uct_cuda_mgi_mapping_t **map_p);

/* Another reference to a mapping already held */
void uct_cuda_mgi_ipc_map_ref(uct_cuda_mgi_mapping_t *map);

/* Drop a reference (the mapping stays cached unless it went stale) */
void uct_cuda_mgi_ipc_unmap(uct_cuda_mgi_mapping_t *map);

/* Close the cached mappings of process pid that nobody uses */
void uct_cuda_mgi_ipc_forget_peer(pid_t pid);

#endif
