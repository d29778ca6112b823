/**
 * MGI: waits between relays that can close on themselves.
 *
 * A relay that cannot place a message in its next hop's ring holds the
 * lane the message came in on; that lane's sender then waits for room, and
 * so on. Where a walk goes a -> r -> b with r relaying, r's lane that a's
 * rank fills waits on b's lane that r's rank fills (a lane carries all
 * that one rank sends an endpoint: the endpoints of one process share
 * it). A cycle of such waits can fill every ring on it and stop them all
 * (Dally and Seitz's channel dependency graph: routing is free of this
 * deadlock where the graph has no cycle). A CPU endpoint's sorter parks
 * what its next hop cannot take (its lane drains on), a GPU endpoint's
 * sorter kernel does not, so the plan of a channel keeps the waits of its
 * GPU relays free of cycles. The lanes are named by the caller; this file
 * numbers them densely to look.
 *
 * See file LICENSE for terms.
 */
#ifndef MGI_ROUTE_DEPS_H_
#define MGI_ROUTE_DEPS_H_

#include <stdint.h>

/* Lane `from` waits on lane `to` for walks towards destination `dst`
 * (lanes named by the caller) */
typedef struct mgi_route_dep {
    uint64_t from;
    uint64_t to;
    uint32_t dst;
} mgi_route_dep_t;

/* A cycle of the waits deps[n]: the indices of its waits into cycle[]
 * (room for n) and their number returned; 0 where the waits have none,
 * -1 where there is no memory to look. The same answer for the same deps
 * in the same order (every rank plans alike). */
int mgi_route_deps_cycle(const mgi_route_dep_t *deps, unsigned n,
                         unsigned *cycle);

#endif
