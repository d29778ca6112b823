/**
 * mgi_launch: run N ranks of a test program with the MGI TCP bootstrap on a
 * free loopback port, under a global timeout.
 *
 *   mgi_launch -n NRANKS -t TIMEOUT_S -- program args...
 *
 * Every rank gets the same new job token (MGI_JOB_TOKEN, 32 hex digits from
 * /dev/urandom) unless MGI_JOB_TOKEN is set already.  When a rank fails
 * (a signal or a non-zero exit), the others get MGI_LAUNCH_GRACE_S to end
 * on their own and are then killed: a rank that died before it connected
 * would otherwise leave them waiting for it until their own timeout.
 *
 * Exit status: 0 when every rank exited 0; 1 when a rank failed; 2 when the
 * timeout fired (every rank is then killed, and the message says so).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mgi_test_port.h"

#define MAX_RANKS 64
/* long enough for the survivors of a rank that ends mid-job to notice and
 * report it (they see its connections end within a second or two) */
#define MGI_LAUNCH_GRACE_S 10

static void job_token(void)
{
    unsigned char raw[16];
    char hex[2 * sizeof(raw) + 1];
    FILE *f;
    size_t i;

    if (getenv("MGI_JOB_TOKEN") != NULL) {
        return;
    }
    f = fopen("/dev/urandom", "r");
    if ((f == NULL) || (fread(raw, 1, sizeof(raw), f) != sizeof(raw))) {
        perror("mgi_launch: /dev/urandom");
        exit(1);
    }
    fclose(f);
    for (i = 0; i < sizeof(raw); ++i) {
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    }
    setenv("MGI_JOB_TOKEN", hex, 1);
}

int main(int argc, char **argv)
{
    pid_t pids[MAX_RANKS];
    int nranks = 2, timeout_s = 60, opt, i, status, failed = 0, left;
    char addr[64], rank_s[16], size_s[16];
    struct timespec start, now, failed_at = {0, 0};
    pid_t pid;

    while ((opt = getopt(argc, argv, "n:t:")) != -1) {
        switch (opt) {
        case 'n': nranks = atoi(optarg); break;
        case 't': timeout_s = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s -n N -t SECONDS -- prog args\n",
                    argv[0]);
            return 1;
        }
    }
    if ((optind >= argc) || (nranks < 1) || (nranks > MAX_RANKS)) {
        fprintf(stderr, "usage: %s -n N -t SECONDS -- prog args\n", argv[0]);
        return 1;
    }

    job_token();
    snprintf(addr, sizeof(addr), "127.0.0.1:%d",
             mgi_test_free_port("mgi_launch"));
    snprintf(size_s, sizeof(size_s), "%d", nranks);
    for (i = 0; i < nranks; ++i) {
        pid = fork();
        if (pid == 0) {
            snprintf(rank_s, sizeof(rank_s), "%d", i);
            setenv("MGI_BOOTSTRAP", addr, 1);
            setenv("MGI_RANK", rank_s, 1);
            setenv("MGI_NRANKS", size_s, 1);
            execvp(argv[optind], &argv[optind]);
            fprintf(stderr, "mgi_launch: exec %s: %s\n", argv[optind],
                    strerror(errno));
            _exit(127);
        }
        pids[i] = pid;
    }

    clock_gettime(CLOCK_MONOTONIC, &start);
    left = nranks;
    while (left > 0) {
        pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            for (i = 0; i < nranks; ++i) {
                if (pids[i] == pid) {
                    pids[i] = 0;
                    --left;
                    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
                        fprintf(stderr, "mgi_launch: rank %d %s %d\n", i,
                                WIFEXITED(status) ? "exited with" :
                                "killed by signal",
                                WIFEXITED(status) ? WEXITSTATUS(status) :
                                WTERMSIG(status));
                        if (!failed) {
                            clock_gettime(CLOCK_MONOTONIC, &failed_at);
                        }
                        failed = 1;
                    }
                }
            }
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (failed && (now.tv_sec - failed_at.tv_sec >= MGI_LAUNCH_GRACE_S)) {
            fprintf(stderr, "mgi_launch: %d of %d ranks still running %d s "
                    "after a rank failed; killing them\n", left, nranks,
                    MGI_LAUNCH_GRACE_S);
            for (i = 0; i < nranks; ++i) {
                if (pids[i] > 0) {
                    kill(pids[i], SIGKILL);
                    waitpid(pids[i], NULL, 0);
                }
            }
            return 1;
        }
        if (now.tv_sec - start.tv_sec >= timeout_s) {
            fprintf(stderr, "mgi_launch: TIMEOUT: %d of %d ranks still "
                    "running after %d s (hung test); killing them\n", left,
                    nranks, timeout_s);
            for (i = 0; i < nranks; ++i) {
                if (pids[i] > 0) {
                    kill(pids[i], SIGKILL);
                    waitpid(pids[i], NULL, 0);
                }
            }
            return 2;
        }
        usleep(20000);
    }
    return failed;
}
