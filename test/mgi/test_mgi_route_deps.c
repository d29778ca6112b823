/**
 * make check: the cycles among relays' waits (mgi_route_deps.h), on the
 * CPU. Waits along a line or a tree have none; a ring's walks both ways
 * round have them, and making destinations direct one at a time (as a
 * channel's plan does for its GPU relays) ends with none.
 */
#include "mgi_route_deps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
static unsigned cyc[4096];

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    fails += !ok;
}

#define MAXW 4096
static mgi_route_dep_t w[MAXW];
static unsigned nw;

static void add(uint32_t from, uint32_t to, uint32_t dst)
{
    w[nw].from  = from;
    w[nw].to    = to;
    w[nw++].dst = dst;
}

/* Is lane v on a cycle of w (reachable from itself)? */
static int on_cycle(uint64_t v)
{
    char seen[1024] = {0};
    uint64_t stack[1024], x;
    unsigned top = 0;
    unsigned i;

    stack[top++] = v;
    while (top > 0) {
        x = stack[--top];
        for (i = 0; i < nw; ++i) {
            if (w[i].from != x) {
                continue;
            }
            if (w[i].to == v) {
                return 1;
            }
            if (!seen[w[i].to]) {
                seen[w[i].to] = 1;
                stack[top++]  = w[i].to;
            }
        }
    }
    return 0;
}

/* The cycle's waits follow each other round: each waits on the next */
static int closed(int len)
{
    int k;

    for (k = 0; k < len; ++k) {
        if (w[cyc[k]].to != w[cyc[(k + 1) % len]].from) {
            return 0;
        }
    }
    return len > 0;
}

static int cycle_of(void)
{
    return mgi_route_deps_cycle(w, nw, cyc);
}

/* n endpoints on a ring; a walk from s to d goes the shorter way round
 * (both ways where they tie, as a plan's shares would), each endpoint on
 * the way a relay: lane a -> b is a * n + b */
static void ring_walks(unsigned n, const int *direct)
{
    unsigned s, d, k, way, len;
    int step, a, r, b;

    nw = 0;
    for (d = 0; d < n; ++d) {
        if (direct[d]) {
            continue;
        }
        for (s = 0; s < n; ++s) {
            len = (d + n - s) % n;
            for (way = 0; way < 2; ++way) {
                step = way ? -1 : 1;
                if ((way == 0) && (len > n / 2)) {
                    continue;
                }
                if ((way == 1) && (n - len > n / 2)) {
                    continue;
                }
                a = (int)s;
                r = (a + step + (int)n) % (int)n;
                for (k = 0; r != (int)d; ++k) {
                    b = (r + step + (int)n) % (int)n;
                    add((uint32_t)(a * n + r), (uint32_t)(r * n + b), d);
                    a = r;
                    r = b;
                }
            }
        }
    }
}

int main(void)
{
    int direct[8] = {0}, c, rounds, ndirect, k;
    unsigned i;
    char what[128];

    check(cycle_of() == 0, "no waits, no cycle");

    /* a line 0 - 1 - 2 - 3, walks both ways: 0->1 waits on 1->2 ... */
    nw = 0;
    add(0 * 4 + 1, 1 * 4 + 2, 3);
    add(1 * 4 + 2, 2 * 4 + 3, 3);
    add(3 * 4 + 2, 2 * 4 + 1, 0);
    add(2 * 4 + 1, 1 * 4 + 0, 0);
    check(cycle_of() == 0, "a line: no cycle");

    /* a fan of waits into one link and out (a tree), repeated waits */
    nw = 0;
    for (i = 0; i < 8; ++i) {
        add(i, 8, 0);
        add(i, 8, 1);
        add(8, 9 + i, 0);
    }
    check(cycle_of() == 0, "a tree: no cycle");

    /* three links waiting round: the answer is a wait on the cycle */
    nw = 0;
    add(5, 6, 0);                    /* a tail into the cycle */
    add(0, 1, 1);
    add(1, 2, 2);
    add(2, 0, 3);
    c = cycle_of();
    check((c == 3) && closed(c) && on_cycle(w[cyc[0]].from),
          "three links round: its three waits, the tail left out");
    k = (int)cyc[0];
    check((cycle_of() == c) && ((int)cyc[0] == k), "the same answer again");

    /* a long chain of 1000 waits, then one back to its start */
    nw = 0;
    for (i = 0; i + 1 < 1000; ++i) {
        add(i, i + 1, 0);
    }
    check(cycle_of() == 0, "1000 links in a row");
    add(999, 0, 7);
    c = cycle_of();
    check((c == 1000) && closed(c), "1000 links and one back: all 1000");

    /* rings of 4, 5 and 6 endpoints: walks both ways round wait in
     * cycles; destinations made direct one at a time until none is left,
     * not every one */
    for (k = 4; k <= 6; ++k) {
        memset(direct, 0, sizeof(direct));
        ring_walks((unsigned)k, direct);
        c = cycle_of();
        snprintf(what, sizeof(what), "a ring of %d: a cycle of %d waits", k,
                 c);
        check(closed(c), what);
        for (rounds = 0, ndirect = 0; (c > 0) && (rounds < k); ++rounds) {
            direct[w[cyc[0]].dst] = 1;
            ++ndirect;
            ring_walks((unsigned)k, direct);
            c = cycle_of();
        }
        snprintf(what, sizeof(what), "a ring of %d: no cycle after %d "
                 "destination(s) made direct, %u waits left", k, ndirect,
                 nw);
        check((c == 0) && (ndirect < k) && (nw > 0), what);
    }

    printf("%s\n", fails ? "FAILED" : "PASSED");
    return fails ? 1 : 0;
}
