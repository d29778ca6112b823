/**
 * cuda_mgi: what the GIG planner says about the way to a peer GPU, in the
 * terms of the striping engine's executors.  Pure: no CUDA calls, so it is
 * tested on the CPU with the planner's synthetic topologies.
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_PLAN_H
#define UCT_CUDA_MGI_PLAN_H

#include "cuda_mgi_stripe.h"
#include "gig/gig.h"


typedef struct uct_cuda_mgi_plan_path {
    uct_cuda_mgi_path_kind_t kind;      /* HOST or GPU */
    int                      via;       /* gig vertex of the relay GPU, or
                                           of the CPU for the host path */
    double                   capacity;  /* bytes/s */
} uct_cuda_mgi_plan_path_t;


/**
 * The paths from GPU vertex src to GPU vertex dst that the executors can
 * drive, limited to the kinds in paths_mask (bits of
 * uct_cuda_mgi_path_kind_t):
 *  - direct: the NVLink direct paths (a peer copy takes the NVLink where a
 *    pair also has a PCIe-switch path), else the first direct path;
 *  - host:   the widest path through CPUs only (one bounce buffer);
 *  - gpu:    paths through exactly one other GPU.
 * Network paths and multi-relay paths are left out.
 */
ucs_status_t
uct_cuda_mgi_plan_route(gig_plan_t *plan, int src, int dst,
                        unsigned paths_mask, double *direct_capacity_p,
                        uct_cuda_mgi_plan_path_t *staged, unsigned max_staged,
                        unsigned *num_staged_p);

/* Load UCX_CUDA_MGI_TOPO_FILE (when topo_file is not empty) or discover this
 * machine, and make a plan over it */
ucs_status_t uct_cuda_mgi_plan_open(const char *topo_file,
                                    gig_graph_t **graph_p,
                                    gig_plan_t **plan_p);

/* A GPU's vertex: by PCI bus id, else by CUDA ordinal; GIG_NONE if absent */
int uct_cuda_mgi_plan_find_gpu(const gig_graph_t *graph, const char *pci,
                               int ordinal);

#endif
