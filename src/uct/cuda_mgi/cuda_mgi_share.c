/**
 * cuda_mgi: dividing striped operations among paths (see cuda_mgi_share.h).
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_share.h"


static size_t uct_cuda_mgi_align_down(size_t n, size_t align)
{
    return (align > 1) ? (n / align) * align : n;
}


void uct_cuda_mgi_share_split(size_t length, const double *shares,
                              unsigned num_staged, int direct_ok,
                              size_t align, size_t *parts)
{
    double sum      = 0;
    size_t staged   = 0;
    unsigned widest = 0, last = 0, i;

    for (i = 0; i < num_staged; ++i) {
        sum += shares[i];
        if (shares[i] > shares[widest]) {
            widest = i;
        }
    }
    if (direct_ok || (sum <= 0)) {
        sum = 1.0;
    }

    for (i = 0; i < num_staged; ++i) {
        parts[i + 1] = uct_cuda_mgi_align_down(
                (size_t)(length * (shares[i] / sum)), align);
        staged      += parts[i + 1];
        if (parts[i + 1] > 0) {
            last = i + 1;
        }
    }

    if (!direct_ok && (num_staged > 0)) {
        if (last == 0) {
            last = widest + 1; /* too small to split */
        }
        parts[last] += length - staged;
        staged       = length;
    }

    parts[0] = length - staged;
}


double uct_cuda_mgi_share_adapt(double share, double t_direct, double t_part)
{
    double ratio;

    if (t_direct < 1e-7) {
        t_direct = 1e-7;
    }
    if (t_part < 1e-7) {
        t_part = 1e-7;
    }

    ratio = t_direct / t_part;
    if (ratio < 0.5) {
        ratio = 0.5;
    } else if (ratio > 2.0) {
        ratio = 2.0;
    }

    share *= 1.0 + UCT_CUDA_MGI_ADAPT_GAIN * (ratio - 1.0);
    return (share > UCT_CUDA_MGI_MAX_SHARE) ? UCT_CUDA_MGI_MAX_SHARE : share;
}
