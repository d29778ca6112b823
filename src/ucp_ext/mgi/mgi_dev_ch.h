/**
 * MGI device channel handle: what a kernel needs about one channel on one
 * GPU endpoint. Plain C, so the host API (mgi.h) can fill it; the device
 * calls that use it are in mgi_device.cuh.
 */
#ifndef MGI_DEV_CH_H_
#define MGI_DEV_CH_H_

#include "mgi_ring.h"

#define MGI_STAGE_GROUPS_MAX 8  /* stage rings per user block, at most */
#define MGI_DIRECT_MAX_DSTS  64 /* destinations of a channel with direct
                                 * rings, at most (a tile send's counts
                                 * per destination in shared memory) */
#define MGI_DRING_PROD_WORDS 5  /* a producer's record of one of its
                                 * rings (mgi_dev_ch_t.dprod): the tail it
                                 * wrote to, the head it last read, the
                                 * tail it published, 1 once a
                                 * reservation in the destination's
                                 * landing buffer failed, and the lock of
                                 * the block's thread- and warp-level
                                 * sends to the ring */

/* What a device call answers, besides a count. The values keep the int
 * answers these calls always had: 0 when the call did its work, a
 * negative value when it ended otherwise. So a status reads as before
 * where a caller tests it == 0, != 0 or < 0, and a call that counts
 * (bytes or tuples sent, bytes received) answers a count >= 0 or one of
 * the negative values: a count never collides with a status. Plain C, so
 * the host reads the answers a kernel stored. */
typedef enum {
    MGI_DEV_OK        = 0,      /* done (mgi_dev_flush: the block's tuples
                                   were delivered) */
    MGI_DEV_TIMED_OUT = -1,     /* a wait of the call passed its bound (the
                                   host learns why: mgi_dev_report) */
    MGI_DEV_FAILED    = -2,     /* the context delivers nothing any more
                                   (mgi_dev_failed) */
    MGI_DEV_EOF       = -1000   /* a receive: every source flushed and all
                                   was received (== MGI_EOF of mgi.h) */
} mgi_dev_status_t;

/* What a device call reports to the host when it gives up (the first
 * report of the context is kept: mgi_context_device_error). */
#define MGI_DEV_ERR_NONE          0u
#define MGI_DEV_ERR_FLUSH_TIMEOUT 1u  /* a flush waited the context's
                                         timeout for its tuples to be
                                         delivered */
#define MGI_DEV_ERR_SEND_TIMEOUT  2u  /* a thread- or warp-level send to
                                         a direct ring waited the timeout
                                         for the ring's lock */
#define MGI_DEV_ERR_KERNEL_TIMEOUT 3u /* the kernel's own wait gave up
                                         (mgi_dev_report) */
#define MGI_DEV_ERR_LAST          4u
#define MGI_DEV_ERR_WORDS         4   /* the context's failure words: 1
                                         once it delivers nothing more
                                         (mgi_dev_ch_t.failed), then the
                                         first report's code, channel <<
                                         16 | endpoint, and block */

MGI_INLINE const char *mgi_dev_err_string(uint32_t code)
{
    switch (code) {
    case MGI_DEV_ERR_NONE:
        return "no device call gave up";
    case MGI_DEV_ERR_FLUSH_TIMEOUT:
        return "a kernel's flush waited MGI_TIMEOUT_MS for its tuples to be "
               "delivered: every destination must keep receiving until EOF, "
               "and every user block must be resident beside the sorter "
               "(mgi_ep_user_blocks)";
    case MGI_DEV_ERR_SEND_TIMEOUT:
        return "a thread- or warp-level send waited MGI_TIMEOUT_MS for its "
               "direct ring's lock";
    case MGI_DEV_ERR_KERNEL_TIMEOUT:
        return "a kernel's own wait passed its deadline (mgi_dev_deadline) "
               "and reported it: a destination that stopped receiving, a "
               "source that never flushed, or user blocks that are not all "
               "resident";
    default:
        return "unknown device error code";
    }
}

/* A direct ring (mgi_ch_params_t.flags): the tuples of one user block of a
 * source endpoint for one destination endpoint, in the destination GPU's
 * memory. The block stores its tuples there itself (over NVLink or PCIe:
 * peer access, CUDA IPC between processes), then their count at tail; the
 * destination's user blocks read them where they lie and store head,
 * which the source reads back only when the ring looks full. One producer
 * and one consumer, no sorter and no mover on the way. `cap` tuples (a
 * power of two, mgi_dev_ch_t.dcap) follow the header; the counters run
 * free, a tuple's place is its count modulo cap. */
typedef struct mgi_dring {
    uint64_t tail;                      /* tuples written (the producer's,
                                           a release at system scope) */
    uint64_t eof;                       /* 0, or the final tail + 1 (the
                                           producer's flush) */
    uint8_t  pad0[MGI_RING_LINE - 16];
    uint64_t head;                      /* tuples read (the consumer's) */
    uint8_t  pad1[MGI_RING_LINE - 8];
} mgi_dring_t;

/* A destination's landing control (mgi_ch_params_t.land), after its
 * direct rings: sources reserve their runs in its landing buffer by an
 * atomic add on `cur` (tuples), at system scope. A reservation that does
 * not fit takes nothing (its tuples go through the ring) and leaves the
 * complement of its start at `fail` by an atomic max: every later one
 * fails too, so the tuples that landed are the first min(cur, ~fail)
 * (fail 0: none failed) of the buffer once every source flushed. */
typedef struct mgi_dland {
    uint64_t cur;                       /* tuples reserved */
    uint64_t fail;                      /* 0, or ~ the first failed start */
    uint8_t  pad[MGI_RING_LINE - 16];
} mgi_dland_t;

#define MGI_DLAND_ALIGN 16      /* bytes a landing buffer is aligned to
                                 * (tile sends store 16-byte words) */

/* The tuples that landed, from a landing control's two words (host or
 * device). */
MGI_INLINE uint64_t mgi_dland_count(uint64_t cur, uint64_t fail)
{
    return ((fail != 0) && (~fail < cur)) ? ~fail : cur;
}

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
    /* direct rings (MGI_DIRECT_RINGS=1; direct 0: none). At every
     * destination the rings come source by source in the channel's order,
     * each source's user blocks in turn, dstride bytes apart: this
     * endpoint's block b writes ring dfirst + b of every destination. */
    uint32_t         direct;
    uint32_t         dcap;          /* tuples a ring holds, a power of 2 */
    uint64_t         dstride;       /* bytes from a ring to the next */
    uint32_t         dfirst;        /* a source: its first ring */
    uint32_t         nin;           /* a destination: rings into it */
    uint32_t         dpub;          /* tuples a block may have written to
                                       a ring before it publishes the
                                       ring's tail (0: after every send;
                                       MGI_DIRECT_PUBLISH_KB) */
    char *const      *dbase;        /* [ndst] each destination's rings,
                                       mapped into this process */
    uint64_t         *dprod;        /* [ndst * nblocks *
                                       MGI_DRING_PROD_WORDS]: block b's
                                       record of its ring to destination i
                                       at MGI_DRING_PROD_WORDS (i nblocks +
                                       b): the tail it wrote to, the head
                                       it last read there, the tail it
                                       published */
    char             *din;          /* a destination: its rings; user block
                                       c reads rings c, c + nblocks, ... */
    uint32_t         *dcur;         /* [nblocks] the ring (of the block's)
                                       a receive looks at first */
    uint64_t         dland_off;     /* bytes from a destination's rings to
                                       its mgi_dland_t (after the rings) */
    char *const      *dland;        /* a source: [ndst] each destination's
                                       landing buffer mapped here, NULL:
                                       none there; dland NULL: none at
                                       any destination */
    const uint64_t   *dland_cap;    /* [ndst] tuples each one holds */
    const volatile uint32_t *failed; /* nonzero once the context delivers
                                       nothing any more (mapped host
                                       memory; mgi_dev_failed), or NULL */
    volatile uint32_t *dev_err;     /* the words after it: the first
                                       report of a device call that gave
                                       up (MGI_DEV_ERR_WORDS), or NULL */
    uint64_t         timeout_ns;    /* bound of every wait of a device
                                       call (MGI_TIMEOUT_MS), and of
                                       mgi_dev_deadline */
} mgi_dev_ch_t;

#endif
