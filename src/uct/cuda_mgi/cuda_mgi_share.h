/**
 * cuda_mgi: how a striped operation is divided among the paths, and how the
 * shares follow the paths' measured finishing times.  Pure arithmetic,
 * tested on the CPU.
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_SHARE_H
#define UCT_CUDA_MGI_SHARE_H

#include <stddef.h>


/* How strongly one operation's finishing times move a share */
#define UCT_CUDA_MGI_ADAPT_GAIN   0.25
/* Most of an operation one staged path may take beside the direct path */
#define UCT_CUDA_MGI_MAX_SHARE    0.5
/* A staged path below this share is dropped, then probed again every
 * PROBE_INTERVAL striped operations at a quarter of its starting share */
#define UCT_CUDA_MGI_MIN_SHARE      0.01
#define UCT_CUDA_MGI_PROBE_INTERVAL 256


/**
 * Divide length bytes: parts[0] goes direct, parts[1 + i] through staged
 * path i.  With the direct path, staged parts are whole multiples of align
 * (what does not fill a chunk goes direct); without it the staged paths take
 * everything in proportion to their shares, the remainder (or, for a length
 * too small to split, all of it) on the path with the largest share.
 * The parts always add up to length.
 */
void uct_cuda_mgi_share_split(size_t length, const double *shares,
                              unsigned num_staged, int direct_ok,
                              size_t align, size_t *parts);

/**
 * The next share of a staged path whose part landed t_part seconds after the
 * operation was posted, when the direct part landed after t_direct: it grows
 * when the path finished first and shrinks when it finished last, by at most
 * a factor (1 +- GAIN), up to MAX_SHARE.
 */
double uct_cuda_mgi_share_adapt(double share, double t_direct, double t_part);

#endif
