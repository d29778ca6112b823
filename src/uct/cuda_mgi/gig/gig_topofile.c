/*
 * Topology files: a discovered or synthetic graph written out for a person
 * to read, edit or simulate, and loaded back in place of discovery
 * (UCX_CUDA_MGI_TOPO_FILE).  Format, one statement a line, '#' comments:
 *
 *   gig-topology 1
 *   origin <free text>
 *   vertex <name> <gpu|cpu|nvswitch|pcie|nic|net> server=<n>
 *          [numa=<n>] [cuda=<n>] [pci=<bus id>] [model=<word>]
 *          [dev=<UCX devices>]   (a NIC: its UCX device names as
 *                                 UCX_NET_DEVICES takes them, e.g.
 *                                 mlx5_0:1 or eth1,eth2; an interface
 *                                 without a PCI function, as a veth)
 *   link <a> <b> <nvlink|pcie|xpi|net|gpudirect> <count> <GB/s a->b>
 *        [<GB/s b->a>]            (default: the same both ways; 0: none)
 *
 * The network vertex takes no server.  Links of the same ends add up, and
 * their sums are held to the same limits as one line's, so that whatever
 * the reader accepts the writer writes back in a form the reader accepts.
 * Anything else is rejected with "<file>:<line>: <reason>".  Only a
 * regular file of at most GIG_TOPO_FILE_MAX bytes is read.
 */
#include "gig.h"
#include "gig_int.h"

#include <ucs/debug/log_def.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GIG_TOPO_LINE_MAX   1024
#define GIG_TOPO_TOK_MAX    16
#define GIG_TOPO_CAP_MAX    1e9     /* GB/s: beyond any link by far */
#define GIG_TOPO_COUNT_MAX  100000
#define GIG_TOPO_ID_MAX     1000000
/* a million vertices and links written out stay well below this */
#define GIG_TOPO_FILE_MAX   ((size_t)64 << 20)

typedef struct {
    const char  *name;
    unsigned    line;
    char        *errbuf;
    size_t      errlen;
    /* (server, cuda) of the GPUs read so far -> vertex, open addressing:
     * a duplicate CUDA index is found without a scan of every vertex */
    int         *cuda_hash;
    int         cuda_cap, ncuda;
} gig_topo_ctx_t;

static unsigned gig_topo_cuda_slot(long server, long cuda, int cap)
{
    uint64_t k = ((uint64_t)server << 16) ^ (uint64_t)cuda;

    k *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 32) & (unsigned)(cap - 1);
}

/* the GPU already at (server, cuda), GIG_NONE if none, or -2 out of memory;
 * else records id there */
static int gig_topo_cuda_claim(gig_topo_ctx_t *c, const gig_graph_t *g,
                               long server, long cuda, int id)
{
    int *hash, cap, i, v;
    unsigned h;

    if (2 * (c->ncuda + 1) > c->cuda_cap) {
        cap  = (c->cuda_cap == 0) ? 64 : 2 * c->cuda_cap;
        hash = malloc(cap * sizeof(*hash));
        if (hash == NULL) {
            return -2;
        }
        memset(hash, 0xff, cap * sizeof(*hash));
        for (i = 0; i < c->cuda_cap; ++i) {
            v = c->cuda_hash[i];
            if (v < 0) {
                continue;
            }
            for (h = gig_topo_cuda_slot(g->v[v].server, g->v[v].cuda_dev, cap);
                 hash[h] >= 0; h = (h + 1) & (unsigned)(cap - 1)) {
            }
            hash[h] = v;
        }
        free(c->cuda_hash);
        c->cuda_hash = hash;
        c->cuda_cap  = cap;
    }
    for (h = gig_topo_cuda_slot(server, cuda, c->cuda_cap);
         c->cuda_hash[h] >= 0; h = (h + 1) & (unsigned)(c->cuda_cap - 1)) {
        v = c->cuda_hash[h];
        if ((g->v[v].server == server) && (g->v[v].cuda_dev == cuda)) {
            return v;
        }
    }
    if (id != GIG_NONE) {
        c->cuda_hash[h] = id;
        ++c->ncuda;
    }
    return GIG_NONE;
}

static ucs_status_t gig_topo_err(gig_topo_ctx_t *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if ((c->errbuf != NULL) && (c->errlen > 0)) {
        snprintf(c->errbuf, c->errlen, "%s:%u: %s", c->name, c->line, msg);
    }
    return UCS_ERR_INVALID_PARAM;
}

static int gig_topo_long(const char *s, long min, long max, long *val_p)
{
    char *end;
    long v;

    if ((*s == '\0') || (strlen(s) > 12)) {
        return 0;
    }
    errno = 0;
    v     = strtol(s, &end, 10);
    if ((errno != 0) || (*end != '\0') || (v < min) || (v > max)) {
        return 0;
    }
    *val_p = v;
    return 1;
}

/* 0 ok, -1 not a number, -2 negative, -3 too large */
static int gig_topo_cap(const char *s, double *val_p)
{
    char *end;
    double v;

    if ((*s == '\0') || (strlen(s) > 32)) {
        return (*s == '\0') ? -1 : -3;
    }
    errno = 0;
    v     = strtod(s, &end);
    if ((*end != '\0') || isnan(v) || ((errno != 0) && (v == 0))) {
        return -1;
    }
    if (v < 0) {
        return -2;
    }
    if (isinf(v) || (v > GIG_TOPO_CAP_MAX)) {
        return -3;
    }
    *val_p = v;
    return 0;
}

static ucs_status_t gig_topo_vertex(gig_topo_ctx_t *c, gig_graph_t *g,
                                    char **tok, int ntok)
{
    long server = -1, numa = -1, cuda = -1, v;
    const char *pci = NULL, *model = NULL, *dev = NULL, *val;
    ucs_status_t status;
    int type, i, id;

    if (ntok < 3) {
        return gig_topo_err(c, "vertex: missing %s", (ntok < 2) ? "name" :
                            "type");
    }
    if (strlen(tok[1]) >= GIG_NAME_MAX) {
        return gig_topo_err(c, "vertex '%.40s...': name longer than %d",
                            tok[1], GIG_NAME_MAX - 1);
    }
    if (gig_graph_find_name(g, tok[1]) != GIG_NONE) {
        return gig_topo_err(c, "vertex '%s': duplicate name", tok[1]);
    }
    type = gig_vertex_type_parse(tok[2]);
    if (type < 0) {
        return gig_topo_err(c, "vertex '%s': unknown type '%s' (gpu, cpu, "
                            "nvswitch, pcie, nic, net)", tok[1], tok[2]);
    }
    for (i = 3; i < ntok; ++i) {
        val = strchr(tok[i], '=');
        if (val == NULL) {
            return gig_topo_err(c, "vertex '%s': '%s' is not key=value",
                                tok[1], tok[i]);
        }
        ++val;
        if (strncmp(tok[i], "server=", 7) == 0) {
            if (!gig_topo_long(val, 0, GIG_TOPO_ID_MAX, &server)) {
                return gig_topo_err(c, "vertex '%s': bad server '%s'",
                                    tok[1], val);
            }
        } else if (strncmp(tok[i], "numa=", 5) == 0) {
            if (!gig_topo_long(val, -1, 4096, &numa)) {
                return gig_topo_err(c, "vertex '%s': bad numa '%s'", tok[1],
                                    val);
            }
        } else if (strncmp(tok[i], "cuda=", 5) == 0) {
            if (!gig_topo_long(val, -1, 4096, &cuda)) {
                return gig_topo_err(c, "vertex '%s': bad cuda '%s'", tok[1],
                                    val);
            }
        } else if (strncmp(tok[i], "pci=", 4) == 0) {
            if ((strlen(val) == 0) || (strlen(val) >= GIG_PCI_BUS_ID_MAX)) {
                return gig_topo_err(c, "vertex '%s': bad pci '%s'", tok[1],
                                    val);
            }
            pci = val;
        } else if (strncmp(tok[i], "model=", 6) == 0) {
            if (strlen(val) >= GIG_NAME_MAX) {
                return gig_topo_err(c, "vertex '%s': model longer than %d",
                                    tok[1], GIG_NAME_MAX - 1);
            }
            model = val;
        } else if (strncmp(tok[i], "dev=", 4) == 0) {
            if ((strlen(val) == 0) || (strlen(val) >= GIG_UCX_DEV_MAX) ||
                (strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                        "VWXYZ0123456789_.:,-") != strlen(val))) {
                return gig_topo_err(c, "vertex '%s': bad dev '%.80s' (UCX "
                                    "device names, comma-separated, under "
                                    "%d characters)", tok[1], val,
                                    GIG_UCX_DEV_MAX);
            }
            dev = val;
        } else {
            return gig_topo_err(c, "vertex '%s': unknown attribute '%s'",
                                tok[1], tok[i]);
        }
    }
    if ((type == GIG_VTX_NET) && (server >= 0)) {
        return gig_topo_err(c, "vertex '%s': the network takes no server",
                            tok[1]);
    }
    if ((type == GIG_VTX_NET) && (g->net != GIG_NONE)) {
        return gig_topo_err(c, "vertex '%s': second network vertex (have "
                            "'%s')", tok[1], g->v[g->net].name);
    }
    if ((type != GIG_VTX_NET) && (server < 0)) {
        return gig_topo_err(c, "vertex '%s': missing server=<n>", tok[1]);
    }
    if ((dev != NULL) && (type != GIG_VTX_NIC)) {
        return gig_topo_err(c, "vertex '%s': dev= on a %s (NICs only)",
                            tok[1], tok[2]);
    }
    if ((cuda >= 0) && (type != GIG_VTX_GPU)) {
        return gig_topo_err(c, "vertex '%s': cuda= on a %s", tok[1], tok[2]);
    }
    if ((type == GIG_VTX_GPU) && (cuda >= 0)) {
        v = gig_topo_cuda_claim(c, g, server, cuda, GIG_NONE);
        if (v == -2) {
            return gig_topo_err(c, "vertex '%s': out of memory", tok[1]);
        } else if (v != GIG_NONE) {
            return gig_topo_err(c, "vertex '%s': cuda=%ld already is "
                                "'%s'", tok[1], cuda, g->v[v].name);
        }
    }
    status = gig_graph_add_vertex(g, type, tok[1], server, &id);
    if (status != UCS_OK) {
        return gig_topo_err(c, "vertex '%s': %s", tok[1],
                            ucs_status_string(status));
    }
    g->v[id].numa     = numa;
    g->v[id].cuda_dev = cuda;
    if ((type == GIG_VTX_GPU) && (cuda >= 0)) {
        gig_topo_cuda_claim(c, g, server, cuda, id);
    }
    if (pci != NULL) {
        snprintf(g->v[id].pci_bus_id, sizeof(g->v[id].pci_bus_id), "%s",
                 pci);
    }
    if (model != NULL) {
        snprintf(g->v[id].model, sizeof(g->v[id].model), "%s", model);
    }
    if (dev != NULL) {
        snprintf(g->v[id].ucx_dev, sizeof(g->v[id].ucx_dev), "%s", dev);
    }
    return UCS_OK;
}

static ucs_status_t gig_topo_link(gig_topo_ctx_t *c, gig_graph_t *g,
                                  char **tok, int ntok)
{
    static const char *what[] = {"", "first end", "second end", "link type",
                                 "count", "capacity"};
    double cap[2];
    ucs_status_t status;
    int end[2], link, i, r, e;
    long count;

    if (ntok < 6) {
        return gig_topo_err(c, "link: missing %s", what[ntok]);
    }
    if (ntok > 7) {
        return gig_topo_err(c, "link: unexpected '%s' after the capacities",
                            tok[7]);
    }
    for (i = 0; i < 2; ++i) {
        end[i] = gig_graph_find_name(g, tok[1 + i]);
        if (end[i] == GIG_NONE) {
            return gig_topo_err(c, "link: unknown vertex '%s'", tok[1 + i]);
        }
    }
    if (end[0] == end[1]) {
        return gig_topo_err(c, "link: '%s' to itself", tok[1]);
    }
    link = gig_link_type_parse(tok[3]);
    if (link < 0) {
        return gig_topo_err(c, "link %s-%s: unknown type '%s' (nvlink, pcie, "
                            "xpi, net, gpudirect)", tok[1], tok[2], tok[3]);
    }
    if (!gig_topo_long(tok[4], 1, GIG_TOPO_COUNT_MAX, &count)) {
        return gig_topo_err(c, "link %s-%s: bad count '%s' (1..%d)", tok[1],
                            tok[2], tok[4], GIG_TOPO_COUNT_MAX);
    }
    for (i = 0; i < 2; ++i) {
        if (5 + i >= ntok) {
            cap[1] = cap[0];
            break;
        }
        r = gig_topo_cap(tok[5 + i], &cap[i]);
        if (r == -1) {
            return gig_topo_err(c, "link %s-%s: bad capacity '%s'", tok[1],
                                tok[2], tok[5 + i]);
        } else if (r == -2) {
            return gig_topo_err(c, "link %s-%s: negative capacity '%s'",
                                tok[1], tok[2], tok[5 + i]);
        } else if (r == -3) {
            return gig_topo_err(c, "link %s-%s: capacity '%.40s' out of "
                                "range (max %g GB/s)", tok[1], tok[2],
                                tok[5 + i], GIG_TOPO_CAP_MAX);
        }
    }
    if ((end[0] == g->net) || (end[1] == g->net)) {
        if (g->v[end[(end[0] == g->net) ? 1 : 0]].type != GIG_VTX_NIC) {
            return gig_topo_err(c, "link %s-%s: the network links only to "
                                "NICs", tok[1], tok[2]);
        }
    } else if (g->v[end[0]].server != g->v[end[1]].server) {
        return gig_topo_err(c, "link %s-%s: ends on servers %d and %d (servers "
                            "meet only through the network)", tok[1], tok[2],
                            g->v[end[0]].server, g->v[end[1]].server);
    }
    for (i = 0; i < 2; ++i) {
        e = gig_graph_edge(g, end[i], end[1 - i]);
        if ((cap[i] == 0) || (e == GIG_NONE)) {
            continue;
        }
        if (g->e[e].count + count > GIG_TOPO_COUNT_MAX) {
            return gig_topo_err(c, "link %s-%s: with the earlier links of "
                                "these ends, count %u + %ld exceeds %d",
                                tok[1 + i], tok[2 - i], g->e[e].count, count,
                                GIG_TOPO_COUNT_MAX);
        }
        if (g->e[e].capacity + cap[i] > GIG_TOPO_CAP_MAX) {
            return gig_topo_err(c, "link %s-%s: with the earlier links of "
                                "these ends, capacity %.9g + %.9g GB/s "
                                "exceeds %g", tok[1 + i], tok[2 - i],
                                g->e[e].capacity, cap[i], GIG_TOPO_CAP_MAX);
        }
    }
    status = gig_graph_add_link(g, end[0], end[1], link, count, cap[0],
                                cap[1]);
    if (status != UCS_OK) {
        return gig_topo_err(c, "link %s-%s: %s", tok[1], tok[2],
                            ucs_status_string(status));
    }
    return UCS_OK;
}

ucs_status_t gig_topofile_parse(const char *text, size_t len,
                                const char *name, gig_graph_t **graph_p,
                                char *errbuf, size_t errlen)
{
    gig_topo_ctx_t c = {name, 0, errbuf, errlen, NULL, 0, 0};
    char line[GIG_TOPO_LINE_MAX + 1];
    char *tok[GIG_TOPO_TOK_MAX + 1];
    char origin[128];
    size_t pos = 0, n;
    const char *nl;
    ucs_status_t status;
    int ntok, header = 0, i;
    gig_graph_t *g;
    char *p;

    if ((errbuf != NULL) && (errlen > 0)) {
        errbuf[0] = '\0';
    }
    snprintf(origin, sizeof(origin), "file %s", name);
    status = gig_graph_create(origin, &g);
    if (status != UCS_OK) {
        return status;
    }

    while (pos < len) {
        c.line++;
        nl = memchr(text + pos, '\n', len - pos);
        n  = (nl != NULL) ? (size_t)(nl - (text + pos)) : len - pos;
        if (n > GIG_TOPO_LINE_MAX) {
            status = gig_topo_err(&c, "line longer than %d characters",
                                  GIG_TOPO_LINE_MAX);
            goto err;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos    += n + 1;
        for (i = 0; i < (int)n; ++i) {
            if (((unsigned char)line[i] < 0x20 && line[i] != '\t' &&
                 line[i] != '\r') || ((unsigned char)line[i] >= 0x7f)) {
                status = gig_topo_err(&c, "binary byte 0x%02x at column %d",
                                      (unsigned char)line[i], i + 1);
                goto err;
            }
        }
        p = strchr(line, '#');
        if (p != NULL) {
            *p = '\0';
        }
        for (p = line; (*p == ' ') || (*p == '\t'); ++p) {
        }
        if (header && (strncmp(p, "origin", 6) == 0) &&
            ((p[6] == ' ') || (p[6] == '\t'))) {
            for (p += 6; (*p == ' ') || (*p == '\t'); ++p) {
            }
            snprintf(g->origin, sizeof(g->origin), "%s", p);
            continue;
        }

        ntok = 0;
        for (p = strtok(line, " \t\r"); p != NULL;
             p = strtok(NULL, " \t\r")) {
            if (ntok == GIG_TOPO_TOK_MAX) {
                status = gig_topo_err(&c, "more than %d fields",
                                      GIG_TOPO_TOK_MAX);
                goto err;
            }
            tok[ntok++] = p;
        }
        if (ntok == 0) {
            continue;
        }

        if (!header) {
            if ((strcmp(tok[0], "gig-topology") != 0) || (ntok != 2)) {
                status = gig_topo_err(&c, "expected 'gig-topology 1' first, "
                                      "got '%.40s'", tok[0]);
                goto err;
            }
            if (strcmp(tok[1], "1") != 0) {
                status = gig_topo_err(&c, "unsupported version '%.20s' "
                                      "(this reader knows 1)", tok[1]);
                goto err;
            }
            header = 1;
        } else if (strcmp(tok[0], "vertex") == 0) {
            status = gig_topo_vertex(&c, g, tok, ntok);
            if (status != UCS_OK) {
                goto err;
            }
        } else if (strcmp(tok[0], "link") == 0) {
            status = gig_topo_link(&c, g, tok, ntok);
            if (status != UCS_OK) {
                goto err;
            }
        } else {
            status = gig_topo_err(&c, "unknown keyword '%.40s' (vertex, "
                                  "link, origin)", tok[0]);
            goto err;
        }
    }

    if (!header) {
        c.line = (c.line == 0) ? 1 : c.line;
        status = gig_topo_err(&c, "empty file: no 'gig-topology 1' header");
        goto err;
    }
    if (g->nv == 0) {
        status = gig_topo_err(&c, "no vertices");
        goto err;
    }
    status = gig_graph_finalize(g);
    if (status != UCS_OK) {
        status = gig_topo_err(&c, "inconsistent graph: %s",
                              ucs_status_string(status));
        goto err;
    }
    free(c.cuda_hash);
    *graph_p = g;
    return UCS_OK;

err:
    free(c.cuda_hash);
    gig_graph_destroy(g);
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t gig_topofile_load(const char *path, gig_graph_t **graph_p)
{
    char errbuf[512];
    ucs_status_t status;
    size_t len = 0;
    struct stat st;
    char *text;
    ssize_t n;
    int fd;

    /* O_NONBLOCK: a FIFO must not block the open (it is refused below) */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        ucs_error("gig topology file '%s': cannot open: %m", path);
        return UCS_ERR_NO_ELEM;
    }
    if (fstat(fd, &st) != 0) {
        ucs_error("gig topology file '%s': cannot stat: %m", path);
        close(fd);
        return UCS_ERR_IO_ERROR;
    }
    if (!S_ISREG(st.st_mode)) {
        ucs_error("gig topology file '%s': not a regular file", path);
        close(fd);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((size_t)st.st_size > GIG_TOPO_FILE_MAX) {
        ucs_error("gig topology file '%s': %lld bytes, more than the %zu a "
                  "topology file may have", path, (long long)st.st_size,
                  GIG_TOPO_FILE_MAX);
        close(fd);
        return UCS_ERR_INVALID_PARAM;
    }
    text = malloc(st.st_size + 1);
    if (text == NULL) {
        ucs_error("gig topology file '%s': out of memory", path);
        close(fd);
        return UCS_ERR_NO_MEMORY;
    }
    /* a file that grows while read is cut at its size at the fstat */
    while (len < (size_t)st.st_size) {
        n = read(fd, text + len, st.st_size - len);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        } else if (n < 0) {
            ucs_error("gig topology file '%s': read error: %m", path);
            free(text);
            close(fd);
            return UCS_ERR_IO_ERROR;
        } else if (n == 0) {
            break;
        }
        len += n;
    }
    close(fd);

    status = gig_topofile_parse(text, len, path, graph_p, errbuf,
                                sizeof(errbuf));
    free(text);
    if (status != UCS_OK) {
        ucs_error("gig topology file %s", errbuf);
    }
    return status;
}

ucs_status_t gig_topofile_write(const gig_graph_t *g, FILE *f)
{
    char cap[32], cap_back[32];
    const gig_vertex_t *v;
    const gig_edge_t *e;
    int i, back;

    fprintf(f, "gig-topology 1\n");
    fprintf(f, "origin %s\n", g->origin);
    fprintf(f, "# %d vertices, %d directed edges; capacities in GB/s "
            "(1e9 B/s) per direction\n", g->nv, g->ne);
    for (i = 0; i < g->nv; ++i) {
        v = &g->v[i];
        fprintf(f, "vertex %s %s", v->name, gig_vertex_type_str(v->type));
        if (v->type != GIG_VTX_NET) {
            fprintf(f, " server=%d", v->server);
        }
        gig_vertex_fprint_attrs(f, v);
        if (v->model[0] != '\0') {
            fprintf(f, " model=");
            for (const char *m = v->model; *m != '\0'; ++m) {
                fputc((*m == ' ' || *m == '#') ? '_' : *m, f);
            }
        }
        fprintf(f, "\n");
    }
    for (i = 0; i < g->ne; ++i) {
        e    = &g->e[i];
        back = gig_graph_edge(g, e->dst, e->src);
        /* one line for both directions only where they share type and
         * count; else each direction on a line of its own */
        if ((back != GIG_NONE) && ((g->e[back].link != e->link) ||
                                   (g->e[back].count != e->count))) {
            back = GIG_NONE;
        }
        if ((back != GIG_NONE) && (back < i)) {
            continue;
        }
        /* the capacities compared as written: two that differ only
         * beyond the digits written read back as one */
        snprintf(cap, sizeof(cap), "%.9g", e->capacity);
        snprintf(cap_back, sizeof(cap_back), "%.9g",
                 (back == GIG_NONE) ? 0.0 : g->e[back].capacity);
        fprintf(f, "link %s %s %s %u %s", g->v[e->src].name,
                g->v[e->dst].name, gig_link_type_str(e->link), e->count, cap);
        if (strcmp(cap, cap_back) != 0) {
            fprintf(f, " %s", cap_back);
        }
        fprintf(f, "\n");
    }
    return ferror(f) ? UCS_ERR_IO_ERROR : UCS_OK;
}

ucs_status_t gig_topofile_save(const gig_graph_t *g, const char *path)
{
    ucs_status_t status;
    FILE *f;

    f = fopen(path, "w");
    if (f == NULL) {
        ucs_error("gig topology file '%s': cannot create: %m", path);
        return UCS_ERR_IO_ERROR;
    }
    status = gig_topofile_write(g, f);
    if (fclose(f) != 0) {
        status = UCS_ERR_IO_ERROR;
    }
    if (status != UCS_OK) {
        ucs_error("gig topology file '%s': write failed", path);
    }
    return status;
}
