/**
 * MGI device channel handle: what a kernel needs about one channel on one
 * GPU endpoint. Plain C, so the host API (mgi.h) can fill it; the device
 * calls that use it are in mgi_device.cuh.
 */
#ifndef MGI_DEV_CH_H_
#define MGI_DEV_CH_H_

#include "mgi_ring.h"

#define MGI_STAGE_GROUPS_MAX 8  /* stage rings per user block, at most */

/* What a kernel needs about one channel on one endpoint; in device memory
 * or passed by value as a kernel argument. */
typedef struct mgi_dev_ch {
    uint16_t         ch;            /* channel id */
    uint16_t         self;          /* this endpoint's id */
    uint16_t         ndst;
    uint16_t         nsrc;
    const uint16_t   *dst;          /* [ndst] destination endpoint ids */
    uint32_t         tuple_size;    /* 0: schemaless */
    uint32_t         msg_batch;     /* block sends batch up to this many
                                       payload bytes of one destination
                                       into a message; 0: a message per
                                       tuple (dev_msg_batch of
                                       mgi_context_params_t) */
    uint32_t         tile_batch;    /* the same for tile sends
                                       (dev_tile_batch, else
                                       dev_msg_batch) */
    int32_t          part_key;      /* -1: none */
    uint32_t         key_off;
    uint32_t         key_size;
    uint32_t         nblocks;       /* user blocks = final rings */
    uint32_t         ngroups;       /* stage rings per user block
                                       (MGI_STAGE_GROUPS): destination
                                       index i of the channel goes to
                                       group i % ngroups */
    mgi_ring_t       **stage;       /* [ngroups * nblocks]: block b's
                                       ring of group g at g * nblocks + b */
    mgi_ring_t       **final;       /* [nblocks] */
    uint32_t         *final_lock;   /* [nblocks] consumer locks */
    const uint32_t   *eof_sources;  /* [nblocks] sources at EOF */
} mgi_dev_ch_t;

#endif
