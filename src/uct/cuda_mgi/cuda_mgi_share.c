/**
 * cuda_mgi: dividing striped operations among paths (see cuda_mgi_share.h).
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_share.h"

#include <string.h>


#define UCT_CUDA_MGI_MAX_LANES 8


static size_t uct_cuda_mgi_align_down(size_t n, size_t align)
{
    return (align > 1) ? (n / align) * align : n;
}


void uct_cuda_mgi_lane_init(uct_cuda_mgi_lane_t *lane, double capacity,
                            double latency)
{
    memset(lane, 0, sizeof(*lane));
    lane->capacity = (capacity > 0) ? capacity : 1.0;
    lane->rate     = lane->capacity;
    lane->latency  = (latency > 0) ? latency : 0;
}


void uct_cuda_mgi_share_split(size_t length, uct_cuda_mgi_lane_t *lanes,
                              unsigned num_lanes, int direct_ok, size_t align,
                              size_t *parts)
{
    double x[UCT_CUDA_MGI_MAX_LANES];
    int active[UCT_CUDA_MGI_MAX_LANES];
    double rate, work, t;
    unsigned i, widest = 0, fastest = 1;
    size_t staged = 0;
    int changed;

    if (num_lanes > UCT_CUDA_MGI_MAX_LANES) {
        num_lanes = UCT_CUDA_MGI_MAX_LANES;
    }
    memset(parts, 0, sizeof(*parts) * num_lanes);

    for (i = 0; i < num_lanes; ++i) {
        active[i] = (i > 0) || direct_ok;
        x[i]      = 0;
    }

    /* Water filling: all active lanes end at t; a lane whose latency and
     * queue alone outlast t takes nothing and leaves the set.  With lane i
     * ending at latency_i + (queued_i + x_i) / rate_i = t for all active
     * lanes and the x_i adding up to length: */
    do {
        rate    = 0;
        work    = 0;
        changed = 0;
        for (i = 0; i < num_lanes; ++i) {
            if (active[i]) {
                rate += lanes[i].rate;
                work += lanes[i].queued + lanes[i].latency * lanes[i].rate;
            }
        }
        if (rate <= 0) {
            break;
        }
        t = ((double)length + work) / rate;
        for (i = 0; i < num_lanes; ++i) {
            if (!active[i]) {
                continue;
            }
            x[i] = (t - lanes[i].latency) * lanes[i].rate - lanes[i].queued;
            if (x[i] < 0) {
                active[i] = 0;
                x[i]      = 0;
                changed   = 1;
            }
        }
    } while (changed);

    for (i = 1; i < num_lanes; ++i) {
        parts[i] = uct_cuda_mgi_align_down((size_t)(x[i] + 0.5), align);
        if (parts[i] > length - staged) {
            parts[i] = length - staged;
        }
        /* a lane left out long enough gets a chunk, to be measured again */
        if ((parts[i] == 0) && (lanes[i].idle >= UCT_CUDA_MGI_PROBE_INTERVAL) &&
            (align <= length - staged)) {
            parts[i] = (align > 1) ? align : (length - staged);
        }
        lanes[i].idle = (parts[i] > 0) ? 0 : (lanes[i].idle + 1);
        staged       += parts[i];
        if ((parts[i] > 0) && ((widest == 0) || (parts[i] > parts[widest]))) {
            widest = i;
        }
        if (lanes[i].rate > lanes[fastest].rate) {
            fastest = i;
        }
    }

    if (direct_ok || (num_lanes < 2)) {
        parts[0] = length - staged;
        return;
    }

    /* without the direct path the staged lanes take what is left */
    if (widest == 0) {
        widest = fastest;
    }
    parts[widest] += length - staged;
}


void uct_cuda_mgi_lane_post(uct_cuda_mgi_lane_t *lane, size_t len)
{
    lane->queued += (double)len;
}


void uct_cuda_mgi_lane_done(uct_cuda_mgi_lane_t *lane, size_t len,
                            double t_post, double t_done)
{
    double start = (lane->last_done > t_post) ? lane->last_done : t_post;
    double sample, rate;

    lane->queued -= (double)len;
    if (lane->queued < 0) {
        lane->queued = 0;
    }
    if (t_done > lane->last_done) {
        lane->last_done = t_done;
    }
    if ((len == 0) || (t_done <= start)) {
        return;
    }

    sample = (double)len / (t_done - start);
    if (sample > lane->capacity * UCT_CUDA_MGI_RATE_CEIL) {
        /* faster than the path can be: no rate, an artefact of when the
         * part was seen landed */
        return;
    }
    rate   = lane->rate + UCT_CUDA_MGI_RATE_GAIN * (sample - lane->rate);
    if (rate < lane->capacity * UCT_CUDA_MGI_RATE_FLOOR) {
        rate = lane->capacity * UCT_CUDA_MGI_RATE_FLOOR;
    } else if (rate > lane->capacity * UCT_CUDA_MGI_RATE_CEIL) {
        rate = lane->capacity * UCT_CUDA_MGI_RATE_CEIL;
    }
    lane->rate = rate;
}
