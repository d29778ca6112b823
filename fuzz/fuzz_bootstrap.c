/**
 * libFuzzer target: what a stranger or a broken rank can send to the TCP
 * bootstrap before anything is trusted.  The first byte picks the check:
 *   0  a hello as rank 0 reads it
 *   1  rank 0's reply as a rank reads it
 *   2  an MGI_BOOTSTRAP value
 *   3  the worker address lengths of the address exchange
 *   4  a valid hello with the input XORed into it (reaches the checks
 *      behind the token)
 * Every refusal must come with a message; an accepted hello must name a
 * rank in range.
 */
#include "mgi_bootstrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKEN "fuzz-token-0123456789abcdef"

/* the bootstrap's clock, from libmgi's context, which is not linked here */
uint64_t mgi_time_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void fuzz_need_message(ucs_status_t status, const char *err)
{
    if ((status != UCS_OK) && (err[0] == '\0')) {
        fprintf(stderr, "refused without a message\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t token[MGI_BOOT_TOKEN_MAX];
    static int init;
    uint64_t lens[64], max;
    mgi_boot_hello_t h;
    char err[256], host[256], *s;
    ucs_status_t status;
    unsigned answer;
    int rank = -1, port, job, i;
    size_t k;

    if (!init) {
        mgi_bootstrap_token(TOKEN, token);
        init = 1;
    }
    if (size < 2) {
        return 0;
    }
    job    = 1 + data[1] % 64;
    err[0] = '\0';
    switch (data[0] % 5) {
    case 0:
        status = mgi_bootstrap_hello_check(data + 2, size - 2, token, job,
                                           &rank, &answer, err, sizeof(err));
        fuzz_need_message(status, err);
        if ((status == UCS_OK) && ((rank <= 0) || (rank >= job))) {
            abort();
        }
        break;
    case 1:
        status = mgi_bootstrap_reply_check(data + 2, size - 2, token, job,
                                           err, sizeof(err));
        fuzz_need_message(status, err);
        break;
    case 2:
        s = malloc(size - 1);
        memcpy(s, data + 2, size - 2);
        s[size - 2] = '\0';
        status = mgi_bootstrap_parse_addr(s, host, sizeof(host), &port, err,
                                          sizeof(err));
        fuzz_need_message(status, err);
        if ((status == UCS_OK) && ((port < 1) || (port > 65535) ||
                                   (host[0] == '\0'))) {
            abort();
        }
        free(s);
        break;
    case 3:
        k = (size - 2) / sizeof(uint64_t);
        k = (k > 64) ? 64 : k;
        memcpy(lens, data + 2, k * sizeof(uint64_t));
        status = mgi_bootstrap_addr_lens_check(lens, (int)k, &max, err,
                                               sizeof(err));
        fuzz_need_message(status, err);
        if ((status == UCS_OK) && (k > 0) && (max > MGI_WORKER_ADDR_MAX)) {
            abort();
        }
        break;
    default:
        mgi_bootstrap_hello_pack(&h, token, data[1] % 64, job, 0);
        for (i = 0; (i + 2 < (int)size) && (i < (int)sizeof(h)); ++i) {
            ((uint8_t*)&h)[i] ^= data[i + 2];
        }
        status = mgi_bootstrap_hello_check(&h, sizeof(h), token, job, &rank,
                                           &answer, err, sizeof(err));
        fuzz_need_message(status, err);
        if ((status == UCS_OK) && ((rank <= 0) || (rank >= job))) {
            abort();
        }
        break;
    }
    return 0;
}
