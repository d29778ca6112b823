/*
 * A stand-in libcuda.so.1 for testing discovery without a GPU: two H200s
 * (compute capability 9.0).  Only the calls gig_discover() makes.
 */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

static const char *fake_bus_ids[] = {"0000:1B:00.0", "0000:43:00.0"};

int cuInit(unsigned flags)
{
    (void)flags;
    return 0;
}

int cuDeviceGetCount(int *count)
{
    *count = 2;
    return 0;
}

int cuDeviceGet(int *dev, int ordinal)
{
    if ((ordinal < 0) || (ordinal > 1)) {
        return 101;   /* CUDA_ERROR_INVALID_DEVICE */
    }
    *dev = ordinal;
    return 0;
}

int cuDeviceGetPCIBusId(char *buf, int len, int dev)
{
    snprintf(buf, len, "%s", fake_bus_ids[dev]);
    return 0;
}

int cuDeviceGetName(char *buf, int len, int dev)
{
    (void)dev;
    snprintf(buf, len, "NVIDIA H200");
    return 0;
}

int cuDeviceGetAttribute(int *val, int attr, int dev)
{
    (void)dev;
    *val = (attr == 75) ? 9 : 0;   /* compute capability major */
    return 0;
}

int cuDeviceCanAccessPeer(int *can, int dev, int peer)
{
    *can = (dev != peer);
    return 0;
}

/* memory and copies, on the host, for the calibration code path */
#include <stdlib.h>

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    *ctx = (void*)(long)(dev + 1);
    return 0;
}

int cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
int cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
int cuCtxSynchronize(void) { return 0; }
int cuCtxEnablePeerAccess(void *ctx, unsigned f)
{
    (void)ctx;
    (void)f;
    return 0;
}

int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    *p = (unsigned long long)(uintptr_t)calloc(1, n);
    return (*p != 0) ? 0 : 2;
}

int cuMemFree_v2(unsigned long long p)
{
    free((void*)(uintptr_t)p);
    return 0;
}

int cuMemAllocHost_v2(void **p, size_t n)
{
    *p = calloc(1, n);
    return (*p != NULL) ? 0 : 2;
}

int cuMemFreeHost(void *p)
{
    free(p);
    return 0;
}

int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n)
{
    memcpy(dst, (void*)(uintptr_t)src, n);
    return 0;
}

int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n)
{
    memcpy((void*)(uintptr_t)dst, src, n);
    return 0;
}

int cuMemcpyPeer(unsigned long long dst, void *dctx, unsigned long long src,
                 void *sctx, size_t n)
{
    (void)dctx;
    (void)sctx;
    memcpy((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n);
    return 0;
}
