/**
 * cuda_mgi: when copies that wait are posted to the copy engine together
 * (one cuMemcpyBatchAsync call). Pure arithmetic, tested on the CPU.
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_POST_H
#define UCT_CUDA_MGI_POST_H

/* Most copies that wait to be posted together (UCX_CUDA_MGI_BATCH) */
#define UCT_CUDA_MGI_BATCH_MAX   32
/* Copies that wait before a progress call posts them in one
 * cuMemcpyBatchAsync call. Their events are recorded after the call, so
 * its first copies complete with its last: with a caller's window of 32
 * operations (ucx_perftest's), 16 keeps the other half in flight while
 * half waits, where 32 would leave the engine idle until a window drained */
#define UCT_CUDA_MGI_BATCH_PART  16

/* Whether WAITING copies are due to be posted while OUTSTANDING copies
 * (the waiting ones among them) are not done: once enough wait for a
 * batch, or once as many wait as are posted (so whenever fewer than 2 are
 * posted: the engine runs short of work). Otherwise they are held: a
 * caller that progresses after every operation (ucx_perftest, UCP's
 * rendezvous) would post them one by one, and a copy posted alone costs
 * the engine about 2.5 us besides its bytes. Never more copies wait than
 * are posted: a small window (4 operations in flight, an MPI window of 4)
 * would otherwise hold 2 until the 2 posted are done and the engine idle */
static inline int
uct_cuda_mgi_post_is_due(unsigned waiting, unsigned outstanding)
{
    unsigned posted = outstanding - waiting;

    return (waiting >= UCT_CUDA_MGI_BATCH_PART) ||
           ((waiting > 0) && (waiting >= posted));
}

#endif
