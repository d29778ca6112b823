/*
 * Optional calibration (paper §4.2 capacities): measures each path class on
 * the GPUs themselves (device to pinned host, host to device, and peer to
 * peer for every pair) with the CUDA driver opened by dlopen, and writes the
 * measured GB/s into the graph's edges in place of the table's values.
 * mgi_topo --calibrate --write FILE caches the result as a topology file,
 * which UCX_CUDA_MGI_TOPO_FILE then loads instead of discovering again.
 */
#include "gig.h"

#include <ucs/debug/log_def.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GIG_CALIB_REPS          3
#define GIG_CALIB_MAX_GPUS      64
/* CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED */
#define GIG_CU_PEER_ENABLED     704

typedef int gig_cu_res_t;
typedef void *gig_cu_ctx_t;
typedef unsigned long long gig_cu_ptr_t;

typedef struct {
    gig_cu_res_t (*cuInit)(unsigned);
    gig_cu_res_t (*cuDeviceGetCount)(int*);
    gig_cu_res_t (*cuDeviceGet)(int*, int);
    gig_cu_res_t (*cuDevicePrimaryCtxRetain)(gig_cu_ctx_t*, int);
    gig_cu_res_t (*cuDevicePrimaryCtxRelease_v2)(int);
    gig_cu_res_t (*cuCtxSetCurrent)(gig_cu_ctx_t);
    gig_cu_res_t (*cuCtxSynchronize)(void);
    gig_cu_res_t (*cuCtxEnablePeerAccess)(gig_cu_ctx_t, unsigned);
    gig_cu_res_t (*cuDeviceCanAccessPeer)(int*, int, int);
    gig_cu_res_t (*cuMemAlloc_v2)(gig_cu_ptr_t*, size_t);
    gig_cu_res_t (*cuMemFree_v2)(gig_cu_ptr_t);
    gig_cu_res_t (*cuMemAllocHost_v2)(void**, size_t);
    gig_cu_res_t (*cuMemFreeHost)(void*);
    gig_cu_res_t (*cuMemcpyDtoH_v2)(void*, gig_cu_ptr_t, size_t);
    gig_cu_res_t (*cuMemcpyHtoD_v2)(gig_cu_ptr_t, const void*, size_t);
    gig_cu_res_t (*cuMemcpyPeer)(gig_cu_ptr_t, gig_cu_ctx_t, gig_cu_ptr_t,
                                 gig_cu_ctx_t, size_t);
    gig_cu_res_t (*cuGetErrorName)(gig_cu_res_t, const char**);
    gig_cu_res_t (*cuGetErrorString)(gig_cu_res_t, const char**);
} gig_calib_cu_t;

typedef struct {
    int          vertex, dev;
    gig_cu_ctx_t ctx;
    gig_cu_ptr_t buf;
    void         *host;
    double       d2h, h2d;
} gig_calib_gpu_t;

static double gig_calib_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A driver error's name and string, never unset pointers ("?" where the
 * driver cannot say) */
static void gig_calib_cu_error(const gig_calib_cu_t *cu, gig_cu_res_t r,
                               const char **name, const char **str)
{
    if ((cu->cuGetErrorName == NULL) || (cu->cuGetErrorName(r, name) != 0) ||
        (*name == NULL)) {
        *name = "?";
    }
    if ((cu->cuGetErrorString == NULL) ||
        (cu->cuGetErrorString(r, str) != 0) || (*str == NULL)) {
        *str = "?";
    }
}

#define GIG_CALIB_CALL(_cu, _call) \
    ({ \
        gig_cu_res_t _r = (_cu)->_call; \
        const char *_n, *_s; \
        if (_r != 0) { \
            gig_calib_cu_error((_cu), _r, &_n, &_s); \
            ucs_debug("gig calibration: %s failed: %d %s: %s", #_call, _r, \
                      _n, _s); \
        } \
        _r; \
    })

/* best GB/s of GIG_CALIB_REPS timed copies */
#define GIG_CALIB_TIME(_cu, _bytes, _copy, _gbps) \
    do { \
        double _best = 0, _t; \
        int _i; \
        for (_i = 0; _i < GIG_CALIB_REPS; ++_i) { \
            _t = gig_calib_now(); \
            if ((_copy) != 0 || (_cu)->cuCtxSynchronize() != 0) { \
                _best = 0; \
                break; \
            } \
            _t = gig_calib_now() - _t; \
            if ((_t > 0) && ((_bytes) / _t / 1e9 > _best)) { \
                _best = (_bytes) / _t / 1e9; \
            } \
        } \
        _gbps = _best; \
    } while (0)

static void gig_calib_set(gig_graph_t *g, int a, int b, double gbps,
                          const char *what)
{
    int e = gig_graph_edge(g, a, b);

    if ((e == GIG_NONE) || (gbps <= 0)) {
        return;
    }
    ucs_debug("gig calibration: %s->%s (%s) %.2f -> %.2f GB/s", g->v[a].name,
              g->v[b].name, what, g->e[e].capacity, gbps);
    g->e[e].capacity = gbps;
}

/* The GPU's PCIe neighbour (switch or CPU) */
static int gig_calib_pcie_up(const gig_graph_t *g, int gpu)
{
    int i;

    for (i = g->out_start[gpu]; i < g->out_start[gpu + 1]; ++i) {
        if (g->e[g->out_edge[i]].link == GIG_LINK_PCIE) {
            return g->e[g->out_edge[i]].dst;
        }
    }
    return GIG_NONE;
}

static int gig_calib_nvswitch(const gig_graph_t *g, int gpu)
{
    int i, v;

    for (i = g->out_start[gpu]; i < g->out_start[gpu + 1]; ++i) {
        v = g->e[g->out_edge[i]].dst;
        if (g->v[v].type == GIG_VTX_NVSWITCH) {
            return v;
        }
    }
    return GIG_NONE;
}

ucs_status_t gig_calibrate(gig_graph_t *g, size_t bytes)
{
    gig_calib_gpu_t gpu[GIG_CALIB_MAX_GPUS];
    gig_calib_cu_t cu;
    ucs_status_t status = UCS_OK;
    int n = 0, ndev = 0, i, j, can, sw, up;
    double p2p;
    void *lib;

    if (!g->finalized) {
        return UCS_ERR_INVALID_PARAM;
    }
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        ucs_debug("gig calibration of '%s': no CUDA driver", g->origin);
        return UCS_ERR_NO_DEVICE;
    }
#define GIG_CALIB_SYM(_fn) \
    if ((*(void**)&cu._fn = dlsym(lib, #_fn)) == NULL) { \
        ucs_error("gig calibration: libcuda.so.1 lacks %s", #_fn); \
        return UCS_ERR_UNSUPPORTED; \
    }
    GIG_CALIB_SYM(cuInit);
    GIG_CALIB_SYM(cuDeviceGetCount);
    GIG_CALIB_SYM(cuDeviceGet);
    GIG_CALIB_SYM(cuDevicePrimaryCtxRetain);
    GIG_CALIB_SYM(cuDevicePrimaryCtxRelease_v2);
    GIG_CALIB_SYM(cuCtxSetCurrent);
    GIG_CALIB_SYM(cuCtxSynchronize);
    GIG_CALIB_SYM(cuCtxEnablePeerAccess);
    GIG_CALIB_SYM(cuDeviceCanAccessPeer);
    GIG_CALIB_SYM(cuMemAlloc_v2);
    GIG_CALIB_SYM(cuMemFree_v2);
    GIG_CALIB_SYM(cuMemAllocHost_v2);
    GIG_CALIB_SYM(cuMemFreeHost);
    GIG_CALIB_SYM(cuMemcpyDtoH_v2);
    GIG_CALIB_SYM(cuMemcpyHtoD_v2);
    GIG_CALIB_SYM(cuMemcpyPeer);
    /* the error names are for messages only: not required */
    *(void**)&cu.cuGetErrorName   = dlsym(lib, "cuGetErrorName");
    *(void**)&cu.cuGetErrorString = dlsym(lib, "cuGetErrorString");
#undef GIG_CALIB_SYM
    if ((cu.cuInit(0) != 0) || (cu.cuDeviceGetCount(&ndev) != 0)) {
        ucs_debug("gig calibration of '%s': no usable CUDA device",
                  g->origin);
        return UCS_ERR_NO_DEVICE;
    }

    for (i = 0; (i < g->nv) && (n < GIG_CALIB_MAX_GPUS); ++i) {
        if ((g->v[i].type != GIG_VTX_GPU) || (g->v[i].cuda_dev < 0) ||
            (g->v[i].cuda_dev >= ndev) || (g->v[i].server != 0)) {
            continue;
        }
        memset(&gpu[n], 0, sizeof(gpu[n]));
        gpu[n].vertex = i;
        if ((cu.cuDeviceGet(&gpu[n].dev, g->v[i].cuda_dev) != 0) ||
            GIG_CALIB_CALL(&cu, cuDevicePrimaryCtxRetain(&gpu[n].ctx,
                                                         gpu[n].dev)) ||
            GIG_CALIB_CALL(&cu, cuCtxSetCurrent(gpu[n].ctx)) ||
            GIG_CALIB_CALL(&cu, cuMemAlloc_v2(&gpu[n].buf, bytes)) ||
            GIG_CALIB_CALL(&cu, cuMemAllocHost_v2(&gpu[n].host, bytes))) {
            ucs_error("gig calibration: GPU %s: setup failed",
                      g->v[i].name);
            status = UCS_ERR_NO_RESOURCE;
            ++n;
            goto out;
        }
        memset(gpu[n].host, 1, bytes);
        GIG_CALIB_TIME(&cu, bytes, cu.cuMemcpyHtoD_v2(gpu[n].buf,
                                                      gpu[n].host, bytes),
                       gpu[n].h2d);
        GIG_CALIB_TIME(&cu, bytes, cu.cuMemcpyDtoH_v2(gpu[n].host,
                                                      gpu[n].buf, bytes),
                       gpu[n].d2h);
        up = gig_calib_pcie_up(g, i);
        if (up != GIG_NONE) {
            gig_calib_set(g, i, up, gpu[n].d2h, "device to host");
            gig_calib_set(g, up, i, gpu[n].h2d, "host to device");
        }
        ++n;
    }

    for (i = 0; i < n; ++i) {
        for (j = 0; j < n; ++j) {
            if ((i == j) ||
                (cu.cuDeviceCanAccessPeer(&can, gpu[i].dev, gpu[j].dev) !=
                 0) || !can) {
                continue;
            }
            cu.cuCtxSetCurrent(gpu[i].ctx);
            if ((cu.cuCtxEnablePeerAccess(gpu[j].ctx, 0) != 0) &&
                (cu.cuCtxEnablePeerAccess(gpu[j].ctx, 0) !=
                 GIG_CU_PEER_ENABLED)) {
                continue;
            }
            GIG_CALIB_TIME(&cu, bytes, cu.cuMemcpyPeer(gpu[j].buf,
                           gpu[j].ctx, gpu[i].buf, gpu[i].ctx, bytes), p2p);
            if (gig_graph_edge(g, gpu[i].vertex, gpu[j].vertex) !=
                GIG_NONE) {
                gig_calib_set(g, gpu[i].vertex, gpu[j].vertex, p2p,
                              "peer");
            } else if ((sw = gig_calib_nvswitch(g, gpu[i].vertex)) !=
                       GIG_NONE) {
                /* one copy engine stream: a lower bound of the port */
                int e1 = gig_graph_edge(g, gpu[i].vertex, sw);
                int e2 = gig_graph_edge(g, sw, gpu[j].vertex);
                if ((e1 != GIG_NONE) && (g->e[e1].capacity > p2p)) {
                    gig_calib_set(g, gpu[i].vertex, sw, p2p, "peer");
                }
                if ((e2 != GIG_NONE) && (g->e[e2].capacity > p2p)) {
                    gig_calib_set(g, sw, gpu[j].vertex, p2p, "peer");
                }
            }
        }
    }
    if (n > 0) {
        size_t len = strlen(g->origin);
        snprintf(g->origin + len, sizeof(g->origin) - len, ", calibrated");
    }

out:
    for (i = 0; i < n; ++i) {
        cu.cuCtxSetCurrent(gpu[i].ctx);
        if (gpu[i].host != NULL) {
            cu.cuMemFreeHost(gpu[i].host);
        }
        if (gpu[i].buf != 0) {
            cu.cuMemFree_v2(gpu[i].buf);
        }
        if (gpu[i].ctx != NULL) {
            cu.cuDevicePrimaryCtxRelease_v2(gpu[i].dev);
        }
    }
    return (n == 0) ? UCS_ERR_NO_DEVICE : status;
}
