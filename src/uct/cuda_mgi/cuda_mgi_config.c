/**
 * Range checks of the UCX_CUDA_MGI_* settings, in one function free of CUDA
 * calls so that make check reaches every one of them without a GPU (an
 * interface opens only where there is one).
 */
#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_iface.h"

#include <ucs/debug/log.h>

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The unsigned settings, whose values UCX 1.13's parser takes modulo 2^32
 * ("4294967297" reads as 1) and from a minus sign ("-1" reads as
 * 4294967295): their text is checked where the environment gives it */
static const char *uct_cuda_mgi_uint_settings[] = {
    "MAX_POLL", "MAX_STREAMS", "MAX_OUTSTANDING",
    "STAGE_BUFS", NULL
};

static ucs_status_t uct_cuda_mgi_config_check_uint_env(void)
{
    const char **name;
    char var[64], *end;
    unsigned long long v;
    const char *s;

    for (name = uct_cuda_mgi_uint_settings; *name != NULL; ++name) {
        snprintf(var, sizeof(var), "UCX_CUDA_MGI_%s", *name);
        s = getenv(var);
        if (s == NULL) {
            continue;
        }
        while ((*s == ' ') || (*s == '\t')) {
            ++s;
        }
        if (*s == '-') {
            ucs_error("cuda_mgi: %s=%s is negative", var, getenv(var));
            return UCS_ERR_INVALID_PARAM;
        }
        errno = 0;
        v     = strtoull(s, &end, 0);
        if ((end != s) && ((errno == ERANGE) || (v > UINT_MAX))) {
            ucs_error("cuda_mgi: %s=%s is beyond %u (UCX would take it "
                      "modulo 2^32)", var, getenv(var), UINT_MAX);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

/* a bandwidth that is "auto" or a positive, finite number of bytes/s */
static ucs_status_t uct_cuda_mgi_config_check_bw(const char *var, double bw)
{
    if (UCT_CUDA_MGI_CONFIG_IS_AUTO(bw)) {
        return UCS_OK;
    }
    if (!(bw > 0) || isinf(bw)) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_%s=%g B/s: a bandwidth must be "
                  "positive and finite, or \"auto\"", var, bw);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t
uct_cuda_mgi_iface_config_check(const uct_cuda_mgi_iface_config_t *config)
{
    ucs_status_t status;
    unsigned i;
    char *end;
    long ordinal;

    status = uct_cuda_mgi_config_check_uint_env();
    if (status != UCS_OK) {
        return status;
    }

    if ((config->max_streams == 0) ||
        (config->max_streams > UCT_CUDA_MGI_MAX_STREAMS)) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_MAX_STREAMS=%u is out of range "
                  "1..%d", config->max_streams, UCT_CUDA_MGI_MAX_STREAMS);
        return UCS_ERR_INVALID_PARAM;
    }

    if (config->max_poll == 0) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_MAX_POLL must be at least 1");
        return UCS_ERR_INVALID_PARAM;
    }

    if (config->max_outstanding == 0) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_MAX_OUTSTANDING must be at least "
                  "1");
        return UCS_ERR_INVALID_PARAM;
    }

    if ((config->max_bcopy == 0) || (config->max_bcopy > UCS_GBYTE)) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_MAX_BCOPY=%zu is out of range "
                  "1..1g", config->max_bcopy);
        return UCS_ERR_INVALID_PARAM;
    }

    if (config->max_short > UINT_MAX) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_MAX_SHORT=%zu exceeds %u (the "
                  "length type of short operations)", config->max_short,
                  UINT_MAX);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((config->chunk_size < 4096) || (config->chunk_size > UCS_GBYTE)) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_CHUNK_SIZE=%zu is out of range "
                  "4k..1g", config->chunk_size);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((config->stage_bufs < 2) ||
        (config->stage_bufs > UCT_CUDA_MGI_MAX_STAGE_BUFS)) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_STAGE_BUFS=%u is out of range "
                  "2..%d", config->stage_bufs, UCT_CUDA_MGI_MAX_STAGE_BUFS);
        return UCS_ERR_INVALID_PARAM;
    }

    if (config->paths == 0) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_PATHS names no path (direct, "
                  "host, gpu)");
        return UCS_ERR_INVALID_PARAM;
    }

    if (!(config->latency >= 0) || isinf(config->latency)) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_LAT=%g s: a latency must be "
                  "finite and not negative", config->latency);
        return UCS_ERR_INVALID_PARAM;
    }

    status = uct_cuda_mgi_config_check_bw("BW", config->bandwidth);
    if (status != UCS_OK) {
        return status;
    }
    status = uct_cuda_mgi_config_check_bw("HOST_BW", config->host_bandwidth);
    if (status != UCS_OK) {
        return status;
    }

    if (config->relays.count > UCT_CUDA_MGI_MAX_GPUS) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_RELAY_GPUS names more than %d GPUs",
                  UCT_CUDA_MGI_MAX_GPUS);
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < config->relays.count; ++i) {
        ordinal = strtol(config->relays.names[i], &end, 10);
        if ((config->relays.names[i][0] == '\0') || (*end != '\0') ||
            (ordinal < 0) || (ordinal >= UCT_CUDA_MGI_MAX_GPUS)) {
            ucs_error("cuda_mgi: UCX_CUDA_MGI_RELAY_GPUS: \"%s\" is not a "
                      "CUDA device ordinal (0..%d)", config->relays.names[i],
                      UCT_CUDA_MGI_MAX_GPUS - 1);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    if ((config->topo_file != NULL) &&
        (strlen(config->topo_file) >= PATH_MAX)) {
        ucs_error("cuda_mgi: UCX_CUDA_MGI_TOPO_FILE is longer than %d "
                  "characters", PATH_MAX - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}
