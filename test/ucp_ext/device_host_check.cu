/**
 * Host run of the device header's arithmetic that is callable on both
 * sides (no GPU needed): mgi_dev_tile_carry, which the one-destination tile
 * send uses for each word's message instead of a division, against the
 * division itself, for every place a thread's words can start and the
 * block widths and message sizes a send meets.
 */
#include <mgi/mgi_device.cuh>

#include <stdio.h>

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
    return 0;
}
