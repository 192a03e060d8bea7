/* Data parallelism: the D replicas of a pipeline rank each run the schedule over their share
 * of the microbatches, so after the backward each holds one addend of its parameters'
 * gradient. One meshcast reshard per pipeline rank sums them: the rank's own parameters'
 * gradients, packed into one flat buffer, go Partial -> Replicate over the replicas.
 *
 * One packed buffer rather than a reshard per parameter: a step then starts one request
 * instead of dozens, each flow carries one large piece (the planner's chunking pipelines
 * it), and the pack is a memcpy per parameter, far cheaper than the reduction itself.
 *
 * The stage mesh is D x T (replica, tensor-parallel rank). Tensor-parallel ranks hold
 * different slices of the split weights but packed buffers of the same length, so the
 * packed gradients form a [T, L] tensor sharded over the tp axis, and one reshard reduces
 * all T groups at once: S1RP0 -> S1R in the Alpa notation (mesh axis 0 = replicas). */
#ifndef TRAINER_DATA_PARALLEL_H
#define TRAINER_DATA_PARALLEL_H

#include "meshcast/meshcast.h"
#include "params.h"

#include <stddef.h>

typedef struct tr_dp tr_dp;

/* Collective over the D*T ranks of one stage mesh (devices: its row-major device ids;
 * me: this rank's index in it). owned[i]: parameter i is this rank's to reduce. With D == 1
 * there is nothing to reduce and no plan is made. 0, or -1 with a one-line reason. */
int tr_dp_create(const mc_topology_t *topo, const int64_t *devices, int D, int T, int me,
                 const tr_params *ps, const unsigned char *owned, mc_strategy_t strategy,
                 mc_sender_choice_t sender, tr_dp **out, char *err, size_t len);
/* Sums the owned parameters' gradients over the replicas (collective over the stage mesh);
 * *seconds: the time it took. 0, or -1 with err. */
int tr_dp_reduce(tr_dp *dp, mc_comm_t *comm, tr_params *ps, double *seconds, char *err, size_t len);
void tr_dp_free(tr_dp *dp);

#endif
