/**
 * A free TCP port of the loopback for a test's bootstrap address (the
 * kernel picks it; it is free again once this returns, so another
 * program may take it first, and the test then fails on its bind). Exits
 * with a message naming `who` when no socket can be had.
 */
#ifndef MGI_TEST_PORT_H
#define MGI_TEST_PORT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static inline int mgi_test_free_port(const char *who)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd, port;

    fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family      = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if ((fd < 0) || (bind(fd, (struct sockaddr*)&sa, sizeof(sa)) != 0) ||
        (getsockname(fd, (struct sockaddr*)&sa, &len) != 0)) {
        fprintf(stderr, "%s: free port: %s\n", who, strerror(errno));
        exit(1);
    }
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

#endif
