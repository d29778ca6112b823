/*
 * GIG: the GPU Infrastructure Graph and MGI's Transfer Optimizer (paper §4).
 *
 * Pure, deterministic C: no link dependency on CUDA or NVML (discovery opens
 * them with dlopen), so everything here runs and is tested on a CPU machine.
 *
 * Typical use by the transport, once per process:
 *
 *     gig_graph_t *g;
 *     gig_plan_t *plan;
 *     const gig_pathset_t *ps;
 *     int a, b;
 *
 *     gig_graph_load(file, NULL, &g);  // a topology file, a synthetic
                                     //   graph
 *     gig_plan_create(g, &plan);       //   or live discovery
 *     a = gig_graph_find_cuda(g, 0);   // or gig_graph_find_pci(g, "18:00.0")
 *     b = gig_graph_find_cuda(g, 1);
 *     if (gig_plan_paths(plan, a, b, &ps) == UCS_OK) {
 *         for (i = 0; i < ps->npaths; ++i)  // one executor per path,
 *             use(ps->paths[i].kind, ps->paths[i].via, ps->paths[i].share);
 *     }
 *     gig_plan_destroy(plan); gig_graph_destroy(g);
 *
 * Units: capacities are GB/s (1e9 B/s) per direction.  Internally the
 * max-flow works on integers in MB/s, so results are exact and repeatable.
 *
 * Threads: a graph is read-only once finalized and may be shared; a plan
 * (its cache and scratch) and a forwarding table are not thread-safe: make
 * them under a lock or one per thread.
 *
 * CUDA ordinals: a discovered graph numbers GPUs as the CUDA driver of this
 * process does (CUDA_VISIBLE_DEVICES applies).  A topology file made by
 * another process may number them otherwise: look GPUs up by PCI bus id
 * (cuDeviceGetPCIBusId) to be safe.  In a multi-server graph the ordinals
 * repeat per server; gig_graph_find_cuda() returns the first match, which
 * is server 0, the local server of a discovered graph.
 */
#ifndef GIG_H_
#define GIG_H_

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GIG_NAME_MAX        32
#define GIG_PCI_BUS_ID_MAX  20    /* "0000:18:00.0" + room */
#define GIG_UCX_DEV_MAX     64    /* a NIC's UCX device names, as declared */
#define GIG_NONE            (-1)

/* ------------------------------------------------------------------ graph */

typedef enum {
    GIG_VTX_GPU = 0,      /* managed */
    GIG_VTX_CPU,          /* managed: one per NUMA node, pinned host memory */
    GIG_VTX_NVSWITCH,     /* unmanaged: all NVSwitches of a server, merged */
    GIG_VTX_PCIE,         /* unmanaged: PCIe switch or bridge */
    GIG_VTX_NIC,          /* unmanaged: one per NIC port */
    GIG_VTX_NET,          /* unmanaged: the network, one per graph */
    GIG_VTX_LAST
} gig_vertex_type_t;

typedef enum {
    GIG_LINK_NVLINK = 0,
    GIG_LINK_PCIE,
    GIG_LINK_XPI,         /* CPU socket interconnect (QPI, UPI, xGMI) */
    GIG_LINK_NET,         /* NIC <-> network */
    GIG_LINK_GPUDIRECT,   /* NIC reads/writes GPU memory directly */
    GIG_LINK_LAST
} gig_link_type_t;

typedef struct gig_vertex {
    gig_vertex_type_t type;
    char              name[GIG_NAME_MAX];  /* unique in the graph */
    int               server;              /* GIG_NONE for the network */
    int               numa;                /* NUMA node or GIG_NONE */
    int               cuda_dev;            /* CUDA ordinal or GIG_NONE */
    char              pci_bus_id[GIG_PCI_BUS_ID_MAX]; /* "" if unknown */
    char              model[GIG_NAME_MAX]; /* free text, e.g. "H200" */
    /* a NIC's UCX device names as a topology file declares them (dev=,
     * e.g. "mlx5_0:1" or "eth1"), "" where sysfs finds them by pci_bus_id */
    char              ucx_dev[GIG_UCX_DEV_MAX];
} gig_vertex_t;

/* One directed edge; parallel links with the same ends are merged into it */
typedef struct gig_edge {
    int               src;
    int               dst;
    gig_link_type_t   link;
    unsigned          count;       /* number of physical links merged */
    double            capacity;    /* GB/s, this direction */
} gig_edge_t;

/* Read-only for users; build with the functions below */
typedef struct gig_graph {
    int               nv, ne;
    gig_vertex_t      *v;
    gig_edge_t        *e;
    int               net;         /* network vertex or GIG_NONE */
    int               nservers;
    char              origin[128]; /* "synthetic dgx1", "file x", ... */
    /* private: capacity of arrays, CSR adjacency (valid after finalize) */
    int               v_cap, e_cap;
    int               *out_start;  /* nv + 1 */
    int               *out_edge;   /* ne, edges sorted by src */
    int               *ehash;      /* (src, dst) -> edge, open addressing */
    int               ehash_cap;
    int               *vhash;      /* name -> vertex, open addressing */
    int               vhash_cap;
    int               finalized;
} gig_graph_t;

ucs_status_t gig_graph_create(const char *origin, gig_graph_t **graph_p);
void         gig_graph_destroy(gig_graph_t *graph);

/* Adds a vertex; name must be unique.  The vertex is returned in *id_p and
 * its optional fields (numa, cuda_dev, pci_bus_id, model) may be set via
 * graph->v[id] until gig_graph_finalize(). */
ucs_status_t gig_graph_add_vertex(gig_graph_t *graph, gig_vertex_type_t type,
                                  const char *name, int server, int *id_p);

/* Adds count physical links between a and b with cap_ab GB/s from a to b and
 * cap_ba GB/s back (each over all count links; 0: no edge that way).  A link
 * whose ends already have an edge is merged into it: capacities and counts
 * add up. */
ucs_status_t gig_graph_add_link(gig_graph_t *graph, int a, int b,
                                gig_link_type_t link, unsigned count,
                                double cap_ab, double cap_ba);

/* Checks the graph (ends exist, network vertex unique, ...) and builds the
 * adjacency.  Must be called before planning. */
ucs_status_t gig_graph_finalize(gig_graph_t *graph);

int          gig_graph_find_name(const gig_graph_t *graph, const char *name);
int          gig_graph_find_cuda(const gig_graph_t *graph, int cuda_dev);
/* Matches "0000:18:00.0", "00000000:18:00.0" and "18:00.0", any case */
int          gig_graph_find_pci(const gig_graph_t *graph, const char *bus_id);
/* 1 where two bus ids in those forms name the same PCI function */
int          gig_pci_same(const char *a, const char *b);
int          gig_graph_is_managed(const gig_graph_t *graph, int v);
int          gig_graph_count(const gig_graph_t *graph, gig_vertex_type_t type);
/* Edge index from a to b or GIG_NONE */
int          gig_graph_edge(const gig_graph_t *graph, int a, int b);

const char  *gig_vertex_type_str(gig_vertex_type_t type);
const char  *gig_link_type_str(gig_link_type_t type);
int          gig_vertex_type_parse(const char *s);  /* -1 if unknown */
int          gig_link_type_parse(const char *s);

/* Prints the vertices and edges, human-readable */
void         gig_graph_print(const gig_graph_t *graph, FILE *stream);
/* Graphviz DOT; undirected pairs drawn once with both capacities */
void         gig_graph_print_dot(const gig_graph_t *graph, FILE *stream);

/* ------------------------------------------------------------- capacities */

/* Link capacities per direction, GB/s: the one table (gig_caps.c) */
typedef enum {
    GIG_NVLINK_V1 = 1,     /* P100 */
    GIG_NVLINK_V2,         /* V100 */
    GIG_NVLINK_V3,         /* A100 */
    GIG_NVLINK_V4,         /* H100, H200 */
    GIG_NVLINK_V5          /* B200 */
} gig_nvlink_gen_t;

double       gig_cap_nvlink(int gen, unsigned nlinks);
double       gig_cap_pcie(int gen, unsigned width);
double       gig_cap_xpi(const char *kind); /* "qpi", "upi", "xgmi", "xbus" */
double       gig_cap_nic(double gbit_per_s);

/* ------------------------------------------------------------- topologies */

/* Topology file: see gig_topofile.c for the format.  On error, returns
 * UCS_ERR_INVALID_PARAM and writes "<name>:<line>: <reason>" into errbuf
 * (also logged with ucs_error by gig_topofile_load). */
ucs_status_t gig_topofile_load(const char *path, gig_graph_t **graph_p);
ucs_status_t gig_topofile_parse(const char *text, size_t len,
                                const char *name, gig_graph_t **graph_p,
                                char *errbuf, size_t errlen);
ucs_status_t gig_topofile_write(const gig_graph_t *graph, FILE *stream);
ucs_status_t gig_topofile_save(const gig_graph_t *graph, const char *path);

/* Synthetic topologies by name: "dgx1", "h100-mesh4", "dgx-a100",
 * "hgx-h100", "hgx-h200", "h200x2", "pcie-2sw", "2socket-xpi",
 * "multi-rdma", "multi-nvswitch-rdma", "cluster100", "cluster1000",
 * "cluster:<ngpus>" */
ucs_status_t gig_synth_create(const char *name, gig_graph_t **graph_p);
/* NULL-terminated list of the built-in names and one-line descriptions */
const char *const *gig_synth_names(void);
const char  *gig_synth_describe(const char *name);

/* Live discovery: CUDA driver and NVML by dlopen, hwloc for NUMA/PCIe/NIC.
 * Without a driver: CPU/PCIe/NIC part only, zero GPUs (debug log says why) */
ucs_status_t gig_discover(gig_graph_t **graph_p);

/* Measures D2H/H2D (pinned) per GPU and peer copies per GPU pair with
 * bytes-sized copies, and writes the GB/s into the PCIe and NVLink edges of
 * the GPUs of server 0.  UCS_ERR_NO_DEVICE without a driver or GPUs.
 * mgi_topo --calibrate --write FILE caches the result for
 * UCX_CUDA_MGI_TOPO_FILE. */
ucs_status_t gig_calibrate(gig_graph_t *graph, size_t bytes);

/* The graph of topology file `topo_file` if it is set (not NULL, not
 * empty), else the synthetic one named `synth` if that is set (for
 * simulation), else gig_discover().  The planner reads no environment: the
 * caller passes what its configuration says. */
ucs_status_t gig_graph_load(const char *topo_file, const char *synth,
                            gig_graph_t **graph_p);

/* -------------------------------------------------------------- planning */

typedef enum {
    GIG_PATH_DIRECT = 0,  /* GPU -> [NVSwitch / PCIe switches] -> GPU.
                             Mind nvlink: where a pair has an NVLink path
                             and a PCIe-switch path (DGX A100, DGX-1), both
                             are direct, but a peer copy always takes the
                             NVLink; the PCIe one needs another engine */
    GIG_PATH_VIA_HOST,    /* first managed hop is a CPU: pinned host memory */
    GIG_PATH_VIA_GPU,     /* first managed hop is another GPU's memory */
    GIG_PATH_NETWORK      /* crosses the network vertex */
} gig_path_kind_t;

typedef struct gig_path {
    gig_path_kind_t   kind;
    int               via;        /* first intermediate managed vertex or
                                     GIG_NONE (direct / NIC-direct) */
    int               nrelays;    /* intermediate managed vertices */
    int               nvlink;     /* 1 if every GPU-adjacent edge is NVLink */
    double            capacity;   /* GB/s this path carries in the max-flow
                                     (sum over paths = max-flow) */
    double            bottleneck; /* GB/s, minimum edge capacity on path */
    double            share;      /* capacity / total of the path set */
    int               nvert;      /* vertices incl. both ends */
    const int         *vert;
} gig_path_t;

typedef struct gig_pathset {
    int               src, dst;
    int               npaths;     /* 0 if dst is unreachable */
    double            total;      /* GB/s, = max-flow src -> dst */
    gig_path_t        *paths;     /* direct first, then by capacity */
} gig_pathset_t;

typedef struct gig_plan gig_plan_t;

/* The graph must be finalized and outlive the plan */
ucs_status_t gig_plan_create(const gig_graph_t *graph, gig_plan_t **plan_p);

/* GIG_PLAN_F_PLAIN: the benchmark's baseline, every pair by Edmonds-Karp
 * over the whole graph as it is (no server restriction, no hierarchy
 * through the network, NICs may be crossed like switches).
 * GIG_PLAN_F_NO_SHAPES: the reference for the shape cache, every pair by
 * its own Edmonds-Karp even on servers of one shape (same answers, slower;
 * a plain plan never shares) */
#define GIG_PLAN_F_PLAIN      1u
#define GIG_PLAN_F_NO_SHAPES  2u
ucs_status_t gig_plan_create_flags(const gig_graph_t *graph, unsigned flags,
                                   gig_plan_t **plan_p);
void         gig_plan_destroy(gig_plan_t *plan);
const gig_graph_t *gig_plan_graph(const gig_plan_t *plan);

/* Paths from src to dst (Fig. 6): Edmonds-Karp on the server of both ends,
 * or through the network vertex (s -> net, net -> d, concatenated) for ends
 * on different servers.  Cached: the result lives as long as the plan.  A
 * server of the same shape as an earlier one (same vertices, edges,
 * capacities and adjacency order, numbered per server) gets that server's
 * answer with the vertex ids translated: the same as its own max-flow. */
ucs_status_t gig_plan_paths(gig_plan_t *plan, int src, int dst,
                            const gig_pathset_t **pathset_p);
/* The NIC vertex a managed vertex v reaches the network through first:
 * the NIC of its first path to the network vertex (breadth first, so a
 * NIC with a GPUDirect edge to v, else the one fewest hops away, then by
 * capacity).  GIG_NONE without a network vertex or a path to it. */
int          gig_plan_nic(gig_plan_t *plan, int v);

/* The NIC nearest (gig_plan_nic) vertex v of the finalized graph g, which
 * plans on its own: GIG_NONE without a NIC on a path to the network
 * vertex (or v GIG_NONE). */
int          gig_nic_of(const gig_graph_t *g, int v);

/* The NIC that carries a process's traffic to other servers: the one
 * nearest (gig_plan_nic) the process's vertex on server `server` of the
 * finalized graph g, which is its GPU (by PCI bus id gpu_bus_id where
 * given and in the graph, else by CUDA ordinal cuda_dev where >= 0), else
 * the CPU of NUMA node numa (where >= 0), else the server's first CPU.
 * Its vertex in *from_p where not NULL (GIG_NONE: none of those). Plans
 * on its own: GIG_NONE without a NIC on a path to the network vertex. */
int          gig_nic_nearest(const gig_graph_t *g, int server,
                             const char *gpu_bus_id, int cuda_dev, int numa,
                             int *from_p);

/* UCX's names of NIC vertex nic's devices: those its topology file
 * declares (dev=) as they are, else the ports of the InfiniBand
 * devices ("mlx5_0:1") and the network interfaces ("eth0") whose PCI
 * function (<sysfs>/class/{infiniband,net}/<name>/device) is the vertex's
 * pci_bus_id, comma-separated into buf (IB ports first, each class by
 * name), as UCX_NET_DEVICES takes them. sysfs: the sysfs root, NULL for
 * "/sys" (a test's fake tree otherwise). Returns how many were named; 0
 * where the vertex has no PCI bus id, no device matches (a veth, a
 * virtual NIC) or buf is too short for the first. */
int          gig_nic_ucx_devices(const gig_graph_t *g, int nic,
                                 const char *sysfs, char *buf, size_t len);
/* Copies up to max shares (capacity / total) of the path set into shares */
int          gig_pathset_shares(const gig_pathset_t *ps, double *shares,
                                int max);
void         gig_pathset_print(const gig_graph_t *graph,
                               const gig_pathset_t *ps, FILE *stream);
const char  *gig_path_kind_str(gig_path_kind_t kind);

/* Plain max-flow value (GB/s) between vertex sets on the whole graph, with
 * a super source and sink: the completeness reference and the benchmark's
 * baseline.  srcs and dsts must be disjoint. */
ucs_status_t gig_maxflow_sets(const gig_graph_t *graph, const int *srcs,
                              int nsrc, const int *dsts, int ndst,
                              double *flow_p);
/* Counters, for tests and the benchmark */
typedef struct gig_plan_stats {
    unsigned long     maxflow_runs;
    unsigned long     shape_copies;  /* path sets translated from a server
                                        of the same shape, no max-flow */
    unsigned long     cache_hits;
    unsigned long     cache_misses;
} gig_plan_stats_t;
void         gig_plan_get_stats(const gig_plan_t *plan,
                                gig_plan_stats_t *stats);

/* ---------------------------------------------------- forwarding tables */

/* §4.4: for each managed vertex v on a path to destination d, the entry
 * (d, {(next managed vertex, [unmanaged vertices before it]), ...}),
 * merged by destination, then by next hop, then by identical hops */
typedef struct gig_fwd_route {
    int               nvia;
    const int         *via;       /* unmanaged vertices between v and next */
    double            capacity;   /* GB/s of the paths using this route */
} gig_fwd_route_t;

typedef struct gig_fwd_next {
    int               next;
    int               nroutes;
    gig_fwd_route_t   *routes;
} gig_fwd_next_t;

typedef struct gig_fwd_entry {
    int               dst;
    int               nnext;
    gig_fwd_next_t    *next;
} gig_fwd_entry_t;

typedef struct gig_fwd_table {
    int               vertex;
    int               nentries;   /* sorted by dst */
    gig_fwd_entry_t   *entries;
} gig_fwd_table_t;

typedef struct gig_fwd gig_fwd_t;

/* Channel creation: paths for every (s, d) pair with s != d (the same
 * pairing as gig_plan_paths(); pairs on different servers are built from
 * the cached halves s -> net, net -> d without caching the pair itself),
 * then the tables.  Each path set is cut at its managed vertices once per
 * plan, so a second channel on the same plan costs the tables only.  The
 * tables own their memory and may outlive the plan; the next hops of an
 * entry come in the order of the paths (direct first).  A destination
 * listed twice counts once. */
ucs_status_t gig_fwd_create(gig_plan_t *plan, const int *srcs, int nsrc,
                            const int *dsts, int ndst, gig_fwd_t **fwd_p);
void         gig_fwd_destroy(gig_fwd_t *fwd);
int          gig_fwd_ntables(const gig_fwd_t *fwd);
const gig_fwd_table_t *gig_fwd_table(const gig_fwd_t *fwd, int i);
/* Table of a vertex, NULL if the channel gives it none.  A table is
 * written out when first read, by gig_fwd_table, gig_fwd_find or
 * gig_fwd_lookup (the tables of alike servers are kept as one template
 * until then), from any thread; these return NULL also where that fails
 * (no memory; logged). */
const gig_fwd_table_t *gig_fwd_find(const gig_fwd_t *fwd, int vertex);
const gig_fwd_entry_t *gig_fwd_lookup(const gig_fwd_t *fwd, int vertex,
                                      int dst);
/* Which of an entry's next hops the rank-th of the pairs (source,
 * ent->dst) at the entry's vertex takes: a direct link to dst_vertex
 * where there is one (it comes first); else, of several, the one whose
 * share of the entry's capacity holds a point of a low-discrepancy
 * sequence (the golden ratio's) at that rank. The pairs of one vertex and
 * destination so spread over its next hops in the plan's shares, each
 * pair on one path (so that a channel keeps per-source order). */
int          gig_fwd_pick(const gig_fwd_entry_t *ent, int dst_vertex,
                          unsigned rank);
/* The capacity of the paths through next hop k of an entry: its share of
 * the entry's, for a sender that spreads over the next hops itself. */
double       gig_fwd_next_capacity(const gig_fwd_entry_t *ent, int k);
void         gig_fwd_print(const gig_graph_t *graph, const gig_fwd_t *fwd,
                           FILE *stream);

#ifdef __cplusplus
}
#endif

#endif
