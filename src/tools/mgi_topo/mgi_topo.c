/*
 * mgi_topo: shows the GPU Infrastructure Graph that cuda_mgi plans on, the
 * paths and capacities between GPUs, a channel's forwarding tables, and a
 * Graphviz picture; on this machine (live discovery), a topology file or a
 * built-in synthetic topology.
 */
#include <gig.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
"usage: mgi_topo [--topo FILE | --synthetic NAME] [--write FILE] [COMMAND]\n"
"  COMMAND (default: summary)\n"
"    graph                 vertices and edges\n"
"    paths SRCS DSTS       paths and capacities from each source to each\n"
"                          destination\n"
"    fwd SRCS DSTS         forwarding tables of the channel SRCS -> DSTS\n"
"    nics                  the NIC each GPU reaches the network through\n"
"    dot                   Graphviz DOT (mgi_topo dot | dot -Tpng -o g.png)\n"
"    summary               graph, paths between all GPU pairs, and the\n"
"                          forwarding tables of the all-to-all channel\n"
"  SRCS, DSTS: comma-separated vertex names or CUDA ordinals, or 'all'\n"
"              (every GPU)\n"
"  --topo FILE           load a topology file instead of discovering\n"
"  --synthetic NAME      use a built-in topology (--list shows them)\n"
"  --list                list the built-in topologies\n"
"  --write FILE          save the graph as a topology file\n"
"  --calibrate[=MIB]     measure host and peer copies on this machine's GPUs\n"
"                        (MIB per copy, default 256) and use the measured\n"
"                        capacities; with --write, a cache for\n"
"                        UCX_CUDA_MGI_TOPO_FILE\n"
"  UCX_CUDA_MGI_TOPO_FILE is honoured when neither option is given.\n");
}

/* "all", "gpu0,gpu3", "0,1" -> vertex ids */
static int parse_set(const gig_graph_t *g, const char *arg, int **set_p)
{
    char *copy = strdup(arg), *tok, *save = NULL, *end;
    int *set   = malloc((g->nv + 1) * sizeof(int));
    int n = 0, v, i;
    long l;

    if ((copy == NULL) || (set == NULL)) {
        fprintf(stderr, "mgi_topo: out of memory\n");
        exit(1);
    }
    if (strcmp(arg, "all") == 0) {
        for (i = 0; i < g->nv; ++i) {
            if (g->v[i].type == GIG_VTX_GPU) {
                set[n++] = i;
            }
        }
    } else {
        for (tok = strtok_r(copy, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save)) {
            v = gig_graph_find_name(g, tok);
            if (v == GIG_NONE) {
                l = strtol(tok, &end, 10);
                if ((*end == '\0') && (end != tok)) {
                    v = gig_graph_find_cuda(g, (int)l);
                }
            }
            if (v == GIG_NONE) {
                v = gig_graph_find_pci(g, tok);
            }
            if (v == GIG_NONE) {
                fprintf(stderr, "mgi_topo: no vertex '%s' in %s\n", tok,
                        g->origin);
                exit(2);
            }
            if (n <= g->nv) {
                set[n++] = v;
            }
        }
    }
    free(copy);
    *set_p = set;
    return n;
}

static int cmd_paths(gig_plan_t *plan, const int *s, int ns, const int *d,
                     int nd)
{
    const gig_graph_t *g = gig_plan_graph(plan);
    const gig_pathset_t *ps;
    int i, j;

    for (i = 0; i < ns; ++i) {
        for (j = 0; j < nd; ++j) {
            if (s[i] == d[j]) {
                continue;
            }
            if (gig_plan_paths(plan, s[i], d[j], &ps) != UCS_OK) {
                return 1;
            }
            gig_pathset_print(g, ps, stdout);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"topo",      required_argument, NULL, 't'},
        {"synthetic", required_argument, NULL, 's'},
        {"write",     required_argument, NULL, 'w'},
        {"list",      no_argument,       NULL, 'l'},
        {"calibrate", optional_argument, NULL, 'c'},
        {"help",      no_argument,       NULL, 'h'},
        {NULL, 0, NULL, 0}
    };
    const char *topo = NULL, *synth = NULL, *out = NULL, *cmd = "summary";
    const char *const *names;
    gig_graph_t *g;
    gig_plan_t *plan;
    gig_fwd_t *fwd;
    ucs_status_t status;
    int *s, *d, ns, nd, c, i, k, rc = 0;
    long calib_mib = 0;

    while ((c = getopt_long(argc, argv, "t:s:w:lhc::", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            topo = optarg;
            break;
        case 's':
            synth = optarg;
            break;
        case 'w':
            out = optarg;
            break;
        case 'c':
            calib_mib = (optarg != NULL) ? atol(optarg) : 256;
            if ((calib_mib <= 0) || (calib_mib > 16384)) {
                fprintf(stderr, "mgi_topo: --calibrate=%s: 1..16384 MiB\n",
                        optarg);
                return 2;
            }
            break;
        case 'l':
            names = gig_synth_names();
            for (i = 0; names[i] != NULL; i += 2) {
                printf("%-22s %s\n", names[i], names[i + 1]);
            }
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        cmd = argv[optind++];
    }

    if ((topo == NULL) && (synth == NULL)) {
        /* the transport's topology file, so that both see one graph */
        topo = getenv("UCX_CUDA_MGI_TOPO_FILE");
    }
    status = gig_graph_load(topo, synth, &g);
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_topo: no graph: %s\n",
                ucs_status_string(status));
        return 1;
    }
    if (calib_mib > 0) {
        status = gig_calibrate(g, (size_t)calib_mib << 20);
        if (status != UCS_OK) {
            fprintf(stderr, "mgi_topo: calibration failed: %s\n",
                    ucs_status_string(status));
            gig_graph_destroy(g);
            return 1;
        }
    }
    if ((out != NULL) && (gig_topofile_save(g, out) != UCS_OK)) {
        gig_graph_destroy(g);
        return 1;
    }
    if (gig_plan_create(g, &plan) != UCS_OK) {
        gig_graph_destroy(g);
        return 1;
    }

    if (strcmp(cmd, "graph") == 0) {
        gig_graph_print(g, stdout);
    } else if (strcmp(cmd, "nics") == 0) {
        for (i = 0; i < g->nv; ++i) {
            if (g->v[i].type != GIG_VTX_GPU) {
                continue;
            }
            k = gig_plan_nic(plan, i);
            printf("%-12s server %d: NIC %s\n", g->v[i].name, g->v[i].server,
                   (k != GIG_NONE) ? g->v[k].name : "none");
        }
    } else if (strcmp(cmd, "dot") == 0) {
        gig_graph_print_dot(g, stdout);
    } else if (strcmp(cmd, "summary") == 0) {
        gig_graph_print(g, stdout);
        ns = parse_set(g, "all", &s);
        printf("\n");
        if (ns > 16) {
            printf("(%d GPUs: use 'paths SRCS DSTS' for chosen pairs)\n", ns);
        } else if (ns < 2) {
            printf("(%d GPU(s): no GPU pairs to plan)\n", ns);
        } else {
            rc = cmd_paths(plan, s, ns, s, ns);
            if ((rc == 0) &&
                (gig_fwd_create(plan, s, ns, s, ns, &fwd) == UCS_OK)) {
                printf("\nall-to-all channel of the %d GPUs:\n", ns);
                gig_fwd_print(g, fwd, stdout);
                gig_fwd_destroy(fwd);
            }
        }
        free(s);
    } else if (((strcmp(cmd, "paths") == 0) || (strcmp(cmd, "fwd") == 0)) &&
               (argc - optind == 2)) {
        ns = parse_set(g, argv[optind], &s);
        nd = parse_set(g, argv[optind + 1], &d);
        if (strcmp(cmd, "paths") == 0) {
            rc = cmd_paths(plan, s, ns, d, nd);
        } else if (gig_fwd_create(plan, s, ns, d, nd, &fwd) == UCS_OK) {
            gig_fwd_print(g, fwd, stdout);
            gig_fwd_destroy(fwd);
        } else {
            rc = 1;
        }
        free(s);
        free(d);
    } else {
        usage(stderr);
        rc = 2;
    }
    gig_plan_destroy(plan);
    gig_graph_destroy(g);
    return rc;
}
