/**
 * MGI sorter of a GPU endpoint: the device side (structures the kernel
 * reads, the pass over a segment, EOF and flush handling, one round of the
 * loop), private to libmgi. Written for a CUDA block; compiled for the
 * host too, a block being a few host threads meeting at a barrier, so that
 * test_mgi_sorter runs this very code on the CPU (emulation macros:
 * mgi_sorter_dev_port.h).
 */
#ifndef MGI_SORTER_DEV_H_
#define MGI_SORTER_DEV_H_

#include "mgi_int.h"

#include <string.h>

/* The parts, in this order: each uses those before it. */
#include "mgi_sorter_dev_port.h"  /* limits, a block on CUDA or host */
#include "mgi_sorter_dev_types.h" /* structures the kernel reads */
#include "mgi_sorter_dev_pass.h"  /* a pass's state, copies, rings */
#include "mgi_sorter_dev_walk.h"  /* the pass: walk and place */
#include "mgi_sorter_dev_eof.h"   /* EOF records */
#include "mgi_sorter_dev_lane.h"  /* lanes: whole moves, releases */
#include "mgi_sorter_dev_stage.h" /* whole stage segments */
#include "mgi_sorter_dev_round.h" /* a ring's pass, the round */

#endif
