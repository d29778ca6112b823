/**
 * cuda_mgi: how a striped operation is divided among the paths of a route.
 * Pure arithmetic, tested on the CPU.
 *
 * Each path (a lane: the direct path, or a staged one) is a server with a
 * measured rate, a fixed latency and a queue of bytes posted to it that
 * have not landed.  A large operation is split so that every lane it uses
 * would finish its queue and its part at the same time (water filling):
 * with nothing in flight that is a split in proportion to the rates, less
 * the staged paths' latency; with many operations in flight a lane whose
 * queue is long gets less, so a slow staged path never holds the
 * operations behind it.  Rates follow what each lane delivered.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_SHARE_H
#define UCT_CUDA_MGI_SHARE_H

#include <stddef.h>


/* How strongly one part's measured rate moves a lane's rate */
#define UCT_CUDA_MGI_RATE_GAIN      0.25
/* A lane's rate stays within [FLOOR, CEIL] x its planned capacity: a busy
 * path (the host path while both GPUs send) slows down, a planner that
 * underestimated a path is corrected, and neither runs away */
#define UCT_CUDA_MGI_RATE_FLOOR     0.05
#define UCT_CUDA_MGI_RATE_CEIL      2.0
/* A staged lane left out of this many splits in a row (its part would be
 * smaller than a chunk) gets one chunk of the next, so that a path that
 * recovered is measured again */
#define UCT_CUDA_MGI_PROBE_INTERVAL 256


typedef struct uct_cuda_mgi_lane {
    double   capacity;   /* bytes/s, from the planner */
    double   latency;    /* s, from posting to the first byte landing */
    double   rate;       /* bytes/s, measured */
    double   queued;     /* bytes posted that have not landed */
    double   last_done;  /* when its latest part landed (s), 0: never */
    unsigned idle;       /* splits in a row it took no part of */
} uct_cuda_mgi_lane_t;


/* A lane of a planned capacity and latency, idle */
void uct_cuda_mgi_lane_init(uct_cuda_mgi_lane_t *lane, double capacity,
                            double latency);

/**
 * Divide length bytes among lanes: parts[0] goes to lane 0 (the direct
 * path), parts[i] to staged lane i.  The lanes' queues are taken into
 * account (see above) but not changed.  With the direct path, staged parts
 * are whole multiples of align (what does not fill a chunk goes direct);
 * without it (direct_ok == 0) the staged lanes take everything, the
 * remainder on the lane with the largest part (or, for a length too small
 * to split, the fastest).  The parts always add up to length.
 */
void uct_cuda_mgi_share_split(size_t length, uct_cuda_mgi_lane_t *lanes,
                              unsigned num_lanes, int direct_ok, size_t align,
                              size_t *parts);

/* A part of len bytes was posted to lane (add to its queue) */
void uct_cuda_mgi_lane_post(uct_cuda_mgi_lane_t *lane, size_t len);

/* A part of len bytes posted at t_post landed at t_done (seconds): take it
 * off the queue and measure the rate it moved at, counted from when the
 * lane was free to start it */
void uct_cuda_mgi_lane_done(uct_cuda_mgi_lane_t *lane, size_t len,
                            double t_post, double t_done);

#endif
