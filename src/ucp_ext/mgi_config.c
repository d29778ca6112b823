/**
 * MGI context: its settings. The MGI_* environment is read through UCS
 * config tables (as UCX reads UCX_*): one for the user's settings, shown
 * with their help by `mgi_info -c`, and one of test hooks (MGI_TEST_*),
 * which tests and benchmark scripts use and users need not. Every number
 * has a range, checked in one place (mgi_params_bounds) whether it came
 * from the environment or from the caller's mgi_context_params_t.
 */
#include "mgi_int.h"

#include <ucp/api/ucp_version.h>
#include <ucs/config/parser.h>
#include <ucs/sys/string.h>

#include <dirent.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The user's settings, as the parser fills them ("auto": the CPU / GPU
 * default of mgi_params_ring_defaults). */
typedef struct mgi_config {
    char          *bootstrap;
    unsigned      rank;
    unsigned      nranks;
    char          *ucx_tls;
    size_t        seg_size;
    unsigned long stage_depth;
    unsigned long sort_depth;
    unsigned long recv_depth;
    unsigned long final_depth;
    unsigned long sorter_blocks;
    unsigned long mover_batch;
    unsigned      direct_rings;
    unsigned      timeout_ms;
    unsigned      idle_us;
    unsigned      log_interval_ms;
} mgi_config_t;

/* Test hooks: what tests and benchmark scripts vary and a user need not. */
typedef struct mgi_test_config {
    unsigned long gpu_defaults;
    unsigned      sort_mirror;
    unsigned      ctl_ucp;
    unsigned      tuple_size;
    unsigned      producer_threads;
    unsigned      batch;
    unsigned      msg_batch;
    unsigned      dev_tile_batch;
    unsigned      stage_groups;
    unsigned      max_channels;
    unsigned      mover_flushes;
    unsigned      sorter_threads;
    unsigned long sort_rings;
    unsigned      send_zcopy;
    unsigned      send_wait_rounds;
    unsigned      direct_ring_kb;
    unsigned      direct_publish_kb;
    unsigned      peer_watch_ms;
} mgi_test_config_t;

#define MGI_CFG(_f)  ucs_offsetof(mgi_config_t, _f)
#define MGI_TCFG(_f) ucs_offsetof(mgi_test_config_t, _f)

/* The one place each setting is documented: `mgi_info -c` prints it. */
static ucs_config_field_t mgi_config_table[] = {
    {"BOOTSTRAP", "",
     "host:port of rank 0 for the built-in TCP bootstrap, used where the\n"
     "application passes no out-of-band allgather.",
     MGI_CFG(bootstrap), UCS_CONFIG_TYPE_STRING},

    {"RANK", "0", "This process's rank for the TCP bootstrap (0..1022).",
     MGI_CFG(rank), UCS_CONFIG_TYPE_UINT},

    {"NRANKS", "1", "Processes of the job for the TCP bootstrap (1..1023).",
     MGI_CFG(nranks), UCS_CONFIG_TYPE_UINT},

    {"UCX_TLS", "",
     "Transports of libmgi's own UCP context, in UCX_TLS syntax (GPU\n"
     "endpoints in several processes: sm,self,cuda_mgi,cuda_copy); empty:\n"
     "UCX_TLS. Lets an application keep its own UCX_TLS for its own UCP.",
     MGI_CFG(ucx_tls), UCS_CONFIG_TYPE_STRING},

    {"SEG_SIZE", "auto",
     "Bytes of a ring segment (256..512k). auto: 128k on a machine with a\n"
     "GPU (halved where a sorter block's shared memory cannot hold it), else\n"
     "a warp of producers' 16 tuples of 24 bytes. Larger segments carry GPU\n"
     "device sends faster; smaller ones cost less memory per ring.",
     MGI_CFG(seg_size), UCS_CONFIG_TYPE_MEMUNITS},

    {"STAGE_DEPTH", "auto",
     "Segments of a stage ring, one per user block (a power of two,\n"
     "1..1048576). auto: 16 with a GPU, else 8.",
     MGI_CFG(stage_depth), UCS_CONFIG_TYPE_ULUNITS},

    {"SORT_DEPTH", "auto",
     "Segments of a sort ring, one per next hop and sort ring (a power of\n"
     "two, 1..1048576). auto: 256 with a GPU, else 8. Deeper rings keep more\n"
     "in flight to a slow next hop; they are checked against free memory.",
     MGI_CFG(sort_depth), UCS_CONFIG_TYPE_ULUNITS},

    {"RECV_DEPTH", "auto",
     "Segments of a receive lane: the credits of one sender (a power of\n"
     "two, 1..1048576). auto: 256 with a GPU, else 8.",
     MGI_CFG(recv_depth), UCS_CONFIG_TYPE_ULUNITS},

    {"FINAL_DEPTH", "auto",
     "Segments of a final ring, one per channel and consuming user block\n"
     "(a power of two, 1..1048576). auto: 16 with a GPU, else 8.",
     MGI_CFG(final_depth), UCS_CONFIG_TYPE_ULUNITS},

    {"SORTER_BLOCKS", "auto",
     "Blocks of a GPU endpoint's persistent sorter kernel (1..1024), resident\n"
     "beside the user's blocks: more sort faster and leave fewer SMs to the\n"
     "user's kernels. auto: 16 with a GPU, else 2.",
     MGI_CFG(sorter_blocks), UCS_CONFIG_TYPE_ULUNITS},

    {"MOVER_BATCH", "auto",
     "Segments a mover moves per flush of its UCP worker (1..4096). auto:\n"
     "32 with a GPU, else 16. Larger batches carry GPU device sends faster\n"
     "at the cost of latency.",
     MGI_CFG(mover_batch), UCS_CONFIG_TYPE_ULUNITS},

    {"DIRECT_RINGS", "1",
     "1: a channel whose endpoints are all GPU endpoints of one host (a\n"
     "schema, at most 64 destinations) gets direct rings unless its creator\n"
     "opts out (MGI_CH_FLAG_NO_DIRECT): a user block stores its tuples in a\n"
     "ring of its own in each destination GPU's memory (no sorter, no\n"
     "mover). 0: every channel through the sorters and movers.",
     MGI_CFG(direct_rings), UCS_CONFIG_TYPE_UINT},

    {"TIMEOUT_MS", "60000",
     "Bound of every host-side wait, in milliseconds (1..86400000): a wait\n"
     "that passes it fails with UCS_ERR_TIMED_OUT, naming what it waited for.",
     MGI_CFG(timeout_ms), UCS_CONFIG_TYPE_UINT},

    {"IDLE_US", "50",
     "Sleep of an idle sorter or mover, in microseconds (0..100000): lower\n"
     "answers sooner, higher costs the host less.",
     MGI_CFG(idle_us), UCS_CONFIG_TYPE_UINT},

    {"LOG_INTERVAL_MS", "1000",
     "Period of the info log (UCX_LOG_LEVEL=info) of the movers' speeds and\n"
     "the rings' use, in milliseconds (0: none, at most 3600000).",
     MGI_CFG(log_interval_ms), UCS_CONFIG_TYPE_UINT},

    {NULL}
};

/* Test hooks, MGI_TEST_*: not user settings, and not shown by mgi_info -c
 * (mgi_info -c -t shows them). */
static ucs_config_field_t mgi_test_config_table[] = {
    {"GPU_DEFAULTS", "auto",
     "Which defaults the \"auto\" ring settings take: 0 those for CPU\n"
     "endpoints, 1 for GPU endpoints; auto: from the machine.",
     MGI_TCFG(gpu_defaults), UCS_CONFIG_TYPE_ULUNITS},
    {"SORT_MIRROR", "0",
     "1: CPU endpoints' movers read sort rings through a control-word\n"
     "mirror, as for GPU endpoints, so make check runs that protocol.",
     MGI_TCFG(sort_mirror), UCS_CONFIG_TYPE_UINT},
    {"CTL_UCP", "0",
     "1: movers reach the lane control words of endpoints of this host\n"
     "with UCP puts and gets, as for other hosts, instead of shared memory.",
     MGI_TCFG(ctl_ucp), UCS_CONFIG_TYPE_UINT},
    {"TUPLE_SIZE", "24", "tuple_size of mgi_context_params_t.",
     MGI_TCFG(tuple_size), UCS_CONFIG_TYPE_UINT},
    {"PRODUCER_THREADS", "32", "producer_threads of mgi_context_params_t.",
     MGI_TCFG(producer_threads), UCS_CONFIG_TYPE_UINT},
    {"BATCH", "16", "batch of mgi_context_params_t.",
     MGI_TCFG(batch), UCS_CONFIG_TYPE_UINT},
    {"MSG_BATCH", "4096", "msg_batch of mgi_context_params_t.",
     MGI_TCFG(msg_batch), UCS_CONFIG_TYPE_UINT},
    {"DEV_TILE_BATCH", "0", "dev_tile_batch of mgi_context_params_t.",
     MGI_TCFG(dev_tile_batch), UCS_CONFIG_TYPE_UINT},
    {"STAGE_GROUPS", "1", "stage_groups of mgi_context_params_t.",
     MGI_TCFG(stage_groups), UCS_CONFIG_TYPE_UINT},
    {"MAX_CHANNELS", "256", "max_channels of mgi_context_params_t.",
     MGI_TCFG(max_channels), UCS_CONFIG_TYPE_UINT},
    {"MOVER_FLUSHES", "16", "mover_flushes of mgi_context_params_t.",
     MGI_TCFG(mover_flushes), UCS_CONFIG_TYPE_UINT},
    {"SORTER_THREADS", "256", "sorter_threads of mgi_context_params_t.",
     MGI_TCFG(sorter_threads), UCS_CONFIG_TYPE_UINT},
    {"SORT_RINGS", "auto",
     "sort_rings of mgi_context_params_t; auto: 4 with a GPU, else 1.",
     MGI_TCFG(sort_rings), UCS_CONFIG_TYPE_ULUNITS},
    {"SEND_ZCOPY", "0", "send_zcopy of mgi_context_params_t.",
     MGI_TCFG(send_zcopy), UCS_CONFIG_TYPE_UINT},
    {"SEND_WAIT_ROUNDS", "16", "send_wait_rounds of mgi_context_params_t.",
     MGI_TCFG(send_wait_rounds), UCS_CONFIG_TYPE_UINT},
    {"DIRECT_RING_KB", "512", "direct_ring_kb of mgi_context_params_t.",
     MGI_TCFG(direct_ring_kb), UCS_CONFIG_TYPE_UINT},
    {"DIRECT_PUBLISH_KB", "128", "direct_publish_kb of mgi_context_params_t.",
     MGI_TCFG(direct_publish_kb), UCS_CONFIG_TYPE_UINT},
    {"PEER_WATCH_MS", "100", "peer_watch_ms of mgi_context_params_t.",
     MGI_TCFG(peer_watch_ms), UCS_CONFIG_TYPE_UINT},
    {NULL}
};

#define MGI_ENV_PREFIX  "MGI_"
#define MGI_TEST_PREFIX "TEST_"

/* Settings that were removed: each lost its measurement or existed for a
 * test. Set, they fail the context's create, so that a job does not run
 * believing it has them. */
static const struct {
    const char *name;
    const char *why;
} mgi_config_removed[] = {
    {"MGI_PEER_DIRECT", "sorters writing into other GPUs' receive lanes "
     "were slower than the movers; direct rings (MGI_DIRECT_RINGS) are the "
     "path without a mover"},
    {"MGI_RECV_ZCOPY", "receive lanes' segments by reference were no "
     "faster than copied"},
    {"MGI_DEV_MSG_BATCH", "batched block sends were slower than a message "
     "a tuple; tile sends batch (mgi_dev_send_block_tile)"},
    {"MGI_OWNER_HELP", "lane owners copying for other sorter blocks slowed "
     "device sends"},
    {"MGI_MOVER_STREAMS", "more CUDA streams for a mover's copies were no "
     "faster"},
    {"MGI_MOVER_COPY_BATCH", "a flush's copies always go to the copy "
     "engine as one batch where the CUDA runtime has it"},
    {"MGI_SORT_MIRROR", "a test hook now (MGI_TEST_SORT_MIRROR)"},
    {"MGI_CTL_SHM", "lane control words of this host's endpoints always go "
     "through shared memory (test hook: MGI_TEST_CTL_UCP)"},
    {"MGI_LOOP_DIRECT", "whole stage segments for the endpoint itself "
     "always go straight to its final rings"},
    {"MGI_STAGE_ZCOPY", "such segments always reach final rings by "
     "reference"},
    {"MGI_EOF_ALONE", "a block's EOF always goes in a sort segment of its "
     "own"},
    {"MGI_LANE_APART", "the sorter blocks owning receive lanes always "
     "leave stage rings to the others where there are enough"},
    {"MGI_SORTER_COALESCE", "a sorter pass always writes runs word by word "
     "in segment order"},
    {"MGI_GPU_DEFAULTS", "the machine decides (test hook: "
     "MGI_TEST_GPU_DEFAULTS, or mgi_context_params_t.gpu_defaults)"},
    {"MGI_TUPLE_SIZE", "set mgi_context_params_t.tuple_size, or MGI_SEG_SIZE"},
    {"MGI_PRODUCER_THREADS", "set mgi_context_params_t.producer_threads, or "
     "MGI_SEG_SIZE"},
    {"MGI_BATCH", "set mgi_context_params_t.batch, or MGI_SEG_SIZE"},
    {"MGI_MSG_BATCH", "its default was measured best; "
     "mgi_context_params_t.msg_batch"},
    {"MGI_DEV_TILE_BATCH", "mgi_context_params_t.dev_tile_batch"},
    {"MGI_STAGE_GROUPS", "mgi_context_params_t.stage_groups"},
    {"MGI_MAX_CHANNELS", "mgi_context_params_t.max_channels"},
    {"MGI_MOVER_FLUSHES", "mgi_context_params_t.mover_flushes"},
    {"MGI_SORTER_THREADS", "mgi_context_params_t.sorter_threads"},
    {"MGI_SORT_RINGS", "mgi_context_params_t.sort_rings"},
    {"MGI_SEND_ZCOPY", "mgi_context_params_t.send_zcopy"},
    {"MGI_SEND_WAIT_ROUNDS", "mgi_context_params_t.send_wait_rounds"},
    {"MGI_DIRECT_RING_KB", "mgi_context_params_t.direct_ring_kb"},
    {"MGI_DIRECT_PUBLISH_KB", "mgi_context_params_t.direct_publish_kb"},
    {"MGI_PEER_WATCH_MS", "mgi_context_params_t.peer_watch_ms"},
};

/* MGI_* variables not warned of as unknown: those of this project's
 * programs and scripts, and the TCP bootstrap's job token, which its
 * launcher sets and mgi_bootstrap.c reads itself. */
static const char *const mgi_config_foreign[] = {
    "MGI_JOB_TOKEN", "MGI_TEST_", "MGI_WL_", "MGI_PERF_", "MGI_SUITE_",
    "MGI_MPI", "MGI_UCX_SRC", "MGI_UCX_PREFIX", "MGI_DEPS", "MGI_TREE",
    "MGI_NO_APT", "MGI_NCCL_LIB", "MGI_SRCDIR", "MGI_TOP", "MGI_UCX",
    "MGI_BUILDDIR", "MGI_INFO", "MGI_HAVE_DRIVER", "MGI_NVML_CPPFLAGS",
    "MGI_JOBS", "MGI_SANITIZE_", "MGI_FUZZ_", "MGI_KERNEL_TIMEOUT_S",
    "MGI_SIZES"
};

extern char **environ;

/* The UCS parser's fill, whose signature changed: UCX 1.13 takes the
 * fields and their prefix, later versions a table entry. */
static ucs_status_t mgi_config_fill_env(void *opts, ucs_config_field_t *fields,
                                        size_t size, const char *env_prefix,
                                        const char *table_prefix)
{
#if UCP_API_MINOR >= 14 || UCP_API_MAJOR > 1
    ucs_config_global_list_entry_t entry;

    memset(&entry, 0, sizeof(entry));
    entry.name   = "mgi";
    entry.prefix = table_prefix;
    entry.table  = fields;
    entry.size   = size;
    return ucs_config_parser_fill_opts(opts, &entry, env_prefix, 0);
#else
    (void)size;
    return ucs_config_parser_fill_opts(opts, fields, env_prefix,
                                       table_prefix, 0);
#endif
}

static ucs_status_t mgi_config_fill(void *opts, ucs_config_field_t *fields,
                                    size_t size, const char *table_prefix)
{
    return mgi_config_fill_env(opts, fields, size, MGI_ENV_PREFIX,
                               table_prefix);
}

/* cuda_mgi's UCX_CUDA_MGI_TOPO_FILE, which the channels' plan reads too,
 * read the way cuda_mgi reads it: UCX then counts it as used where no
 * cuda_mgi interface is opened (a machine without a GPU), and does not
 * warn of it as unused at ucp_init. Its documentation is cuda_mgi's
 * (ucx_info -c, docs/transport.md). */
typedef struct {
    char *topo_file;
} mgi_uct_config_t;

static ucs_config_field_t mgi_uct_config_table[] = {
    {"TOPO_FILE", "", "cuda_mgi's; see its own table.",
     ucs_offsetof(mgi_uct_config_t, topo_file), UCS_CONFIG_TYPE_STRING},
    {NULL}
};

/* Whether s is a decimal number, blanks around it allowed (or "auto"). */
static int mgi_config_is_decimal(const char *s, int may_be_auto)
{
    size_t n;

    s += strspn(s, " \t");
    if (may_be_auto && (strncasecmp(s, "auto", 4) == 0)) {
        s += 4;
    } else {
        n = strspn(s, "0123456789");
        if ((n == 0) || (n > 19)) {
            return 0;
        }
        s += n;
    }
    s += strspn(s, " \t");
    return *s == '\0';
}

/* Each variable of the table that the environment sets is one its parser
 * takes: else refused here, naming the variable, its value and what it
 * takes (UCS's own message names the field without its prefix). */
static int mgi_config_env_valid(ucs_config_field_t *fields,
                                const char *table_prefix)
{
    char name[128], syntax[256];
    uint64_t tmp[4];
    ucs_config_field_t *f;
    const char *value;
    int ok = 1;

    for (f = fields; f->name != NULL; ++f) {
        snprintf(name, sizeof(name), "%s%s%s", MGI_ENV_PREFIX,
                 (table_prefix != NULL) ? table_prefix : "", f->name);
        value = getenv(name);
        if (value == NULL) {
            continue;
        }
        memset(tmp, 0, sizeof(tmp));
        if (((f->parser.read == ucs_config_sscanf_uint) ||
             (f->parser.read == ucs_config_sscanf_ulunits)) &&
            !mgi_config_is_decimal(value,
                                   f->parser.read ==
                                   ucs_config_sscanf_ulunits)) {
            /* the parser's sscanf takes "1x" as 1 and "-1" as its
             * largest value */
            ucs_error("mgi context: %s=\"%s\" is not a decimal number%s: "
                      "mgi_info -c lists the settings", name, value,
                      (f->parser.read == ucs_config_sscanf_ulunits) ?
                      " or \"auto\"" : "");
            ok = 0;
            continue;
        }
        if (f->parser.read(value, tmp, f->parser.arg) == 1) {
            f->parser.release(tmp, f->parser.arg);
            continue;
        }
        f->parser.help(syntax, sizeof(syntax) - 1, f->parser.arg);
        ucs_error("mgi context: %s=\"%s\" is not a value it takes (%s): "
                  "mgi_info -c lists the settings", name, value, syntax);
        ok = 0;
    }
    return ok;
}

static int mgi_config_is_field(ucs_config_field_t *fields,
                               const char *prefix, const char *name,
                               size_t len)
{
    size_t plen = strlen(prefix);
    ucs_config_field_t *f;

    if ((len <= plen) || (strncmp(name, prefix, plen) != 0)) {
        return 0;
    }
    for (f = fields; f->name != NULL; ++f) {
        if ((strlen(f->name) == len - plen) &&
            (strncmp(name + plen, f->name, len - plen) == 0)) {
            return 1;
        }
    }
    return 0;
}

/* The environment's MGI_* variables: a removed setting refuses the create
 * (warn == 0: params_init, which cannot fail, says nothing; the create
 * says it), an unknown one is warned of once a process, as UCX warns of
 * UCX_* variables it did not use (UCX_WARN_UNUSED_ENV_VARS=n: not). */
static ucs_status_t mgi_config_env_names(int say)
{
    static int warned;
    const char *w = getenv("UCX_WARN_UNUSED_ENV_VARS");
    int quiet     = (w != NULL) && ((w[0] == 'n') || (w[0] == 'N') ||
                                    (w[0] == '0'));
    ucs_status_t status = UCS_OK;
    char **e;
    size_t len, i;
    int known;

    for (e = environ; (e != NULL) && (*e != NULL); ++e) {
        if (strncmp(*e, MGI_ENV_PREFIX, strlen(MGI_ENV_PREFIX)) != 0) {
            continue;
        }
        len = strcspn(*e, "=");
        for (i = 0; i < ucs_static_array_size(mgi_config_removed); ++i) {
            if ((strlen(mgi_config_removed[i].name) == len) &&
                (strncmp(*e, mgi_config_removed[i].name, len) == 0)) {
                break;
            }
        }
        if (i < ucs_static_array_size(mgi_config_removed)) {
            if (say) {
                ucs_error("mgi context: %.*s is no longer a setting (%s): "
                          "unset it (mgi_info -c lists the settings)",
                          (int)len, *e, mgi_config_removed[i].why);
            }
            status = UCS_ERR_INVALID_PARAM;
            continue;
        }
        known = mgi_config_is_field(mgi_config_table, MGI_ENV_PREFIX, *e,
                                    len) ||
                mgi_config_is_field(mgi_test_config_table,
                                    MGI_ENV_PREFIX MGI_TEST_PREFIX, *e, len);
        for (i = 0; !known && (i < ucs_static_array_size(mgi_config_foreign));
             ++i) {
            known = (strncmp(*e, mgi_config_foreign[i],
                             strlen(mgi_config_foreign[i])) == 0);
        }
        if (!known && say && !quiet && !warned) {
            ucs_warn("mgi context: %.*s is not a libmgi setting, ignored "
                     "(mgi_info -c lists the settings)", (int)len, *e);
        }
    }
    if (say) {
        warned = 1;
    }
    return status;
}

/* Whether the NVIDIA driver lists a GPU on this machine and the process
 * may see one (CUDA_VISIBLE_DEVICES not empty or negative): read from
 * /proc, without initializing CUDA, as a process may fork after
 * mgi_context_params_init and CUDA is not fork-safe. */
int mgi_machine_has_gpu(void)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    struct dirent *e;
    int found = 0;
    DIR *d;

    if ((vis != NULL) && ((vis[0] == '\0') || (vis[0] == '-'))) {
        return 0;
    }
    d = opendir("/proc/driver/nvidia/gpus");
    if (d == NULL) {
        return 0;
    }
    while (!found && ((e = readdir(d)) != NULL)) {
        found = (e->d_name[0] != '.');
    }
    closedir(d);
    return found;
}

/* The "auto" value of an unsigned long setting: its CPU / GPU default. */
static unsigned mgi_config_auto(unsigned long v, unsigned gpu, unsigned cpu_v,
                                unsigned gpu_v)
{
    if (v == UCS_ULUNITS_AUTO) {
        return gpu ? gpu_v : cpu_v;
    }
    return (v > UINT_MAX) ? UINT_MAX : (unsigned)v;   /* "inf": refused */
}

static mgi_config_t      mgi_cfg;
static mgi_test_config_t mgi_tcfg;
static pthread_mutex_t   mgi_cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static int               mgi_cfg_filled;
static const char        *mgi_topo_file; /* UCX_CUDA_MGI_TOPO_FILE, interned */

/* A string setting's value as long as the process lives: params filled
 * by one read keep pointing at it after the next read released the
 * table's copy. NULL for "". Called with mgi_cfg_lock held. */
static const char *mgi_config_intern(const char *v)
{
    static struct mgi_config_str {
        struct mgi_config_str *next;
        char                  s[];
    } *strs;
    struct mgi_config_str *e;

    if ((v == NULL) || (v[0] == '\0')) {
        return NULL;
    }
    for (e = strs; e != NULL; e = e->next) {
        if (strcmp(e->s, v) == 0) {
            return e->s;
        }
    }
    e = malloc(sizeof(*e) + strlen(v) + 1);
    if (e == NULL) {
        return NULL;
    }
    strcpy(e->s, v);
    e->next = strs;
    strs    = e;
    return e->s;
}

/* The transport's UCX_CUDA_MGI_TOPO_FILE into mgi_topo_file: the channels
 * plan on the topology the transport plans on */
static void mgi_config_read_topo_file(void)
{
    mgi_uct_config_t u;

    if (mgi_config_fill_env(&u, mgi_uct_config_table, sizeof(u), "UCX_",
                            "CUDA_MGI_") == UCS_OK) {
        mgi_topo_file = mgi_config_intern(u.topo_file);
        ucs_config_parser_release_opts(&u, mgi_uct_config_table);
    }
}

/* The environment's settings read into p (every field), p->gpu_defaults
 * first where `keep` has its bit. say: refusals are said (the create), and
 * a refusal is returned; else bad values keep their defaults, silently. */
static ucs_status_t mgi_config_read(mgi_context_params_t *p, uint64_t keep,
                                    int say)
{
    ucs_status_t status = UCS_OK;
    unsigned gpu;

    if (say) {
        status = mgi_config_env_names(1);
        if (!mgi_config_env_valid(mgi_config_table, NULL) ||
            !mgi_config_env_valid(mgi_test_config_table, MGI_TEST_PREFIX)) {
            status = UCS_ERR_INVALID_PARAM;
        }
        if (status != UCS_OK) {
            return status;
        }
    }

    pthread_mutex_lock(&mgi_cfg_lock);
    if (mgi_cfg_filled) {
        ucs_config_parser_release_opts(&mgi_cfg, mgi_config_table);
        ucs_config_parser_release_opts(&mgi_tcfg, mgi_test_config_table);
        mgi_cfg_filled = 0;
    }
    if ((mgi_config_fill(&mgi_cfg, mgi_config_table, sizeof(mgi_cfg),
                         NULL) != UCS_OK) ||
        (mgi_config_fill(&mgi_tcfg, mgi_test_config_table, sizeof(mgi_tcfg),
                         MGI_TEST_PREFIX) != UCS_OK)) {
        /* a value mgi_config_env_valid took but the parser not: defaults */
        ucs_config_parser_set_default_values(&mgi_cfg, mgi_config_table);
        ucs_config_parser_set_default_values(&mgi_tcfg,
                                             mgi_test_config_table);
        status = say ? UCS_ERR_INVALID_PARAM : UCS_OK;
    }
    mgi_cfg_filled = 1;
    mgi_config_read_topo_file();

    if (!(keep & MGI_CONTEXT_PARAM_FIELD_GPU_DEFAULTS)) {
        p->gpu_defaults = (mgi_tcfg.gpu_defaults == UCS_ULUNITS_AUTO) ?
                          mgi_machine_has_gpu() :
                          (mgi_tcfg.gpu_defaults > UINT_MAX) ? UINT_MAX :
                          (unsigned)mgi_tcfg.gpu_defaults;
    }
    gpu = (p->gpu_defaults == 1);

    p->bootstrap_addr   = mgi_config_intern(mgi_cfg.bootstrap);
    p->rank             = (mgi_cfg.rank > INT_MAX) ? INT_MAX :
                          (int)mgi_cfg.rank;
    p->size             = (mgi_cfg.nranks > INT_MAX) ? INT_MAX :
                          (int)mgi_cfg.nranks;
    p->ucx_tls          = mgi_config_intern(mgi_cfg.ucx_tls);
    p->seg_size         = (mgi_cfg.seg_size == UCS_MEMUNITS_AUTO) ?
                          (gpu ? MGI_GPU_SEG_SIZE : 0) : mgi_cfg.seg_size;
    p->stage_depth      = mgi_config_auto(mgi_cfg.stage_depth, gpu, 8, 16);
    p->sort_depth       = mgi_config_auto(mgi_cfg.sort_depth, gpu, 8, 256);
    p->recv_depth       = mgi_config_auto(mgi_cfg.recv_depth, gpu, 8, 256);
    p->final_depth      = mgi_config_auto(mgi_cfg.final_depth, gpu, 8, 16);
    p->sorter_blocks    = mgi_config_auto(mgi_cfg.sorter_blocks, gpu, 2, 16);
    p->mover_batch      = mgi_config_auto(mgi_cfg.mover_batch, gpu, 16, 32);
    p->direct_rings     = mgi_cfg.direct_rings;
    p->timeout_ms       = mgi_cfg.timeout_ms;
    p->idle_us          = mgi_cfg.idle_us;
    p->log_interval_ms  = mgi_cfg.log_interval_ms;

    p->tuple_size       = mgi_tcfg.tuple_size;
    p->producer_threads = mgi_tcfg.producer_threads;
    p->batch            = mgi_tcfg.batch;
    p->msg_batch        = mgi_tcfg.msg_batch;
    p->dev_tile_batch   = mgi_tcfg.dev_tile_batch;
    p->stage_groups     = mgi_tcfg.stage_groups;
    p->max_channels     = mgi_tcfg.max_channels;
    p->mover_flushes    = mgi_tcfg.mover_flushes;
    p->sorter_threads   = mgi_tcfg.sorter_threads;
    p->sort_rings       = mgi_config_auto(mgi_tcfg.sort_rings, gpu, 1, 4);
    p->send_zcopy       = mgi_tcfg.send_zcopy;
    p->send_wait_rounds = mgi_tcfg.send_wait_rounds;
    p->direct_ring_kb   = mgi_tcfg.direct_ring_kb;
    p->direct_publish_kb = mgi_tcfg.direct_publish_kb;
    p->peer_watch_ms    = mgi_tcfg.peer_watch_ms;
    pthread_mutex_unlock(&mgi_cfg_lock);
    return status;
}

void mgi_context_params_init(mgi_context_params_t *p)
{
    memset(p, 0, sizeof(*p));
    (void)mgi_config_read(p, 0, 0);
    p->field_mask = MGI_CONTEXT_PARAM_FIELDS_ALL;
}

/* The caller's fields (its field_mask), each of size bytes at offset. */
#define MGI_PF(_bit, _field) \
    {MGI_CONTEXT_PARAM_FIELD_##_bit, \
     ucs_offsetof(mgi_context_params_t, _field), \
     sizeof(((mgi_context_params_t*)NULL)->_field)}
static const struct {
    uint64_t bit;
    size_t   offset, size;
} mgi_params_fields[] = {
    MGI_PF(OOB, oob), MGI_PF(BOOTSTRAP_ADDR, bootstrap_addr),
    MGI_PF(RANK, rank), MGI_PF(SIZE, size), MGI_PF(SEG_SIZE, seg_size),
    MGI_PF(TUPLE_SIZE, tuple_size),
    MGI_PF(PRODUCER_THREADS, producer_threads), MGI_PF(BATCH, batch),
    MGI_PF(MSG_BATCH, msg_batch), MGI_PF(DEV_TILE_BATCH, dev_tile_batch),
    MGI_PF(STAGE_DEPTH, stage_depth), MGI_PF(STAGE_GROUPS, stage_groups),
    MGI_PF(SORT_DEPTH, sort_depth), MGI_PF(RECV_DEPTH, recv_depth),
    MGI_PF(FINAL_DEPTH, final_depth), MGI_PF(MAX_CHANNELS, max_channels),
    MGI_PF(MOVER_BATCH, mover_batch), MGI_PF(MOVER_FLUSHES, mover_flushes),
    MGI_PF(TIMEOUT_MS, timeout_ms), MGI_PF(IDLE_US, idle_us),
    MGI_PF(LOG_INTERVAL_MS, log_interval_ms),
    MGI_PF(SORTER_BLOCKS, sorter_blocks),
    MGI_PF(SORTER_THREADS, sorter_threads), MGI_PF(SORT_RINGS, sort_rings),
    MGI_PF(SEND_ZCOPY, send_zcopy),
    MGI_PF(SEND_WAIT_ROUNDS, send_wait_rounds),
    MGI_PF(DIRECT_RINGS, direct_rings),
    MGI_PF(DIRECT_RING_KB, direct_ring_kb),
    MGI_PF(DIRECT_PUBLISH_KB, direct_publish_kb),
    MGI_PF(UCX_TLS, ucx_tls), MGI_PF(GPU_DEFAULTS, gpu_defaults),
    MGI_PF(PEER_WATCH_MS, peer_watch_ms)
};

/* Every number's range: a value out of it is refused, naming the field and
 * its variable (0 for an unsigned "inf" or a wrapped -1 included). */
#define MGI_PB(_field, _var, _min, _max) \
    {ucs_offsetof(mgi_context_params_t, _field), \
     sizeof(((mgi_context_params_t*)NULL)->_field), #_field, _var, _min, \
     _max}
static const struct {
    size_t             offset, size;
    const char         *field, *var;
    unsigned long long min, max;
} mgi_params_bounds_table[] = {
    MGI_PB(rank, "MGI_RANK", 0, MGI_MAX_RANKS - 1),
    MGI_PB(size, "MGI_NRANKS", 1, MGI_MAX_RANKS),
    MGI_PB(seg_size, "MGI_SEG_SIZE", 0, 512u << 10),
    MGI_PB(tuple_size, "MGI_TEST_TUPLE_SIZE", 1, MGI_MSG_MAX_LEN),
    MGI_PB(producer_threads, "MGI_TEST_PRODUCER_THREADS", 1, 1024),
    MGI_PB(batch, "MGI_TEST_BATCH", 1, 4096),
    MGI_PB(msg_batch, "MGI_TEST_MSG_BATCH", 0, MGI_MSG_MAX_LEN),
    MGI_PB(dev_tile_batch, "MGI_TEST_DEV_TILE_BATCH", 0, MGI_MSG_MAX_LEN),
    MGI_PB(stage_depth, "MGI_STAGE_DEPTH", 1, 1u << 20),
    MGI_PB(stage_groups, "MGI_TEST_STAGE_GROUPS", 1, MGI_STAGE_GROUPS_MAX),
    MGI_PB(sort_depth, "MGI_SORT_DEPTH", 1, 1u << 20),
    MGI_PB(recv_depth, "MGI_RECV_DEPTH", 1, 1u << 20),
    MGI_PB(final_depth, "MGI_FINAL_DEPTH", 1, 1u << 20),
    MGI_PB(max_channels, "MGI_TEST_MAX_CHANNELS", 1, 0xffff),
    MGI_PB(mover_batch, "MGI_MOVER_BATCH", 1, 4096),
    MGI_PB(mover_flushes, "MGI_TEST_MOVER_FLUSHES", 1,
           MGI_MOVER_FLUSHES_MAX),
    MGI_PB(timeout_ms, "MGI_TIMEOUT_MS", 1, 86400000),
    MGI_PB(idle_us, "MGI_IDLE_US", 0, 100000),
    MGI_PB(log_interval_ms, "MGI_LOG_INTERVAL_MS", 0, 3600000),
    MGI_PB(sorter_blocks, "MGI_SORTER_BLOCKS", 1, MGI_GPU_MAX_BLOCKS),
    MGI_PB(sorter_threads, "MGI_TEST_SORTER_THREADS", 32, 1024),
    MGI_PB(sort_rings, "MGI_TEST_SORT_RINGS", 1, MGI_MAX_SORT_RINGS),
    MGI_PB(send_zcopy, "MGI_TEST_SEND_ZCOPY", 0, 1),
    MGI_PB(send_wait_rounds, "MGI_TEST_SEND_WAIT_ROUNDS", 0, 1u << 20),
    MGI_PB(direct_rings, "MGI_DIRECT_RINGS", 0, 1),
    MGI_PB(direct_ring_kb, "MGI_TEST_DIRECT_RING_KB", 4, 1u << 20),
    MGI_PB(direct_publish_kb, "MGI_TEST_DIRECT_PUBLISH_KB", 0, 1u << 20),
    MGI_PB(gpu_defaults, "MGI_TEST_GPU_DEFAULTS", 0, 1),
    MGI_PB(peer_watch_ms, "MGI_TEST_PEER_WATCH_MS", 0, 3600000)
};

static ucs_status_t mgi_params_bounds(const mgi_context_params_t *p)
{
    const mgi_context_params_t *base = p;
    unsigned long long v;
    size_t i;
    int neg;

    for (i = 0; i < ucs_static_array_size(mgi_params_bounds_table); ++i) {
        const void *f = (const char*)base +
                        mgi_params_bounds_table[i].offset;

        neg = 0;
        if (mgi_params_bounds_table[i].size == sizeof(size_t)) {
            v = *(const size_t*)f;
        } else if ((mgi_params_bounds_table[i].offset ==
                    ucs_offsetof(mgi_context_params_t, rank)) ||
                   (mgi_params_bounds_table[i].offset ==
                    ucs_offsetof(mgi_context_params_t, size))) {
            neg = (*(const int*)f < 0);
            v   = neg ? 0 : (unsigned long long)*(const int*)f;
        } else {
            v = *(const unsigned*)f;
        }
        if (!neg && (v >= mgi_params_bounds_table[i].min) &&
            (v <= mgi_params_bounds_table[i].max)) {
            continue;
        }
        ucs_error("mgi context: %s (%s) %s%llu is out of range [%llu, %llu]",
                  mgi_params_bounds_table[i].field,
                  mgi_params_bounds_table[i].var, neg ? "-" : "",
                  neg ? (unsigned long long)-(long long)*(const int*)f : v,
                  mgi_params_bounds_table[i].min,
                  mgi_params_bounds_table[i].max);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t mgi_params_resolve(const mgi_context_params_t *params,
                                mgi_context_params_t *p)
{
    ucs_status_t status;
    size_t i;

    memset(p, 0, sizeof(*p));
    if (params->field_mask & MGI_CONTEXT_PARAM_FIELD_GPU_DEFAULTS) {
        p->gpu_defaults = params->gpu_defaults;
    }
    status = mgi_config_read(p, params->field_mask, 1);
    if (status != UCS_OK) {
        return status;
    }
    for (i = 0; i < ucs_static_array_size(mgi_params_fields); ++i) {
        if (params->field_mask & mgi_params_fields[i].bit) {
            memcpy((char*)p + mgi_params_fields[i].offset,
                   (const char*)params + mgi_params_fields[i].offset,
                   mgi_params_fields[i].size);
        }
    }
    p->field_mask = params->field_mask;
    return mgi_params_bounds(p);
}

int mgi_config_test_hook(const char *name)
{
    int v = 0;

    pthread_mutex_lock(&mgi_cfg_lock);
    if (!mgi_cfg_filled) {
        pthread_mutex_unlock(&mgi_cfg_lock);
        return 0;
    }
    if (strcmp(name, "SORT_MIRROR") == 0) {
        v = (mgi_tcfg.sort_mirror != 0);
    } else if (strcmp(name, "CTL_UCP") == 0) {
        v = (mgi_tcfg.ctl_ucp != 0);
    }
    pthread_mutex_unlock(&mgi_cfg_lock);
    return v;
}

const char *mgi_config_topo_file(void)
{
    const char *f;

    pthread_mutex_lock(&mgi_cfg_lock);
    f = mgi_topo_file;          /* interned: NULL for "" */
    pthread_mutex_unlock(&mgi_cfg_lock);
    return f;
}

int mgi_config_seg_size_set(void)
{
    return getenv(MGI_ENV_PREFIX "SEG_SIZE") != NULL;
}

/* The parser's print, whose signature gained a filter in UCX 1.20. */
static void mgi_config_print_table(FILE *stream, const char *title,
                                   const void *opts,
                                   ucs_config_field_t *fields,
                                   const char *table_prefix,
                                   ucs_config_print_flags_t flags)
{
    fprintf(stream, "#\n# %s\n#\n", title);
#if UCP_API_MINOR >= 20 || UCP_API_MAJOR > 1
    ucs_config_parser_print_opts(stream, title, opts, fields, table_prefix,
                                 MGI_ENV_PREFIX, flags, NULL);
#else
    ucs_config_parser_print_opts(stream, title, opts, fields, table_prefix,
                                 MGI_ENV_PREFIX, flags);
#endif
}

ucs_status_t mgi_config_print(FILE *stream, int doc)
{
    ucs_config_print_flags_t flags = UCS_CONFIG_PRINT_CONFIG;
    mgi_context_params_t none, p;
    ucs_status_t status;

    if (doc & 1) {
        flags |= UCS_CONFIG_PRINT_DOC;
    }
    /* what a context's create would refuse, said */
    memset(&none, 0, sizeof(none));
    status = mgi_params_resolve(&none, &p);
    pthread_mutex_lock(&mgi_cfg_lock);
    if (mgi_cfg_filled) {
        mgi_config_print_table(stream, "libmgi settings", &mgi_cfg,
                               mgi_config_table, NULL, flags);
        if (doc & 2) {
            mgi_config_print_table(stream, "libmgi test hooks (not user "
                                   "settings)", &mgi_tcfg,
                                   mgi_test_config_table, MGI_TEST_PREFIX,
                                   flags);
        }
    }
    pthread_mutex_unlock(&mgi_cfg_lock);
    return status;
}
