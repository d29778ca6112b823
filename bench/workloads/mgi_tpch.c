/**
 * Host side of the TPC-H-like generator: parameters, the Zipf table and the
 * reference generation that the GPU generator (mgi_tpch.cu) must equal byte
 * for byte.
 */
#include "mgi_tpch.h"

#include <math.h>
#include <string.h>

static uint64_t mgi_tpch_scaled(double per_sf, double sf)
{
    double n = floor(per_sf * sf + 0.5);

    return (n < 1.0) ? 1 : (uint64_t)n;
}

void mgi_tpch_params_init(mgi_tpch_params_t *p, uint64_t seed, double sf)
{
    memset(p, 0, sizeof(*p));
    p->seed     = seed;
    p->sf       = sf;
    p->n_orders = mgi_tpch_scaled((double)MGI_TPCH_ORDERS_PER_SF, sf);
    p->n_parts  = mgi_tpch_scaled((double)MGI_TPCH_PARTS_PER_SF, sf);
    p->n_custs  = mgi_tpch_scaled((double)MGI_TPCH_CUSTS_PER_SF, sf);
}

/* sum of k^-theta for k = a..b (1-based), Euler-Maclaurin to the first
 * derivative term: exact for a == b and for theta == 0, and within 1e-12
 * relative for the buckets the table uses (a > MGI_TPCH_ZIPF_EXACT). */
static double mgi_tpch_zipf_sum(double a, double b, double theta)
{
    double integral;

    if (a == b) {
        return pow(a, -theta);
    }
    if (theta == 1.0) {
        integral = log(b / a);
    } else {
        integral = (pow(b, 1.0 - theta) - pow(a, 1.0 - theta)) /
                   (1.0 - theta);
    }
    return integral + 0.5 * (pow(a, -theta) + pow(b, -theta)) +
           theta / 12.0 * (pow(a, -theta - 1.0) - pow(b, -theta - 1.0));
}

int mgi_tpch_zipf_init(mgi_tpch_zipf_t *z, uint64_t n, double theta)
{
    static double weight[MGI_TPCH_ZIPF_MAX_BUCKETS];
    double total = 0.0, partial = 0.0, t;
    uint64_t first = 0, width, prev = 0;
    uint32_t b = 0, i;

    if ((n == 0) || !(theta >= 0.0) || (theta > 10.0)) {
        return -1;
    }
    memset(z, 0, sizeof(*z));
    z->theta = theta;
    z->n     = n;
    while (first < n) {
        if (b == MGI_TPCH_ZIPF_MAX_BUCKETS) {
            return -1;
        }
        if (first < MGI_TPCH_ZIPF_EXACT) {
            width = 1;
        } else {
            width = (first + 1 + MGI_TPCH_ZIPF_BUCKET_DIV - 1) /
                    MGI_TPCH_ZIPF_BUCKET_DIV;
        }
        if (width > n - first) {
            width = n - first;
        }
        z->first[b] = first;
        z->width[b] = width;
        weight[b]   = mgi_tpch_zipf_sum((double)(first + 1),
                                        (double)(first + width), theta);
        total      += weight[b];
        first      += width;
        ++b;
    }
    z->nbuckets = b;
    for (i = 0; i < b; ++i) {
        partial += weight[i];
        t = ldexp(partial / total, 64);
        if ((i == b - 1) || (t >= 18446744073709551615.0)) {
            z->cum[i] = UINT64_MAX;
        } else {
            z->cum[i] = (uint64_t)t;
        }
        if (z->cum[i] < prev) {
            z->cum[i] = prev;
        }
        prev = z->cum[i];
    }
    return 0;
}

double mgi_tpch_zipf_prob(const mgi_tpch_zipf_t *z, uint64_t k)
{
    uint32_t b;
    double lo;

    for (b = 0; b < z->nbuckets; ++b) {
        if (k < z->first[b] + z->width[b]) {
            lo = (b == 0) ? 0.0 : ldexp((double)z->cum[b - 1], -64);
            return (ldexp((double)z->cum[b], -64) - lo) /
                   (double)z->width[b];
        }
    }
    return 0.0;
}

uint64_t mgi_tpch_lineitem_count(const mgi_tpch_params_t *p, uint64_t begin,
                                 uint64_t end)
{
    uint64_t o, n = 0;

    for (o = begin; o < end; ++o) {
        n += mgi_tpch_lines(p->seed, o);
    }
    return n;
}

void mgi_tpch_orders_gen(const mgi_tpch_params_t *p, uint64_t begin,
                         uint64_t end, const mgi_tpch_orders_t *c)
{
    uint64_t o;

    for (o = begin; o < end; ++o) {
        mgi_tpch_orders_row(p, c, o, o - begin);
    }
}

uint64_t mgi_tpch_lineitem_gen(const mgi_tpch_params_t *p,
                               const mgi_tpch_zipf_t *z, uint64_t begin,
                               uint64_t end, const mgi_tpch_lineitem_t *c)
{
    uint64_t o, row = 0;
    unsigned l, nl;

    for (o = begin; o < end; ++o) {
        nl = mgi_tpch_lines(p->seed, o);
        for (l = 0; l < nl; ++l) {
            mgi_tpch_lineitem_row(p, z, c, o, l, row++);
        }
    }
    return row;
}
