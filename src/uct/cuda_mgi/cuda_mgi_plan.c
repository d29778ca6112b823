/**
 * cuda_mgi: the planner's paths in the striping engine's terms.
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_plan.h"

#include <ucs/debug/log_def.h>
#include <string.h>


/* Whether a path passes through a GPU's memory on its way */
static int uct_cuda_mgi_plan_via_gpu(gig_plan_t *plan, const gig_path_t *p)
{
    const gig_graph_t *graph = gig_plan_graph(plan);
    int i;

    for (i = 1; i < p->nvert - 1; ++i) {
        if (graph->v[p->vert[i]].type == GIG_VTX_GPU) {
            return 1;
        }
    }
    return 0;
}


ucs_status_t
uct_cuda_mgi_plan_route(gig_plan_t *plan, int src, int dst,
                        unsigned paths_mask, double *direct_capacity_p,
                        uct_cuda_mgi_plan_path_t *staged, unsigned max_staged,
                        unsigned *num_staged_p)
{
    const gig_pathset_t *ps;
    double direct = 0, first_direct = 0, host = 0;
    int have_nvlink = 0, host_via = GIG_NONE;
    unsigned n = 0;
    ucs_status_t status;
    int i;

    status = gig_plan_paths(plan, src, dst, &ps);
    if (status != UCS_OK) {
        return status;
    }

    for (i = 0; i < ps->npaths; ++i) {
        const gig_path_t *p = &ps->paths[i];

        switch (p->kind) {
        case GIG_PATH_DIRECT:
            if (first_direct == 0) {
                first_direct = p->capacity;
            }
            if (p->nvlink) {
                direct     += p->capacity;
                have_nvlink = 1;
            }
            break;
        case GIG_PATH_VIA_HOST:
            /* one bounce ring in host memory, also when the path crosses
             * from one socket to the other; the widest such path */
            if (!uct_cuda_mgi_plan_via_gpu(plan, p) && (p->capacity > host)) {
                host     = p->capacity;
                host_via = p->via;
            }
            break;
        case GIG_PATH_VIA_GPU:
            if ((p->nrelays == 1) && (n < max_staged) &&
                (paths_mask & UCS_BIT(UCT_CUDA_MGI_PATH_GPU))) {
                staged[n].kind     = UCT_CUDA_MGI_PATH_GPU;
                staged[n].via      = p->via;
                staged[n].capacity = p->capacity * 1e9;
                ++n;
            }
            break;
        default:
            break;
        }
    }

    if (!have_nvlink) {
        direct = first_direct;
    }

    if ((host > 0) && (paths_mask & UCS_BIT(UCT_CUDA_MGI_PATH_HOST))) {
        if (n == max_staged) {
            --n; /* the host path before a relay: it costs no NVLink */
        }
        memmove(&staged[1], &staged[0], n * sizeof(*staged));
        staged[0].kind     = UCT_CUDA_MGI_PATH_HOST;
        staged[0].via      = host_via;
        staged[0].capacity = host * 1e9;
        ++n;
    }

    *direct_capacity_p = direct * 1e9;
    *num_staged_p      = n;
    return UCS_OK;
}


ucs_status_t uct_cuda_mgi_plan_open(const char *topo_file,
                                    gig_graph_t **graph_p,
                                    gig_plan_t **plan_p)
{
    gig_graph_t *graph;
    ucs_status_t status;

    if ((topo_file != NULL) && (topo_file[0] != '\0')) {
        status = gig_topofile_load(topo_file, &graph);
        if (status != UCS_OK) {
            ucs_error("cuda_mgi: UCX_CUDA_MGI_TOPO_FILE=%s cannot be used "
                      "(see the message above); striping falls back to "
                      "the NVML estimate", topo_file);
            return status;
        }
    } else {
        status = gig_discover(&graph);
        if (status != UCS_OK) {
            ucs_debug("cuda_mgi: topology discovery failed: %s",
                      ucs_status_string(status));
            return status;
        }
    }

    status = gig_plan_create(graph, plan_p);
    if (status != UCS_OK) {
        gig_graph_destroy(graph);
        return status;
    }

    *graph_p = graph;
    return UCS_OK;
}


int uct_cuda_mgi_plan_find_gpu(const gig_graph_t *graph, const char *pci,
                               int ordinal)
{
    int v = GIG_NONE;

    if ((pci != NULL) && (pci[0] != '\0')) {
        v = gig_graph_find_pci(graph, pci);
    }
    if ((v == GIG_NONE) && (ordinal >= 0)) {
        v = gig_graph_find_cuda(graph, ordinal);
    }
    return v;
}
