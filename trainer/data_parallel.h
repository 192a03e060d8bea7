/* Data parallelism: the D replicas of a pipeline rank each run the schedule over their share
 * of the microbatches, so after the backward each holds one addend of its parameters'
 * gradient. Meshcast reshards sum them: the rank's own parameters' gradients, packed into
 * one flat buffer per bucket, go Partial -> Replicate over the replicas.
 *
 * Buckets (pipeline_program.h): the rank's parameters split by the layers they belong to,
 * so a bucket's sum can start, non-blocking, as soon as the backward has finished its layers
 * and run while the rest of the backward computes; the rank waits for all before AdamW. One
 * bucket is one blocking sum after the backward. Each element is summed over the replicas in
 * the same order whatever the buckets: the sums are the same bits.
 *
 * One packed buffer per bucket rather than a reshard per parameter: a step starts a few
 * requests instead of dozens, each flow carries one large piece (the planner's chunking
 * pipelines it), and the pack is a memcpy per parameter, far cheaper than the reduction.
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
 * me: this rank's index in it). bucket_of[i]: the bucket of parameter i (0 .. nbuckets-1),
 * or -1 when it is not this rank's to reduce. With D == 1 there is nothing to reduce and no
 * plan is made. 0, or -1 with a one-line reason. */
int tr_dp_create(const mc_topology_t *topo, const int64_t *devices, int D, int T, int me,
                 const tr_params *ps, const int *bucket_of, int nbuckets, mc_strategy_t strategy,
                 mc_sender_choice_t sender, tr_dp **out, char *err, size_t len);
/* Packs bucket b's gradients and starts their sum (collective over the stage mesh, in the
 * same order on every rank of it). 0, or -1 with err. */
int tr_dp_start(tr_dp *dp, mc_comm_t *comm, const tr_params *ps, int b, char *err, size_t len);
/* Waits for bucket b's sum and writes it into the gradients; *blocked: the time it waited.
 * 0, or -1 with err. */
int tr_dp_wait(tr_dp *dp, tr_params *ps, int b, double *blocked, char *err, size_t len);
/* Every bucket's sum, started and waited for in turn (blocking); *seconds: the time it took. */
int tr_dp_reduce(tr_dp *dp, mc_comm_t *comm, tr_params *ps, double *seconds, char *err, size_t len);
/* Frees the requests still in flight (after a failure). */
void tr_dp_abort(tr_dp *dp);
void tr_dp_free(tr_dp *dp);

#endif
