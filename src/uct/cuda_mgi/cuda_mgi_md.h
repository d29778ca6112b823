/**
 * cuda_mgi: MGI multi-GPU transport for UCX.
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_MD_H
#define UCT_CUDA_MGI_MD_H

#include "cuda_mgi_compat.h"
#include "cuda_mgi_ipc.h"

#include <uct/base/uct_md.h>
#include <ucs/config/types.h>


#define UCT_CUDA_MGI_COMPONENT_NAME "cuda_mgi"
#define UCT_CUDA_MGI_TL_NAME        "cuda_mgi"
#define UCT_CUDA_MGI_DEV_NAME       "cuda"


/**
 * An unpacked remote key: the peer's key, and its mapping in the context
 * that was current when it was unpacked (NULL if none was, or the memory
 * could not be mapped then).  Operations from that context use the
 * mapping without a cache lookup.
 */
typedef struct uct_cuda_mgi_remote {
    uct_cuda_mgi_rkey_t    key;
    CUcontext              ctx;      /* current at unpack */
    uct_cuda_mgi_mapping_t *mapping; /* made for ctx then, held */
} uct_cuda_mgi_remote_t;


typedef struct uct_cuda_mgi_md_config {
    uct_md_config_t super;
} uct_cuda_mgi_md_config_t;


typedef struct uct_cuda_mgi_md {
    uct_md_t super;
    int      reg_host;   /* register host memory too (see md_query) */
} uct_cuda_mgi_md_t;


extern uct_component_t uct_cuda_mgi_component;


/* Whether address is (non-managed) GPU memory; its device if so */
int uct_cuda_mgi_is_device_ptr(const void *address, CUdevice *dev_p);

#endif
