#
# What differs between the UCX versions cuda_mgi builds against, found by
# compiling against that UCX's internal headers (never by its version
# number).  Each check sets an AC_SUBST variable to 1 or 0;
# src/uct/cuda_mgi/cuda_mgi_ucx.h.in turns them into macros that
# cuda_mgi_compat.h alone reads.
#

# MGI_UCX_CHECK(VARIABLE, DESCRIPTION, INCLUDES, BODY)
AC_DEFUN([MGI_UCX_CHECK], [
    AC_MSG_CHECKING([whether UCX has $2])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[$3]], [[$4]])],
                      [AC_MSG_RESULT([yes]); $1=1],
                      [AC_MSG_RESULT([no]);  $1=0])
    AC_SUBST([$1])
])

AC_DEFUN([MGI_UCX_FEATURES], [
    mgi_save_CPPFLAGS=$CPPFLAGS
    mgi_save_CFLAGS=$CFLAGS
    CPPFLAGS="$CPPFLAGS $UCX_INTERNAL_CPPFLAGS $UCX_CPPFLAGS $CUDA_CPPFLAGS"
    # a function of the wrong type for a field is an error, not a warning
    CFLAGS="$CFLAGS -Werror=incompatible-pointer-types -Werror=int-conversion"
    CFLAGS="$CFLAGS -Werror=implicit-function-declaration"
    AC_LANG_PUSH([C])

    MGI_UCX_CHECK([MGI_UCX_MD_ATTR_V2], [md query with uct_md_attr_v2_t],
        [#include <uct/base/uct_md.h>
         static ucs_status_t q(uct_md_h md, uct_md_attr_v2_t *a) { return UCS_OK; }],
        [uct_md_ops_t o = {.query = q}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_MEM_REG_PARAMS], [mem_reg with uct_md_mem_reg_params_t],
        [#include <uct/base/uct_md.h>
         static ucs_status_t r(uct_md_h md, void *a, size_t l,
                               const uct_md_mem_reg_params_t *p, uct_mem_h *m)
         { return UCS_OK; }],
        [uct_md_ops_t o = {.mem_reg = r}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_MKEY_PACK_ADDR], [mkey_pack with the address and length],
        [#include <uct/base/uct_md.h>
         static ucs_status_t p(uct_md_h md, uct_mem_h m, void *a, size_t l,
                               const uct_md_mkey_pack_params_t *pp, void *b)
         { return UCS_OK; }],
        [uct_md_ops_t o = {.mkey_pack = p}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_MEM_ATTR_V2], [mem_query with uct_md_mem_attr_v2_t],
        [#include <uct/base/uct_md.h>
         static ucs_status_t q(uct_md_h md, const void *a, size_t l,
                               uct_md_mem_attr_v2_t *m) { return UCS_OK; }],
        [uct_md_ops_t o = {.mem_query = q}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_MD_SOCKADDR], [the md op is_sockaddr_accessible],
        [#include <uct/base/uct_md.h>],
        [uct_md_ops_t o = {.is_sockaddr_accessible = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_MD_MEM_ATTACH], [the md op mem_attach],
        [#include <uct/base/uct_md.h>],
        [uct_md_ops_t o = {.mem_attach = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_MD_MEM_ELEM_PACK], [the md op mem_elem_pack],
        [#include <uct/base/uct_md.h>],
        [uct_md_ops_t o = {.mem_elem_pack = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_RKEY_UNPACK_PARAMS], [rkey_unpack with uct_rkey_unpack_params_t],
        [#include <uct/base/uct_component.h>
         static ucs_status_t u(uct_component_t *c, const void *b,
                               const uct_rkey_unpack_params_t *p,
                               uct_rkey_t *r, void **h) { return UCS_OK; }],
        [uct_component_t c = {.rkey_unpack = u}; (void)c;])
    MGI_UCX_CHECK([MGI_UCX_RKEY_COMPARE], [the component op rkey_compare],
        [#include <uct/base/uct_md.h>],
        [uct_component_t c = {.rkey_compare = uct_base_rkey_compare}; (void)c;])
    MGI_UCX_CHECK([MGI_UCX_REACHABLE_V2], [iface_is_reachable_v2],
        [#include <uct/base/uct_iface.h>],
        [uct_iface_internal_ops_t o = {.iface_is_reachable_v2 = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_IFACE_QUERY_V2], [iface_query_v2],
        [#include <uct/base/uct_iface.h>],
        [uct_iface_internal_ops_t o = {.iface_query_v2 = uct_iface_base_query_v2}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_EP_IS_CONNECTED], [ep_is_connected],
        [#include <uct/base/uct_iface.h>],
        [uct_iface_internal_ops_t o = {.ep_is_connected = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_EP_CONNECT_TO_EP_V2], [ep_connect_to_ep_v2],
        [#include <uct/base/uct_iface.h>],
        [uct_iface_internal_ops_t o = {.ep_connect_to_ep_v2 = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_EP_GET_DEVICE_EP], [ep_get_device_ep],
        [#include <uct/base/uct_iface.h>],
        [uct_iface_internal_ops_t o = {.ep_get_device_ep = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_EP_PUT_SGL_ZCOPY], [ep_put_sgl_zcopy],
        [#include <uct/base/uct_iface.h>],
        [uct_iface_internal_ops_t o = {.ep_put_sgl_zcopy = NULL}; (void)o;])
    MGI_UCX_CHECK([MGI_UCX_MPOOL_PARAMS], [ucs_mpool_params_t],
        [#include <ucs/datastruct/mpool.h>],
        [ucs_mpool_params_t p; ucs_mpool_params_reset(&p);])
    MGI_UCX_CHECK([MGI_UCX_KEEPALIVE_CHECK_1], [a one-argument UCT_EP_KEEPALIVE_CHECK_PARAM],
        [#include <uct/base/uct_iface.h>
         static ucs_status_t k(unsigned flags) {
             UCT_EP_KEEPALIVE_CHECK_PARAM(flags);
             return UCS_OK;
         }],
        [(void)k(0);])
    MGI_UCX_CHECK([MGI_UCX_PTR_ARITH_H], [ucs/sys/ptr_arith.h],
        [#include <ucs/sys/ptr_arith.h>], [])
    MGI_UCX_CHECK([MGI_UCX_MD_INVALIDATE_RMA], [the md flag UCT_MD_FLAG_INVALIDATE_RMA],
        [#include <uct/api/v2/uct_v2.h>],
        [uint64_t f = UCT_MD_FLAG_INVALIDATE_RMA; (void)f;])

    AC_LANG_POP([C])
    CPPFLAGS=$mgi_save_CPPFLAGS
    CFLAGS=$mgi_save_CFLAGS

    # Whether UCP selects protocols with its second protocol layer unless
    # UCX_PROTO_ENABLE says otherwise: the first one looks for RMA lanes
    # only among MDs that register host memory
    AC_MSG_CHECKING([whether UCP's new protocol selection is its default])
    AS_IF([grep -q '"PROTO_ENABLE", "y"' "$with_ucx_src/src/ucp/core/ucp_context.c"],
          [AC_MSG_RESULT([yes]); MGI_UCX_PROTO_V2_DEFAULT=1],
          [AC_MSG_RESULT([no]);  MGI_UCX_PROTO_V2_DEFAULT=0])
    AC_SUBST([MGI_UCX_PROTO_V2_DEFAULT])

    # Module discovery: UCX that scans its module directory finds
    # libuct_cuda_mgi.so there; older UCX opens only the modules its
    # config.h names (uct_cuda_MODULES)
    AC_MSG_CHECKING([whether UCX scans its module directory])
    AS_IF([grep -q 'ucs_module_load_from_dir' "$with_ucx_src/src/ucs/sys/module.c"],
          [AC_MSG_RESULT([yes]); mgi_ucx_scans_modules=yes],
          [AC_MSG_RESULT([no]);  mgi_ucx_scans_modules=no])
])
