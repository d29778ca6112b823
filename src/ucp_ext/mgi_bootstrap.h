/**
 * The TCP bootstrap's wire format, kept apart from the sockets so that the
 * checks of what a peer sends are tested and fuzzed on their own.
 *
 * A rank that connects to rank 0 sends a hello; rank 0 answers with a
 * reply of the same layout.  Every allgather contribution then travels
 * behind an 8-byte length that the receiver compares with its own.
 */
#ifndef MGI_BOOTSTRAP_H_
#define MGI_BOOTSTRAP_H_

#include <ucs/sys/math.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>

#define MGI_BOOT_MAGIC       0x4d474942u  /* "MGIB" */
#define MGI_BOOT_VERSION     1
#define MGI_BOOT_TOKEN_MIN   16           /* characters of MGI_JOB_TOKEN */
#define MGI_BOOT_TOKEN_MAX   128

/* what rank 0 says to a hello */
enum {
    MGI_BOOT_OK          = 0,
    MGI_BOOT_BAD_TOKEN   = 1,   /* not this job: nothing else is told */
    MGI_BOOT_BAD_SIZE    = 2,   /* MGI_NRANKS differs from rank 0's */
    MGI_BOOT_BAD_RANK    = 3,   /* out of range or taken */
};

/* All fields little-endian on the wire; token zero-padded */
typedef struct mgi_boot_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t answer;            /* reply: MGI_BOOT_OK or why not */
    int32_t  rank;
    int32_t  size;
    uint8_t  token[MGI_BOOT_TOKEN_MAX];
} __attribute__((packed)) mgi_boot_hello_t;

/* The job token from MGI_JOB_TOKEN (token, at most MGI_BOOT_TOKEN_MAX
 * bytes, zero-padded); an error that says what to set when it is missing
 * or malformed. */
ucs_status_t mgi_bootstrap_token(const char *value,
                                 uint8_t token[MGI_BOOT_TOKEN_MAX]);

/* Fills a hello (answer 0) or a reply. */
void mgi_bootstrap_hello_pack(mgi_boot_hello_t *h, const uint8_t *token,
                              int rank, int size, unsigned answer);

/* Checks a hello of len bytes received by rank 0 of a job of `size`
 * ranks: UCS_OK with the sender's rank in *rank_p, else why it is refused
 * in *answer_p (MGI_BOOT_BAD_*) and a message in errbuf.  Whether the rank
 * is already taken is the caller's to check. */
ucs_status_t mgi_bootstrap_hello_check(const void *buf, size_t len,
                                       const uint8_t *token, int size,
                                       int *rank_p, unsigned *answer_p,
                                       char *errbuf, size_t errlen);

/* Checks rank 0's reply to this rank's hello, as above */
ucs_status_t mgi_bootstrap_reply_check(const void *buf, size_t len,
                                       const uint8_t *token, int size,
                                       char *errbuf, size_t errlen);

/* Validates "host:port": a host of 1..255 characters and a port of
 * 1..65535 in decimal; the port in *port_p, the host in host. */
ucs_status_t mgi_bootstrap_parse_addr(const char *addr, char *host,
                                      size_t host_len, int *port_p,
                                      char *errbuf, size_t errlen);

/* The most bytes a rank's UCP worker address may have: a few kilobytes in
 * practice */
#define MGI_WORKER_ADDR_MAX  (1 << 20)

/* Checks the worker address lengths of `size` ranks, as allgathered before
 * the addresses: each 1 to MGI_WORKER_ADDR_MAX bytes, so that the longest,
 * returned in *max_p, may size an allocation of (size + 1) times it. */
ucs_status_t mgi_bootstrap_addr_lens_check(const uint64_t *lens, int size,
                                           uint64_t *max_p, char *errbuf,
                                           size_t errlen);

#endif
