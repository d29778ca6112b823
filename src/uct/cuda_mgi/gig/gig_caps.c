/*
 * Link capacities, GB/s (1e9 B/s) per direction: the one table.
 *
 * NVLink per link and direction: NVLink1 20 (P100), NVLink2 25 (V100, 6
 * links = 150), NVLink3 25 (A100, 12 links = 300), NVLink4 478/18 = 26.56
 * (H100/H200 "NV18" = 478 GB/s as reported for H200), NVLink5 50 (B200).
 *
 * PCIe: effective copy-engine throughput of an x16 link, not the raw rate:
 * Gen5 x16 55 (D2H measured on the 2 x H200 machine, DESIGN.md), Gen4 x16
 * 26 (raw 31.5, typical cudaMemcpy D2H on A100 boards ~25-26), Gen3 x16 12.5
 * (raw 15.75, bandwidthTest on V100/DGX-1 ~12-13), Gen2 x16 6.4, Gen1 3.2.
 * Narrower links scale with the width.
 *
 * Socket links: QPI (Broadwell DGX-1, 2 x 9.6 GT/s) 38.4, UPI (3 x 10.4
 * GT/s) 62.4, AMD xGMI (3 links) 96, POWER9 X-Bus 64.  NICs: line rate / 8.
 */
#include "gig.h"

#include <string.h>

static const double gig_nvlink_gbps[] = {
    [GIG_NVLINK_V1] = 20.0,
    [GIG_NVLINK_V2] = 25.0,
    [GIG_NVLINK_V3] = 25.0,
    [GIG_NVLINK_V4] = 478.0 / 18.0,
    [GIG_NVLINK_V5] = 50.0,
};

/* x16 effective GB/s by PCIe generation */
static const double gig_pcie_x16_gbps[] = {
    [1] = 3.2, [2] = 6.4, [3] = 12.5, [4] = 26.0, [5] = 55.0, [6] = 110.0,
};

static const struct {
    const char *name;
    double     gbps;
} gig_xpi_gbps[] = {
    {"qpi",  38.4},
    {"upi",  62.4},
    {"xgmi", 96.0},
    {"xbus", 64.0},
};

double gig_cap_nvlink(int gen, unsigned nlinks)
{
    if ((gen < GIG_NVLINK_V1) || (gen > GIG_NVLINK_V5)) {
        gen = GIG_NVLINK_V2;   /* the slowest still in service */
    }
    return gig_nvlink_gbps[gen] * nlinks;
}

double gig_cap_pcie(int gen, unsigned width)
{
    if (gen < 1) {
        gen = 3;
    } else if (gen > 6) {
        gen = 6;
    }
    if ((width == 0) || (width > 16)) {
        width = 16;
    }
    return gig_pcie_x16_gbps[gen] * width / 16.0;
}

double gig_cap_xpi(const char *kind)
{
    size_t i;

    for (i = 0; i < sizeof(gig_xpi_gbps) / sizeof(gig_xpi_gbps[0]); ++i) {
        if (strcmp(kind, gig_xpi_gbps[i].name) == 0) {
            return gig_xpi_gbps[i].gbps;
        }
    }
    return gig_xpi_gbps[0].gbps;
}

double gig_cap_nic(double gbit_per_s)
{
    return gbit_per_s / 8.0;
}
