/*
 * A stand-in libcuda.so.1 for testing discovery without a GPU: two H200s
 * (compute capability 9.0).  Only the calls gig_discover() makes.
 */
#include <stdio.h>
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
