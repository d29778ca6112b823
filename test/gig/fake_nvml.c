/*
 * A stand-in libnvidia-ml.so.1 for testing discovery without a GPU.
 * GIG_FAKE_NVML=switch (default): 18 links per GPU to an NVSwitch, as on
 * the 2 x H200 machine; GIG_FAKE_NVML=mesh: 6 links GPU to GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    char     bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char     bus_id[32];
} fake_pci_t;

static const char *fake_bus_ids[] = {"00000000:1B:00.0", "00000000:43:00.0"};

static int fake_mesh(void)
{
    const char *m = getenv("GIG_FAKE_NVML");
    return (m != NULL) && (strcmp(m, "mesh") == 0);
}

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **dev)
{
    const char *tail = strchr(bus_id, ':');
    int i;

    for (i = 0; i < 2; ++i) {
        if ((tail != NULL) &&
            (strcasecmp(strchr(fake_bus_ids[i], ':'), tail) == 0)) {
            *dev = (void*)(long)(i + 1);
            return 0;
        }
    }
    return 6;   /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active)
{
    (void)dev;
    if (link >= 18) {
        return 2;
    }
    *active = fake_mesh() ? (link < 6) : 1;
    return 0;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link,
                                        fake_pci_t *pci)
{
    int me = (int)(long)dev - 1;

    (void)link;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->bus_id, sizeof(pci->bus_id), "%s",
             fake_mesh() ? fake_bus_ids[1 - me] : "00000000:C1:00.0");
    return 0;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(void *dev, unsigned link, int *type)
{
    (void)dev;
    (void)link;
    *type = fake_mesh() ? 0 : 2;   /* GPU or SWITCH */
    return 0;
}

int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned *gen)
{
    (void)dev;
    *gen = 5;
    return 0;
}

int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned *width)
{
    (void)dev;
    *width = 16;
    return 0;
}

/* Only in mesh mode: the NVLink speed field, 25000 MB/s per link; the
 * switch mode leaves discovery to its table (no such call there) */
typedef struct {
    unsigned  field_id, scope_id;
    long long timestamp, latency_usec;
    int       value_type, nvml_return;
    union {
        unsigned long long ull;
        unsigned           ui;
    } value;
} fake_field_t;

int nvmlDeviceGetFieldValues(void *dev, int n, fake_field_t *fv)
{
    int i;

    (void)dev;
    for (i = 0; i < n; ++i) {
        if (!fake_mesh() || (fv[i].field_id != 90)) {
            fv[i].nvml_return = 3;   /* NVML_ERROR_NOT_SUPPORTED */
            continue;
        }
        fv[i].nvml_return = 0;
        fv[i].value_type  = 1;
        fv[i].value.ull   = 0;
        fv[i].value.ui    = 25000;
    }
    return 0;
}
