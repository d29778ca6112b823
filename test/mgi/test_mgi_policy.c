/**
 * make check: the choices libmgi makes by itself (mgi_policy.h), on the
 * CPU. Direct rings are the default for a channel of GPU endpoints of one
 * host; each reason against them is named.
 */
#include "mgi_policy.h"

#include <stdio.h>
#include <string.h>

static int fails;

static void expect(const char *what, const mgi_direct_in_t *in,
                   const char *want)
{
    const char *got = mgi_direct_why_not(in);

    if ((got == NULL) != (want == NULL) ||
        ((got != NULL) && (strstr(got, want) == NULL))) {
        printf("FAIL %s: got \"%s\", want \"%s\"\n", what,
               got ? got : "(direct rings)", want ? want : "(direct rings)");
        ++fails;
    } else {
        printf("ok   %s: %s\n", what, got ? got : "direct rings");
    }
}

int main(void)
{
    const mgi_direct_in_t gpu = {.ctx_direct = 1, .opt_out = 0,
                                 .tuple_size = 16, .ndst = 2,
                                 .one_host = 1, .all_gpu = 1};
    mgi_direct_in_t in;

    expect("GPU endpoints of one host, defaults", &gpu, NULL);
    in = gpu; in.ndst = MGI_DIRECT_MAX_DSTS;
    expect("64 destinations", &in, NULL);
    in = gpu; in.ndst = MGI_DIRECT_MAX_DSTS + 1;
    expect("65 destinations", &in, "MGI_DIRECT_MAX_DSTS");
    in = gpu; in.opt_out = 1;
    expect("the caller opts out", &in, "MGI_CH_FLAG_NO_DIRECT");
    in = gpu; in.ctx_direct = 0;
    expect("MGI_DIRECT_RINGS=0", &in, "MGI_DIRECT_RINGS=0");
    in = gpu; in.tuple_size = 0;
    expect("schemaless", &in, "schemaless");
    in = gpu; in.one_host = 0;
    expect("several hosts", &in, "several hosts");
    in = gpu; in.all_gpu = 0;
    expect("a CPU endpoint", &in, "no GPU endpoint");
    in = gpu; in.relayed = 1;
    expect("a pair through a relay", &in, "relay");
    /* a CPU endpoint is the reason named first, whatever else */
    in = gpu; in.all_gpu = 0; in.ctx_direct = 0; in.tuple_size = 0;
    expect("a CPU endpoint, direct rings off, schemaless", &in,
           "no GPU endpoint");
    printf("%s: %d failed\n", fails ? "FAIL" : "PASS", fails);
    return fails ? 1 : 0;
}
