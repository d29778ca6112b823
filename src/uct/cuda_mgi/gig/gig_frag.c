/*
 * Interned vertex sequences: the unmanaged vertices of a forwarding route
 * (§4.4) get a small id, equal sequences the same one, so that merging
 * identical routes compares two ints instead of two vertex lists.  A plan
 * keeps one table for its life: ids stay valid across channels.
 */
#include "gig_int.h"

#include <stdlib.h>
#include <string.h>

/* first sizes; both grow by doubling */
#define GIG_FRAGS_INIT_SLOTS  256
#define GIG_FRAGS_INIT_VERTS  1024

static unsigned gig_frags_hash(const int *v, int n)
{
    uint32_t h = 2166136261u;   /* FNV-1a */
    int i;

    for (i = 0; i < n; ++i) {
        h = (h ^ (uint32_t)v[i]) * 16777619u;
    }
    return h ^ (uint32_t)n;
}

static int gig_frags_equal(const gig_frags_t *f, int id, const int *v, int n)
{
    const int *s = f->vert + f->start[id];
    int i;

    if (f->start[id + 1] - f->start[id] != n) {
        return 0;
    }
    for (i = 0; (i < n) && (s[i] == v[i]); ++i) {
    }
    return i == n;
}

static ucs_status_t gig_frags_rehash(gig_frags_t *f, int nslots)
{
    int *slot = malloc(nslots * sizeof(int));
    unsigned h;
    int id;

    if (slot == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memset(slot, 0xff, nslots * sizeof(int));
    for (id = 0; id < f->n; ++id) {
        h = gig_frags_hash(f->vert + f->start[id],
                           f->start[id + 1] - f->start[id]);
        for (h &= nslots - 1; slot[h] >= 0; h = (h + 1) & (nslots - 1)) {
        }
        slot[h] = id;
    }
    free(f->slot);
    f->slot   = slot;
    f->nslots = nslots;
    return UCS_OK;
}

static ucs_status_t gig_frags_grow(void **arr, int *cap, int need,
                                   size_t elem, int init)
{
    int ncap = (*cap == 0) ? init : *cap;
    void *p;

    if (need <= *cap) {
        return UCS_OK;
    }
    while (ncap < need) {
        ncap *= 2;
    }
    p = realloc(*arr, (size_t)ncap * elem);
    if (p == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    *arr = p;
    *cap = ncap;
    return UCS_OK;
}

int gig_frags_intern(gig_frags_t *f, const int *v, int n)
{
    unsigned h;
    int id;

    /* keep the table at most half full */
    if ((2 * (f->n + 1) > f->nslots) &&
        (gig_frags_rehash(f, (f->nslots == 0) ? GIG_FRAGS_INIT_SLOTS :
                          2 * f->nslots) != UCS_OK)) {
        return GIG_NONE;
    }
    for (h = gig_frags_hash(v, n) & (f->nslots - 1); f->slot[h] >= 0;
         h = (h + 1) & (f->nslots - 1)) {
        if (gig_frags_equal(f, f->slot[h], v, n)) {
            return f->slot[h];
        }
    }
    if ((gig_frags_grow((void**)&f->start, &f->start_cap, f->n + 2,
                        sizeof(int), GIG_FRAGS_INIT_SLOTS) != UCS_OK) ||
        (gig_frags_grow((void**)&f->vert, &f->vert_cap, f->nvert + n,
                        sizeof(int), GIG_FRAGS_INIT_VERTS) != UCS_OK)) {
        return GIG_NONE;
    }
    id              = f->n++;
    f->start[id]    = f->nvert;
    if (n > 0) {               /* v may be NULL for an empty sequence */
        memcpy(f->vert + f->nvert, v, n * sizeof(int));
    }
    f->nvert       += n;
    f->start[id + 1] = f->nvert;
    f->slot[h]      = id;
    return id;
}

void gig_frags_cleanup(gig_frags_t *f)
{
    free(f->slot);
    free(f->start);
    free(f->vert);
    memset(f, 0, sizeof(*f));
}
