/**
 * cuda_mgi: the one place where UCX versions differ for this transport.
 *
 * Every difference is a feature configure found by compiling against the
 * UCX in use (cuda_mgi_ucx.h); the code elsewhere is written once against
 * the names below.  What the transport takes from UCX is its UCT base
 * (component, md, iface and ep classes, config tables, mpool, keepalive):
 * nothing of another transport.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_COMPAT_H
#define UCT_CUDA_MGI_COMPAT_H

#include "cuda_mgi_ucx.h"

#include <uct/base/uct_md.h>
#include <uct/base/uct_iface.h>
#include <ucs/config/parser.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/arch/cpu.h>
#include <ucs/sys/math.h>
#if UCT_CUDA_MGI_HAVE_PTR_ARITH_H
#  include <ucs/sys/ptr_arith.h>
#endif


/* ---- memory domain ------------------------------------------------------ */

/* md query: one attribute struct, its capability fields under `cap` in
 * the first version of it */
#if UCT_CUDA_MGI_HAVE_MD_ATTR_V2
typedef uct_md_attr_v2_t uct_cuda_mgi_md_attr_t;
#  define UCT_CUDA_MGI_MD_CAP(_attr, _field) ((_attr)->_field)
#else
typedef uct_md_attr_t uct_cuda_mgi_md_attr_t;
#  define UCT_CUDA_MGI_MD_CAP(_attr, _field) ((_attr)->cap._field)
#endif

/* Invalidation for RMA, a flag of its own where UCX has one: UCP takes an
 * MD for the RMA bandwidth lanes of an endpoint with peer error handling
 * only if it has it (without it, such an endpoint's puts and gets of GPU
 * memory went through software emulation over shared memory) */
#if UCT_CUDA_MGI_HAVE_MD_INVALIDATE_RMA
#  define UCT_CUDA_MGI_MD_FLAGS_INVALIDATE (UCT_MD_FLAG_INVALIDATE | \
                                            UCT_MD_FLAG_INVALIDATE_RMA)
#else
#  define UCT_CUDA_MGI_MD_FLAGS_INVALIDATE UCT_MD_FLAG_INVALIDATE
#endif

/* mem_reg: flags alone, or a params struct carrying them */
#if UCT_CUDA_MGI_HAVE_MEM_REG_PARAMS
#  define UCT_CUDA_MGI_MEM_REG_ARG    const uct_md_mem_reg_params_t *params
#  define UCT_CUDA_MGI_MEM_REG_FLAGS  \
          UCT_MD_MEM_REG_FIELD_VALUE(params, flags, FIELD_FLAGS, 0)
#else
#  define UCT_CUDA_MGI_MEM_REG_ARG    unsigned flags
#  define UCT_CUDA_MGI_MEM_REG_FLAGS  (flags)
#endif

/* mkey_pack: some versions pass the registered range as well */
#if UCT_CUDA_MGI_HAVE_MKEY_PACK_ADDR
#  define UCT_CUDA_MGI_MKEY_PACK_RANGE_ARGS void *address, size_t length,
#else
#  define UCT_CUDA_MGI_MKEY_PACK_RANGE_ARGS
#endif

/* mem_query's attribute struct */
#if UCT_CUDA_MGI_HAVE_MEM_ATTR_V2
typedef uct_md_mem_attr_v2_t uct_cuda_mgi_mem_attr_t;
#else
typedef uct_md_mem_attr_t uct_cuda_mgi_mem_attr_t;
#endif

/* component rkey_unpack: with or without an (unused here) params struct */
#if UCT_CUDA_MGI_HAVE_RKEY_UNPACK_PARAMS
#  define UCT_CUDA_MGI_RKEY_UNPACK_PARAMS_ARG \
          const uct_rkey_unpack_params_t *unpack_params,
#else
#  define UCT_CUDA_MGI_RKEY_UNPACK_PARAMS_ARG
#endif


/* ---- configuration ------------------------------------------------------ */

/* "auto" of a bandwidth setting */
#ifdef UCS_CONFIG_DBL_IS_AUTO
#  define UCT_CUDA_MGI_CONFIG_IS_AUTO(_v) UCS_CONFIG_DBL_IS_AUTO(_v)
#else
#  define UCT_CUDA_MGI_CONFIG_IS_AUTO(_v) UCS_CONFIG_BW_IS_AUTO(_v)
#endif


/* ---- endpoint ----------------------------------------------------------- */

#if UCT_CUDA_MGI_HAVE_KEEPALIVE_CHECK_1
#  define UCT_CUDA_MGI_EP_CHECK_PARAMS(_flags, _comp) \
          UCT_EP_KEEPALIVE_CHECK_PARAM(_flags)
#else
#  define UCT_CUDA_MGI_EP_CHECK_PARAMS(_flags, _comp) \
          UCT_EP_KEEPALIVE_CHECK_PARAM(_flags, _comp)
#endif


/* ---- memory pool -------------------------------------------------------- */

static inline ucs_status_t
uct_cuda_mgi_mpool_init(ucs_mpool_t *mp, size_t elem_size, unsigned per_chunk,
                        ucs_mpool_ops_t *ops, const char *name)
{
#if UCT_CUDA_MGI_HAVE_MPOOL_PARAMS
    ucs_mpool_params_t params;

    ucs_mpool_params_reset(&params);
    params.elem_size       = elem_size;
    params.alignment       = UCS_SYS_CACHE_LINE_SIZE;
    params.elems_per_chunk = per_chunk;
    params.max_elems       = UINT_MAX;
    params.ops             = ops;
    params.name            = name;
    return ucs_mpool_init(&params, mp);
#else
    return ucs_mpool_init(mp, 0, elem_size, 0, UCS_SYS_CACHE_LINE_SIZE,
                          per_chunk, UINT_MAX, ops, name);
#endif
}

#endif
