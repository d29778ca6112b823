/**
 * MGI next-hop choice: the one function the GIG planner's forwarding tables
 * (src/uct/cuda_mgi/gig, paper §4.4) will plug into. Until then every
 * destination is its own next hop: one hop, directly over UCP.
 */
#include "mgi_int.h"

mgi_ep_id_t mgi_route_next_hop(mgi_context_t *ctx, mgi_ep_id_t src,
                               mgi_ep_id_t dst)
{
    (void)ctx;
    (void)src;
    return dst;
}
