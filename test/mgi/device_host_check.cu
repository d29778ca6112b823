/**
 * Host run of the device header's arithmetic that is callable on both
 * sides (no GPU needed): mgi_dev_tile_carry, which the one-destination tile
 * send uses for each word's message instead of a division, against the
 * division itself, for every place a thread's words can start and the
 * block widths and message sizes a send meets; and which channels
 * mgi_dev_tile_of_fits gives the typed tile sends (the host's choice of
 * kernel), with the per-tuple rule of mgi_dev_send_block_tile_map among
 * them; and the rule of mgi_dev_status_t that lets callers test a status
 * as the int it was (0 done, < 0 an end, never a count).
 */
#include <mgi/mgi_device.cuh>
#include <mgi/mgi.h>

#include <stdio.h>
#include <string.h>

/* mgi_dev_tile_of_fits for a channel of ndst destinations, tuples of ts
 * bytes, a key at key_off (part_key < 0: none) */
static int fits(unsigned ndst, unsigned ts, int part_key, unsigned key_off,
                unsigned slots, int dst, unsigned tile_batch = 65528,
                unsigned direct = 0)
{
    static uint16_t ids[80];
    mgi_dev_ch_t h;
    unsigned i;

    for (i = 0; i < 80; ++i) {
        ids[i] = (uint16_t)i;
    }
    memset(&h, 0, sizeof(h));
    h.ndst       = (uint16_t)ndst;
    h.dst        = ids;
    h.tuple_size = ts;
    h.msg_batch  = 4096;
    h.tile_batch = tile_batch;
    h.direct     = direct;
    h.part_key   = part_key;
    h.key_off    = key_off;
    h.key_size   = 8;
    return mgi_dev_tile_of_fits(&h, ts, slots, dst);
}

static int check_fits(void)
{
    static const struct {
        unsigned ndst, ts;
        int      part_key;
        unsigned key_off, slots;
        int      dst, want;
        const char *what;
        unsigned tile_batch, direct;
    } c[] = {
        {2, 16, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 1, "key routes"},
        {2, 16, 0, 0, MGI_DEV_TILE_ONE, MGI_DEV_DST_AUTO, 0,
         "key routes, one-destination kind"},
        {2, 16, 0, 0, MGI_DEV_TILE_ONE, 1, 1, "explicit destination"},
        {2, 16, -1, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 0,
         "no key: a broadcast, one slot"},
        {2, 16, -1, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP, 1,
         "rule per tuple, no key"},
        {2, 16, 0, 4, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 0,
         "key across two words"},
        {2, 16, 0, 4, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP, 1,
         "rule per tuple, key across two words"},
        {1, 16, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP, 0,
         "rule per tuple, one destination"},
        {4, 64, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP, 1,
         "rule per tuple, 64-byte tuples"},
        {4, 24, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP, 0,
         "rule per tuple, 24-byte tuples"},
        {2, 16, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 0,
         "key routes, tiles not batched", 1, 0},
        /* direct rings: no messages, so no batching asked */
        {2, 16, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 1,
         "direct rings, key routes, tiles not batched", 0, 1},
        {2, 16, 0, 0, MGI_DEV_TILE_ONE, 1, 1,
         "direct rings, explicit destination", 0, 1},
        {2, 16, -1, 0, MGI_DEV_TILE_ONE, MGI_DEV_DST_AUTO, 1,
         "direct rings, a broadcast", 0, 1},
        {2, 16, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP, 1,
         "direct rings, rule per tuple", 0, 1},
        {64, 16, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 1,
         "direct rings, 64 destinations", 0, 1},
        {65, 16, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 0,
         "direct rings, 65 destinations", 0, 1},
        {2, 24, 0, 0, MGI_DEV_TILE_MANY, MGI_DEV_DST_AUTO, 0,
         "direct rings, 24-byte tuples by key", 0, 1},
    };
    unsigned i;
    int got;

    for (i = 0; i < sizeof(c) / sizeof(c[0]); ++i) {
        got = fits(c[i].ndst, c[i].ts, c[i].part_key, c[i].key_off,
                   c[i].slots, c[i].dst,
                   (c[i].tile_batch || c[i].direct) ? c[i].tile_batch :
                   65528, c[i].direct);
        if ((got != 0) != (c[i].want != 0)) {
            fprintf(stderr, "FAIL: mgi_dev_tile_of_fits, %s: %d, not %d\n",
                    c[i].what, got, c[i].want);
            return 1;
        }
    }
    printf("PASS: mgi_dev_tile_of_fits chose right for %u channels\n", i);
    return 0;
}

/* The statuses as the device calls' int answers always were: MGI_DEV_OK
 * is 0 (a caller's "== 0" still means done), every other one negative (a
 * count, >= 0, never reads as one; "< 0" still means it ended), and a
 * receive's EOF is the host's. */
static_assert(MGI_DEV_OK == 0, "MGI_DEV_OK must stay 0");
static_assert((MGI_DEV_TIMED_OUT < 0) && (MGI_DEV_FAILED < 0) &&
              (MGI_DEV_EOF < 0), "a status other than MGI_DEV_OK is < 0");
static_assert(MGI_DEV_EOF == MGI_EOF, "a receive's EOF is the host's");
static_assert((MGI_DEV_TIMED_OUT != MGI_DEV_FAILED) &&
              (MGI_DEV_FAILED != MGI_DEV_EOF), "statuses differ");
static_assert((MGI_DEV_THREAD != MGI_DEV_WARP) &&
              (MGI_DEV_WARP != MGI_DEV_BLOCK), "levels differ");

int main(void)
{
    static const uint32_t widths[] = {32, 64, 96, 256, 512, 640, 1024};
    unsigned long long checked = 0;
    uint32_t wpm, nt, tid, q, rm, sq, sr, w, step;
    unsigned i;

    for (wpm = 1; wpm <= 1100; wpm += (wpm < 70) ? 1 : 37) {
        for (i = 0; i < sizeof(widths) / sizeof(widths[0]); ++i) {
            nt = widths[i];
            sq = nt / wpm;
            sr = nt - sq * wpm;
            for (tid = 0; tid < nt; tid += (nt > 64) ? 7 : 1) {
                q  = tid / wpm;
                rm = tid - q * wpm;
                for (step = 0, w = tid; step < 300; ++step, w += nt) {
                    if ((q != w / wpm) || (rm != w % wpm)) {
                        fprintf(stderr, "FAIL: mgi_dev_tile_carry: word %u "
                                "of %u-word messages (thread %u of %u): "
                                "message %u place %u, not %u and %u\n", w,
                                wpm, tid, nt, q, rm, w / wpm, w % wpm);
                        return 1;
                    }
                    mgi_dev_tile_carry(&q, &rm, sq, sr, wpm);
                    ++checked;
                }
            }
        }
    }
    printf("PASS: mgi_dev_tile_carry matched the division at %llu words\n",
           checked);
    return check_fits();
}
