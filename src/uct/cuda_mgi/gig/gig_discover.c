/*
 * Discovery of this server's GIG (paper §4.2, Table 4):
 *  - GPUs, PCI bus ids, compute capability, peer access: CUDA driver API
 *  - NVLinks, their remote ends (GPU or NVSwitch): NVML
 *  - NUMA nodes (one CPU vertex each), PCIe tree, NICs: hwloc
 *  - PCIe generation/width: sysfs max_link_speed / max_link_width (the
 *    current speed drops when a GPU idles), GPUDirect: nvidia_peermem
 * libcuda.so.1 and libnvidia-ml.so.1 are opened with dlopen: no driver is
 * needed to build or to run; without one the graph has no GPUs.
 */
#include "gig.h"

#include <ucs/debug/log_def.h>

#include <ctype.h>
#include <dirent.h>
#include <stddef.h>
#include <dlfcn.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GIG_DISC_MAX_GPUS     64
#define GIG_DISC_MAX_DEVS     256
#define GIG_DISC_NVLINKS      18     /* NVML_NVLINK_MAX_LINKS of nvml.h */

/* The few driver types and entry points used, declared here so that
 * building needs neither cuda.h nor nvml.h */
typedef int gig_cu_result_t;
typedef int gig_cu_device_t;
typedef void *gig_nvml_device_t;
typedef struct {
    char          bus_id_legacy[16];
    unsigned      domain, bus, device, pci_device_id;
    unsigned      pci_subsystem_id;
    char          bus_id[32];
} gig_nvml_pci_t;   /* layout of nvmlPciInfo_t */

typedef struct {
    unsigned      field_id, scope_id;
    long long     timestamp, latency_usec;
    int           value_type, nvml_return;
    union {
        double             d;
        unsigned           ui;
        unsigned long      ul;
        unsigned long long ull;
        long long          sll;
    } value;
} gig_nvml_field_t;  /* layout of nvmlFieldValue_t */

#define GIG_CU_DEV_ATTR_CC_MAJOR   75
#define GIG_NVML_NVLINK_SWITCH     2
#define GIG_NVML_FI_NVLINK_SPEED   90  /* ..._NVLINK_SPEED_MBPS_COMMON */
#define GIG_NVML_VALUE_UINT        1

typedef struct {
    void            *cuda, *nvml;
    gig_cu_result_t (*cuInit)(unsigned);
    gig_cu_result_t (*cuDeviceGetCount)(int*);
    gig_cu_result_t (*cuDeviceGet)(gig_cu_device_t*, int);
    gig_cu_result_t (*cuDeviceGetPCIBusId)(char*, int, gig_cu_device_t);
    gig_cu_result_t (*cuDeviceGetName)(char*, int, gig_cu_device_t);
    gig_cu_result_t (*cuDeviceGetAttribute)(int*, int, gig_cu_device_t);
    gig_cu_result_t (*cuDeviceCanAccessPeer)(int*, gig_cu_device_t,
                                             gig_cu_device_t);
    int             (*nvmlInit_v2)(void);
    int             (*nvmlShutdown)(void);
    int             (*nvmlDeviceGetHandleByPciBusId_v2)(const char*,
                                                        gig_nvml_device_t*);
    int             (*nvmlDeviceGetNvLinkState)(gig_nvml_device_t, unsigned,
                                                int*);
    int             (*nvmlDeviceGetNvLinkRemotePciInfo_v2)(gig_nvml_device_t,
                                                           unsigned,
                                                           gig_nvml_pci_t*);
    int             (*nvmlDeviceGetNvLinkRemoteDeviceType)(gig_nvml_device_t,
                                                           unsigned, int*);
    int             (*nvmlDeviceGetMaxPcieLinkGeneration)(gig_nvml_device_t,
                                                          unsigned*);
    int             (*nvmlDeviceGetMaxPcieLinkWidth)(gig_nvml_device_t,
                                                     unsigned*);
    int             (*nvmlDeviceGetFieldValues)(gig_nvml_device_t, int,
                                                gig_nvml_field_t*);
} gig_drv_t;

#if defined(__has_include)
#if __has_include(<nvml.h>)
#include <nvml.h>
/* the declarations above must match the driver's */
_Static_assert(sizeof(gig_nvml_pci_t) == sizeof(nvmlPciInfo_t),
               "nvmlPciInfo_t layout");
_Static_assert(GIG_DISC_NVLINKS == NVML_NVLINK_MAX_LINKS, "NVLink count");
_Static_assert(GIG_NVML_NVLINK_SWITCH == NVML_NVLINK_DEVICE_TYPE_SWITCH,
               "NVLink switch type");
_Static_assert(sizeof(gig_nvml_field_t) == sizeof(nvmlFieldValue_t),
               "nvmlFieldValue_t layout");
_Static_assert(offsetof(gig_nvml_field_t, value) ==
               offsetof(nvmlFieldValue_t, value), "nvmlFieldValue_t value");
_Static_assert(GIG_NVML_FI_NVLINK_SPEED ==
               NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, "NVLink speed field");
_Static_assert(GIG_NVML_VALUE_UINT == NVML_VALUE_TYPE_UNSIGNED_INT,
               "NVML value type");
#endif
#endif

typedef struct {
    char        bus_id[GIG_PCI_BUS_ID_MAX];
    char        name[64];
    int         cc_major;
    int         vertex;
    double      pcie_cap;   /* from NVML's max generation/width, or 0 */
    hwloc_obj_t obj;
} gig_disc_gpu_t;

#define GIG_DLSYM(_lib, _d, _fn) \
    ((_d)->_fn = dlsym((_d)->_lib, #_fn))

static int gig_drv_cuda_open(gig_drv_t *d)
{
    d->cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (d->cuda == NULL) {
        ucs_debug("gig discovery: no CUDA driver (%s): no GPU vertices",
                  dlerror());
        return 0;
    }
    if ((GIG_DLSYM(cuda, d, cuInit) == NULL) ||
        (GIG_DLSYM(cuda, d, cuDeviceGetCount) == NULL) ||
        (GIG_DLSYM(cuda, d, cuDeviceGet) == NULL) ||
        (GIG_DLSYM(cuda, d, cuDeviceGetPCIBusId) == NULL) ||
        (GIG_DLSYM(cuda, d, cuDeviceGetName) == NULL) ||
        (GIG_DLSYM(cuda, d, cuDeviceGetAttribute) == NULL) ||
        (GIG_DLSYM(cuda, d, cuDeviceCanAccessPeer) == NULL)) {
        ucs_debug("gig discovery: libcuda.so.1 lacks a driver API call: "
                  "no GPU vertices");
        return 0;
    }
    if (d->cuInit(0) != 0) {
        ucs_debug("gig discovery: cuInit() failed (stub library or no "
                  "device): no GPU vertices");
        return 0;
    }
    return 1;
}

static int gig_drv_nvml_open(gig_drv_t *d)
{
    d->nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (d->nvml == NULL) {
        ucs_debug("gig discovery: no NVML (%s): GPUs without NVLinks",
                  dlerror());
        return 0;
    }
    /* optional */
    GIG_DLSYM(nvml, d, nvmlDeviceGetNvLinkRemoteDeviceType);
    GIG_DLSYM(nvml, d, nvmlDeviceGetMaxPcieLinkGeneration);
    GIG_DLSYM(nvml, d, nvmlDeviceGetMaxPcieLinkWidth);
    GIG_DLSYM(nvml, d, nvmlDeviceGetFieldValues);
    if ((GIG_DLSYM(nvml, d, nvmlInit_v2) == NULL) ||
        (GIG_DLSYM(nvml, d, nvmlShutdown) == NULL) ||
        (GIG_DLSYM(nvml, d, nvmlDeviceGetHandleByPciBusId_v2) == NULL) ||
        (GIG_DLSYM(nvml, d, nvmlDeviceGetNvLinkState) == NULL) ||
        (GIG_DLSYM(nvml, d, nvmlDeviceGetNvLinkRemotePciInfo_v2) == NULL)) {
        ucs_debug("gig discovery: NVML lacks an NVLink call: no NVLinks");
        return 0;
    }
    if (d->nvmlInit_v2() != 0) {
        ucs_debug("gig discovery: nvmlInit_v2() failed: no NVLinks");
        return 0;
    }
    return 1;
}

/* Max PCIe generation and width of a device from sysfs; 0 if unknown */
static void gig_sysfs_pcie(const char *bus_id, int *gen_p, int *width_p)
{
    char path[256], buf[64];
    double gts = 0;
    FILE *f;

    *gen_p   = 0;
    *width_p = 0;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/max_link_speed",
             bus_id);
    f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) != NULL) {
            gts = atof(buf);
        }
        fclose(f);
    }
    *gen_p = (gts >= 60) ? 6 : (gts >= 30) ? 5 : (gts >= 15) ? 4 :
             (gts >= 7.9) ? 3 : (gts >= 4.9) ? 2 : (gts > 0) ? 1 : 0;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/max_link_width",
             bus_id);
    f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) != NULL) {
            *width_p = atoi(buf);
        }
        fclose(f);
    }
}

static void gig_obj_busid(hwloc_obj_t obj, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%01x", obj->attr->pcidev.domain,
             obj->attr->pcidev.bus, obj->attr->pcidev.dev,
             obj->attr->pcidev.func);
}

static double gig_obj_pcie_cap(hwloc_obj_t obj)
{
    char bus_id[GIG_PCI_BUS_ID_MAX];
    int gen, width;

    gig_obj_busid(obj, bus_id, sizeof(bus_id));
    gig_sysfs_pcie(bus_id, &gen, &width);
    if (gen == 0) {
        ucs_debug("gig discovery: %s: PCIe speed unknown, assuming Gen3 x16",
                  bus_id);
        return gig_cap_pcie(3, 16);
    }
    return gig_cap_pcie(gen, width);
}

static int gig_is_pci_bridge(hwloc_obj_t obj)
{
    return (obj->type == HWLOC_OBJ_BRIDGE) &&
           (obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI);
}

/* NIC: a PCI device with a network or OpenFabrics OS device below */
static hwloc_obj_t gig_nic_osdev(hwloc_obj_t pci)
{
    hwloc_obj_t c;

    for (c = pci->io_first_child; c != NULL; c = c->next_sibling) {
        if ((c->type == HWLOC_OBJ_OS_DEVICE) &&
            (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)) {
            return c;
        }
    }
    for (c = pci->io_first_child; c != NULL; c = c->next_sibling) {
        if ((c->type == HWLOC_OBJ_OS_DEVICE) &&
            (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK)) {
            return c;
        }
    }
    return NULL;
}

static double gig_nic_rate(hwloc_obj_t osdev, double pcie_cap)
{
    char path[256], buf[64];
    double gbit = 0;
    FILE *f;

    if (osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/rate",
                 osdev->name);
    } else {
        snprintf(path, sizeof(path), "/sys/class/net/%s/speed",
                 osdev->name);
    }
    f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) != NULL) {
            gbit = atof(buf);
        }
        fclose(f);
    }
    if (osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS) {
        gbit /= 1000.0;   /* Mb/s */
    }
    return (gbit > 0) ? gig_cap_nic(gbit) : pcie_cap;
}

/* CPU vertex of the NUMA node that an I/O object hangs off */
static int gig_obj_cpu(hwloc_topology_t topo, hwloc_obj_t obj,
                       const int *cpu_of_numa, int nnuma)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);
    int os = (anc != NULL) ? hwloc_bitmap_first(anc->nodeset) : -1;
    int i;

    for (i = 0; i < nnuma; ++i) {
        if (hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i)->os_index ==
            (unsigned)os) {
            return cpu_of_numa[i];
        }
    }
    return cpu_of_numa[0];
}

/* Nearest kept bridge above obj, or NULL for the CPU */
static hwloc_obj_t gig_kept_parent(hwloc_obj_t obj, const int *kept_of)
{
    hwloc_obj_t p;

    for (p = obj->parent; (p != NULL) && (p->type == HWLOC_OBJ_BRIDGE);
         p = p->parent) {
        if (gig_is_pci_bridge(p) && (kept_of[p->logical_index] >= 0)) {
            return p;
        }
    }
    return NULL;
}

static int gig_has_nvlink(const gig_graph_t *g, int v)
{
    int i;

    for (i = 0; i < g->ne; ++i) {
        if ((g->e[i].src == v) && (g->e[i].link == GIG_LINK_NVLINK)) {
            return 1;
        }
    }
    return 0;
}

static int gig_peermem_loaded(void)
{
    return (access("/sys/module/nvidia_peermem", F_OK) == 0) ||
           (access("/sys/module/nv_peer_mem", F_OK) == 0);
}

static ucs_status_t gig_discover_build(gig_graph_t *g, gig_drv_t *d,
                                       int have_cuda, int have_nvml)
{
    gig_disc_gpu_t gpu[GIG_DISC_MAX_GPUS];
    hwloc_obj_t dev[GIG_DISC_MAX_DEVS];
    int devv[GIG_DISC_MAX_DEVS], devnic[GIG_DISC_MAX_DEVS];
    int *kept_of = NULL, *below = NULL, *cpu_of_numa = NULL;
    hwloc_topology_t topo;
    ucs_status_t status = UCS_OK;
    hwloc_obj_t obj, p, osd;
    int nnuma, nbridge, ngpu = 0, ndev = 0, nnic = 0, nsw = 0;
    int i, j, l, id, up, net = GIG_NONE, gpudirect;
    char name[GIG_NAME_MAX];
    gig_cu_device_t cud;
    gig_nvml_device_t nd;
    gig_nvml_pci_t rpci;
    int active, rtype, can, nvsw = GIG_NONE;
    const char *vendor;
    gig_nvml_field_t fv;
    double cap, xpi, link_cap;

    if (hwloc_topology_init(&topo) != 0) {
        ucs_error("gig discovery: hwloc_topology_init failed");
        return UCS_ERR_NO_RESOURCE;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        ucs_error("gig discovery: hwloc_topology_load failed");
        hwloc_topology_destroy(topo);
        return UCS_ERR_NO_RESOURCE;
    }

    /* one CPU vertex per NUMA node, socket links between all of them */
    nnuma       = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    nnuma       = (nnuma > 0) ? nnuma : 1;
    nbridge     = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_BRIDGE);
    cpu_of_numa = malloc(nnuma * sizeof(int));
    kept_of     = malloc((nbridge + 1) * sizeof(int));
    below       = calloc(nbridge + 1, sizeof(int));
    if ((cpu_of_numa == NULL) || (kept_of == NULL) || (below == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    /* the socket link by CPU vendor: UPI (Intel) or xGMI (AMD) */
    obj    = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    vendor = (obj != NULL) ? hwloc_obj_get_info_by_name(obj, "CPUVendor") :
             NULL;
    xpi    = gig_cap_xpi(((vendor != NULL) &&
                          (strcmp(vendor, "AuthenticAMD") == 0)) ?
                         "xgmi" : "upi");
    for (i = 0; i < nnuma; ++i) {
        snprintf(name, sizeof(name), "cpu%d", i);
        status = gig_graph_add_vertex(g, GIG_VTX_CPU, name, 0, &id);
        if (status != UCS_OK) {
            goto out;
        }
        obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
        g->v[id].numa  = (obj != NULL) ? (int)obj->os_index : i;
        cpu_of_numa[i] = id;
        for (j = 0; j < i; ++j) {
            status = gig_graph_add_link(g, cpu_of_numa[j], id, GIG_LINK_XPI,
                                        1, xpi, xpi);
            if (status != UCS_OK) {
                goto out;
            }
        }
    }

    /* GPUs from the driver, in CUDA ordinal order */
    if (have_cuda && (d->cuDeviceGetCount(&ngpu) != 0)) {
        ngpu = 0;
    }
    if (ngpu > GIG_DISC_MAX_GPUS) {
        ucs_warn("gig discovery: %d GPUs, using the first %d", ngpu,
                 GIG_DISC_MAX_GPUS);
        ngpu = GIG_DISC_MAX_GPUS;
    }
    for (i = 0; i < ngpu; ++i) {
        memset(&gpu[i], 0, sizeof(gpu[i]));
        if ((d->cuDeviceGet(&cud, i) != 0) ||
            (d->cuDeviceGetPCIBusId(gpu[i].bus_id, sizeof(gpu[i].bus_id),
                                    cud) != 0)) {
            ucs_error("gig discovery: CUDA device %d: no PCI bus id", i);
            status = UCS_ERR_NO_DEVICE;
            goto out;
        }
        for (j = 0; gpu[i].bus_id[j] != '\0'; ++j) {
            gpu[i].bus_id[j] = tolower(gpu[i].bus_id[j]);
        }
        d->cuDeviceGetName(gpu[i].name, sizeof(gpu[i].name), cud);
        d->cuDeviceGetAttribute(&gpu[i].cc_major, GIG_CU_DEV_ATTR_CC_MAJOR,
                                cud);
        gpu[i].obj = hwloc_get_pcidev_by_busidstring(topo, gpu[i].bus_id);
        snprintf(name, sizeof(name), "gpu%d", i);
        status = gig_graph_add_vertex(g, GIG_VTX_GPU, name, 0,
                                      &gpu[i].vertex);
        if (status != UCS_OK) {
            goto out;
        }
        g->v[gpu[i].vertex].cuda_dev = i;
        snprintf(g->v[gpu[i].vertex].pci_bus_id, GIG_PCI_BUS_ID_MAX, "%.19s",
                 gpu[i].bus_id);
        /* "NVIDIA H200" -> "H200" */
        snprintf(g->v[gpu[i].vertex].model, GIG_NAME_MAX, "%s",
                 (strncmp(gpu[i].name, "NVIDIA ", 7) == 0) ?
                 gpu[i].name + 7 : gpu[i].name);
        for (j = 0; g->v[gpu[i].vertex].model[j] != '\0'; ++j) {
            if (g->v[gpu[i].vertex].model[j] == ' ') {
                g->v[gpu[i].vertex].model[j] = '_';
            }
        }
        if (gpu[i].obj == NULL) {
            ucs_debug("gig discovery: GPU %d (%s) not in hwloc's PCI tree",
                      i, gpu[i].bus_id);
        } else if (ndev < GIG_DISC_MAX_DEVS) {
            dev[ndev]    = gpu[i].obj;
            devv[ndev]   = gpu[i].vertex;
            devnic[ndev] = 0;
            ndev++;
        }
    }

    /* NICs from hwloc */
    for (obj = hwloc_get_next_pcidev(topo, NULL); obj != NULL;
         obj = hwloc_get_next_pcidev(topo, obj)) {
        if (((obj->attr->pcidev.class_id >> 8) != 0x02) ||
            ((osd = gig_nic_osdev(obj)) == NULL) ||
            (ndev == GIG_DISC_MAX_DEVS)) {
            continue;
        }
        snprintf(name, sizeof(name), "nic%d", nnic++);
        status = gig_graph_add_vertex(g, GIG_VTX_NIC, name, 0, &id);
        if (status != UCS_OK) {
            goto out;
        }
        gig_obj_busid(obj, g->v[id].pci_bus_id, GIG_PCI_BUS_ID_MAX);
        snprintf(g->v[id].model, GIG_NAME_MAX, "%.31s", osd->name);
        dev[ndev]    = obj;
        devv[ndev]   = id;
        devnic[ndev] = 1;
        ndev++;
    }

    /* keep the PCI bridges that fork: two or more devices below */
    for (i = 0; i < ndev; ++i) {
        for (p = dev[i]->parent; (p != NULL) && (p->type == HWLOC_OBJ_BRIDGE);
             p = p->parent) {
            below[p->logical_index]++;
        }
    }
    for (i = 0; i < nbridge; ++i) {
        kept_of[i] = GIG_NONE;
        obj        = hwloc_get_obj_by_type(topo, HWLOC_OBJ_BRIDGE, i);
        if ((below[i] >= 2) && gig_is_pci_bridge(obj)) {
            snprintf(name, sizeof(name), "pcie%d", nsw++);
            status = gig_graph_add_vertex(g, GIG_VTX_PCIE, name, 0, &id);
            if (status != UCS_OK) {
                goto out;
            }
            gig_obj_busid(obj, g->v[id].pci_bus_id, GIG_PCI_BUS_ID_MAX);
            kept_of[i] = id;
        }
    }
    /* a kept bridge hangs off the nearest kept bridge above, or its CPU;
     * chains of forks are simplified to the outermost ones */
    for (i = 0; i < nbridge; ++i) {
        if (kept_of[i] < 0) {
            continue;
        }
        obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_BRIDGE, i);
        p   = gig_kept_parent(obj, kept_of);
        up  = (p != NULL) ? kept_of[p->logical_index] :
              gig_obj_cpu(topo, obj, cpu_of_numa, nnuma);
        cap = gig_obj_pcie_cap(obj);
        status = gig_graph_add_link(g, kept_of[i], up, GIG_LINK_PCIE, 1, cap,
                                    cap);
        if (status != UCS_OK) {
            goto out;
        }
    }
    /* a GPU's own PCIe link: NVML's maximum (sysfs shows the current,
     * lower speed of an idle GPU on some systems) */
    for (i = 0; (i < ngpu) && have_nvml; ++i) {
        unsigned gen = 0, width = 0;

        if ((d->nvmlDeviceGetMaxPcieLinkGeneration != NULL) &&
            (d->nvmlDeviceGetMaxPcieLinkWidth != NULL) &&
            (d->nvmlDeviceGetHandleByPciBusId_v2(gpu[i].bus_id, &nd) == 0) &&
            (d->nvmlDeviceGetMaxPcieLinkGeneration(nd, &gen) == 0) &&
            (d->nvmlDeviceGetMaxPcieLinkWidth(nd, &width) == 0) &&
            (gen > 0)) {
            gpu[i].pcie_cap = gig_cap_pcie(gen, width);
        }
    }
    for (i = 0; i < ngpu; ++i) {
        if (gpu[i].obj != NULL) {
            continue;
        }
        /* not in hwloc's tree (containers hide sysfs): assume the root
         * complex of the first NUMA node */
        cap    = (gpu[i].pcie_cap > 0) ? gpu[i].pcie_cap : gig_cap_pcie(3, 16);
        status = gig_graph_add_link(g, gpu[i].vertex, cpu_of_numa[0],
                                    GIG_LINK_PCIE, 1, cap, cap);
        if (status != UCS_OK) {
            goto out;
        }
        ucs_debug("gig discovery: GPU %d (%s) attached to %s at %.1f GB/s "
                  "for want of PCIe topology", i, gpu[i].bus_id,
                  g->v[cpu_of_numa[0]].name, cap);
    }
    for (i = 0; i < ndev; ++i) {
        p   = gig_kept_parent(dev[i], kept_of);
        up  = (p != NULL) ? kept_of[p->logical_index] :
              gig_obj_cpu(topo, dev[i], cpu_of_numa, nnuma);
        cap = gig_obj_pcie_cap(dev[i]);
        for (j = 0; j < ngpu; ++j) {
            if ((gpu[j].vertex == devv[i]) && (gpu[j].pcie_cap > 0)) {
                cap = gpu[j].pcie_cap;
            }
        }
        if (g->v[devv[i]].type == GIG_VTX_GPU) {
            g->v[devv[i]].numa = g->v[gig_obj_cpu(topo, dev[i], cpu_of_numa,
                                                  nnuma)].numa;
        }
        status = gig_graph_add_link(g, devv[i], up, GIG_LINK_PCIE, 1, cap,
                                    cap);
        if (status != UCS_OK) {
            goto out;
        }
    }

    /* NICs: the network, and GPUDirect to GPUs under the same switch */
    gpudirect = gig_peermem_loaded();
    if (nnic > 0) {
        status = gig_graph_add_vertex(g, GIG_VTX_NET, "net", GIG_NONE, &net);
        if (status != UCS_OK) {
            goto out;
        }
    }
    for (i = 0; i < ndev; ++i) {
        if (!devnic[i]) {
            continue;
        }
        osd = gig_nic_osdev(dev[i]);
        cap = gig_nic_rate(osd, gig_obj_pcie_cap(dev[i]));
        status = gig_graph_add_link(g, devv[i], net, GIG_LINK_NET, 1, cap,
                                    cap);
        if (status != UCS_OK) {
            goto out;
        }
        if (!gpudirect || (osd->attr->osdev.type !=
                           HWLOC_OBJ_OSDEV_OPENFABRICS)) {
            continue;
        }
        p = gig_kept_parent(dev[i], kept_of);
        for (j = 0; (j < ndev) && (p != NULL); ++j) {
            if (devnic[j] || (gig_kept_parent(dev[j], kept_of) != p)) {
                continue;
            }
            cap = gig_obj_pcie_cap(dev[i]);
            if (gig_obj_pcie_cap(dev[j]) < cap) {
                cap = gig_obj_pcie_cap(dev[j]);
            }
            status = gig_graph_add_link(g, devv[i], devv[j],
                                        GIG_LINK_GPUDIRECT, 1, cap, cap);
            if (status != UCS_OK) {
                goto out;
            }
        }
    }
    if ((nnic > 0) && !gpudirect) {
        ucs_debug("gig discovery: nvidia_peermem not loaded: no NIC-direct "
                  "edges");
    }

    /* NVLinks from NVML: GPU-GPU one way per side, NVSwitch both ways */
    for (i = 0; (i < ngpu) && have_nvml; ++i) {
        if (d->nvmlDeviceGetHandleByPciBusId_v2(gpu[i].bus_id, &nd) != 0) {
            ucs_debug("gig discovery: NVML has no device %s", gpu[i].bus_id);
            continue;
        }
        /* per-link speed from NVML where it tells, else by generation
         * from the compute capability (sm_90 -> NVLink4) */
        link_cap = gig_cap_nvlink(gpu[i].cc_major - 5, 1);
        fv.field_id = GIG_NVML_FI_NVLINK_SPEED;
        fv.scope_id = 0;
        if ((d->nvmlDeviceGetFieldValues != NULL) &&
            (d->nvmlDeviceGetFieldValues(nd, 1, &fv) == 0) &&
            (fv.nvml_return == 0) && (fv.value_type == GIG_NVML_VALUE_UINT) &&
            (fv.value.ui >= 1000) && (fv.value.ui <= 1000000)) {
            /* trust it within a factor of 1.5 of the table: the field's
             * unit and direction are not documented precisely */
            if ((fv.value.ui / 1000.0 < 1.5 * link_cap) &&
                (fv.value.ui / 1000.0 > link_cap / 1.5)) {
                link_cap = fv.value.ui / 1000.0;
            }
            ucs_debug("gig discovery: GPU %d NVML NVLink speed %u MB/s, "
                      "using %.3f GB/s per link", i, fv.value.ui, link_cap);
        }
        for (l = 0; l < GIG_DISC_NVLINKS; ++l) {
            if ((d->nvmlDeviceGetNvLinkState(nd, l, &active) != 0) ||
                !active) {
                continue;
            }
            if (d->nvmlDeviceGetNvLinkRemotePciInfo_v2(nd, l, &rpci) != 0) {
                continue;
            }
            rtype = -1;
            if (d->nvmlDeviceGetNvLinkRemoteDeviceType != NULL) {
                d->nvmlDeviceGetNvLinkRemoteDeviceType(nd, l, &rtype);
            }
            cap = link_cap;
            id  = gig_graph_find_pci(g, rpci.bus_id);
            if ((rtype != GIG_NVML_NVLINK_SWITCH) && (id != GIG_NONE) &&
                (g->v[id].type == GIG_VTX_GPU)) {
                status = gig_graph_add_link(g, gpu[i].vertex, id,
                                            GIG_LINK_NVLINK, 1, cap, 0);
            } else {
                if (nvsw == GIG_NONE) {
                    status = gig_graph_add_vertex(g, GIG_VTX_NVSWITCH, "nvsw",
                                                  0, &nvsw);
                    if (status != UCS_OK) {
                        goto out;
                    }
                    snprintf(g->v[nvsw].model, GIG_NAME_MAX, "NVSwitch");
                }
                status = gig_graph_add_link(g, gpu[i].vertex, nvsw,
                                            GIG_LINK_NVLINK, 1, cap, cap);
            }
            if (status != UCS_OK) {
                goto out;
            }
        }
    }
    for (i = 0; (i < ngpu) && have_cuda; ++i) {
        for (j = 0; j < ngpu; ++j) {
            if ((i == j) || (d->cuDeviceGet(&cud, i) != 0) ||
                (d->cuDeviceCanAccessPeer(&can, cud, j) != 0)) {
                continue;
            }
            if (!can) {
                ucs_debug("gig discovery: GPU %d cannot access GPU %d's "
                          "memory: their traffic goes via host", i, j);
            } else if ((j > i) && !gig_has_nvlink(g, gpu[i].vertex) &&
                       !gig_has_nvlink(g, gpu[j].vertex) &&
                       (gpu[i].obj != NULL) && (gpu[j].obj != NULL) &&
                       (gig_kept_parent(gpu[i].obj, kept_of) == NULL ||
                        gig_kept_parent(gpu[i].obj, kept_of) !=
                        gig_kept_parent(gpu[j].obj, kept_of))) {
                /* peers, yet neither NVLink nor a common switch is seen */
                ucs_warn("gig discovery: GPUs %d and %d are peers but NVML "
                         "shows no NVLink and they share no PCIe switch: "
                         "planning their traffic via host (mgi_topo --write "
                         "a topology file and add the link to correct it)",
                         i, j);
            }
        }
    }

out:
    free(cpu_of_numa);
    free(kept_of);
    free(below);
    hwloc_topology_destroy(topo);
    return status;
}

ucs_status_t gig_discover(gig_graph_t **graph_p)
{
    gig_drv_t d;
    gig_graph_t *g;
    ucs_status_t status;
    char host[64] = "localhost", origin[96];
    int have_cuda, have_nvml = 0;

    memset(&d, 0, sizeof(d));
    gethostname(host, sizeof(host) - 1);
    snprintf(origin, sizeof(origin), "discovered on %s", host);
    status = gig_graph_create(origin, &g);
    if (status != UCS_OK) {
        return status;
    }
    have_cuda = gig_drv_cuda_open(&d);
    if (have_cuda) {
        have_nvml = gig_drv_nvml_open(&d);
    }
    status = gig_discover_build(g, &d, have_cuda, have_nvml);
    if (have_nvml) {
        d.nvmlShutdown();
    }
    if (d.nvml != NULL) {
        dlclose(d.nvml);
    }
    /* libcuda stays loaded: the process will use it anyway */
    if (status == UCS_OK) {
        status = gig_graph_finalize(g);
    }
    if (status != UCS_OK) {
        ucs_error("gig discovery on %s failed: %s", host,
                  ucs_status_string(status));
        gig_graph_destroy(g);
        return status;
    }
    ucs_debug("gig discovery on %s: %d GPUs, %d CPUs, %d PCIe switches, "
              "%d NICs", host, gig_graph_count(g, GIG_VTX_GPU),
              gig_graph_count(g, GIG_VTX_CPU), gig_graph_count(g, GIG_VTX_PCIE),
              gig_graph_count(g, GIG_VTX_NIC));
    *graph_p = g;
    return UCS_OK;
}

/* Is <dir>/<name>/device a link to PCI function bus_id? */
static int gig_sysfs_dev_is(const char *dir, const char *name,
                            const char *bus_id)
{
    char path[600], target[512];
    const char *base;
    ssize_t n;

    snprintf(path, sizeof(path), "%s/%s/device", dir, name);
    n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0) {
        return 0;
    }
    target[n] = '\0';
    base      = strrchr(target, '/');
    return gig_pci_same((base != NULL) ? base + 1 : target, bus_id);
}

/* Is a port or interface down by what sysfs says of it?  The file PATH
 * holds an InfiniBand port's state ("4: ACTIVE") or a netdev's operstate
 * ("up", "down", "unknown" for many virtual ones); a device whose file is
 * missing or unreadable is taken as usable, so only one known to be down
 * is left out of UCX's devices (UCX would find no transport on it). */
static int gig_sysfs_down(const char *path, const char *up)
{
    char state[64];
    FILE *f = fopen(path, "r");
    int down;

    if (f == NULL) {
        return 0;
    }
    down = (fgets(state, sizeof(state), f) != NULL) &&
           (strstr(state, up) == NULL) && (strstr(state, "unknown") == NULL);
    fclose(f);
    return down;
}

static int gig_sysfs_visible(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Appends ",name" (no comma first) where it fits */
static int gig_devs_add(char *buf, size_t len, size_t *off, const char *name,
                        const char *suffix)
{
    int n = snprintf(buf + *off, len - *off, "%s%s%s", (*off > 0) ? "," : "",
                     name, suffix);

    if ((n < 0) || ((size_t)n >= len - *off)) {
        buf[*off] = '\0';
        return 0;
    }
    *off += n;
    return 1;
}

int gig_nic_ucx_devices(const gig_graph_t *g, int nic, const char *sysfs,
                        char *buf, size_t len)
{
    char dir[256], ports[600], port[300], state[900];
    struct dirent **names, **pnames;
    size_t off = 0;
    int n, np, i, j, count = 0, full = 0;
    const char *bus_id;

    if ((buf == NULL) || (len == 0)) {
        return 0;
    }
    buf[0] = '\0';
    if ((nic < 0) || (nic >= g->nv) || (g->v[nic].type != GIG_VTX_NIC)) {
        return 0;
    }
    if (g->v[nic].ucx_dev[0] != '\0') {
        /* declared: taken as it is, one name a comma */
        if (!gig_devs_add(buf, len, &off, g->v[nic].ucx_dev, "")) {
            return 0;
        }
        for (i = 0, count = 1; buf[i] != '\0'; ++i) {
            count += (buf[i] == ',');
        }
        return count;
    }
    if (g->v[nic].pci_bus_id[0] == '\0') {
        return 0;
    }
    bus_id = g->v[nic].pci_bus_id;
    sysfs  = (sysfs != NULL) ? sysfs : "/sys";

    /* InfiniBand (and RoCE) devices: UCX names their ports dev:port */
    snprintf(dir, sizeof(dir), "%s/class/infiniband", sysfs);
    n = scandir(dir, &names, gig_sysfs_visible, alphasort);
    for (i = 0; i < n; ++i) {
        if (!full && gig_sysfs_dev_is(dir, names[i]->d_name, bus_id)) {
            snprintf(ports, sizeof(ports), "%s/%s/ports", dir,
                     names[i]->d_name);
            np = scandir(ports, &pnames, gig_sysfs_visible, alphasort);
            for (j = 0; j < np; ++j) {
                snprintf(state, sizeof(state), "%s/%s/state", ports,
                         pnames[j]->d_name);
                if (gig_sysfs_down(state, "ACTIVE")) {
                    free(pnames[j]);
                    continue;
                }
                snprintf(port, sizeof(port), ":%s", pnames[j]->d_name);
                if (!full && gig_devs_add(buf, len, &off, names[i]->d_name,
                                          port)) {
                    ++count;
                } else {
                    full = 1;
                }
                free(pnames[j]);
            }
            if (np > 0) {
                free(pnames);
            }
        }
        free(names[i]);
    }
    if (n > 0) {
        free(names);
    }

    /* network interfaces (tcp; IPoIB and RoCE netdevs of the same
     * function too) by their names */
    snprintf(dir, sizeof(dir), "%s/class/net", sysfs);
    n = scandir(dir, &names, gig_sysfs_visible, alphasort);
    for (i = 0; i < n; ++i) {
        snprintf(state, sizeof(state), "%s/%s/operstate", dir,
                 names[i]->d_name);
        if (!full && gig_sysfs_dev_is(dir, names[i]->d_name, bus_id) &&
            !gig_sysfs_down(state, "up")) {
            if (gig_devs_add(buf, len, &off, names[i]->d_name, "")) {
                ++count;
            } else {
                full = 1;
            }
        }
        free(names[i]);
    }
    if (n > 0) {
        free(names);
    }
    return count;
}

ucs_status_t gig_graph_load(const char *file, const char *synth,
                            gig_graph_t **graph_p)
{
    if ((file != NULL) && (file[0] != '\0')) {
        return gig_topofile_load(file, graph_p);
    }
    if ((synth != NULL) && (synth[0] != '\0')) {
        return gig_synth_create(synth, graph_p);
    }
    return gig_discover(graph_p);
}
