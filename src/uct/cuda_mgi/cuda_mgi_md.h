/**
 * cuda_mgi: MGI multi-GPU transport for UCX.
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_MD_H
#define UCT_CUDA_MGI_MD_H

#include <uct/base/uct_md.h>
#include <uct/cuda/cuda_ipc/cuda_ipc_md.h>
#include <ucs/config/types.h>


#define UCT_CUDA_MGI_COMPONENT_NAME "cuda_mgi"
#define UCT_CUDA_MGI_TL_NAME        "cuda_mgi"


/**
 * What a memory key describes.  Host memory is registered too (with no
 * handle), only because UCX 1.13's RMA protocols look for lanes whose MD
 * registers host memory; such keys are unreachable from other processes, so
 * UCP never sends host-memory RMA through this transport.
 */
typedef enum {
    UCT_CUDA_MGI_KEY_HOST = 0x6d67690aU, /* "mgi\n": no handle */
    UCT_CUDA_MGI_KEY_CUDA = 0x6d676943U  /* "mgiC": CUDA IPC handle */
} uct_cuda_mgi_key_type_t;


/**
 * Memory handle and packed remote key.  The CUDA part is UCX's own cuda_ipc
 * key, so that mappings of a remote allocation are shared with cuda_ipc
 * through its handle cache (opening one IPC handle twice in a context fails).
 */
typedef struct uct_cuda_mgi_key {
    uint32_t           type;    /* uct_cuda_mgi_key_type_t */
    uint32_t           padding;
    uct_cuda_ipc_key_t ipc;     /* valid for UCT_CUDA_MGI_KEY_CUDA */
} uct_cuda_mgi_key_t;


typedef struct uct_cuda_mgi_md_config {
    uct_md_config_t super;
} uct_cuda_mgi_md_config_t;


typedef struct uct_cuda_mgi_md {
    uct_md_t super;
} uct_cuda_mgi_md_t;


extern uct_component_t uct_cuda_mgi_component;


/* Whether address is (non-managed) GPU memory; its device if so */
int uct_cuda_mgi_is_device_ptr(const void *address, CUdevice *dev_p);

#endif
