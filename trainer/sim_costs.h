/* The step simulator's costs (simulate.h): how long each compute op takes, read from a
 * Chrome trace of a real run (meshcast-train --trace) or from a small costs file.
 *
 * An op's time is fixed + per_gflop x the forward GFLOP of its stage (tr_sim_gflop: the
 * stage's layers at the run's microbatch and tensor parallelism), per op kind. From a
 * trace, per_gflop is each op kind's mean time over the steps after the first, summed over
 * the stages, over their GFLOP (fixed 0): another configuration's costs are this trace's,
 * scaled by FLOPs. The executor's overheads come from the trace too: the gaps between a
 * rank's events per compute op, and what a "step" span holds beyond the rank's ops. Reshards
 * are not here: their times are the planner's estimates (unless `comm` overrides them).
 *
 * Costs file, one entry a line, '#' starts a comment, times in seconds:
 *   F|B|I|W FIXED [PER_GFLOP]   an op kind's fixed time and its time per forward GFLOP
 *   adamw PER_MPARAM            the optimizer step per million parameters of the rank
 *   comm SECONDS                every reshard takes this long (instead of the estimate)
 *   gap SECONDS                 after every compute op (polling, starting reshards)
 *   step SECONDS                once per step (zeroing gradients, the ranks' skew)
 * A missing B is I + W; a missing I or W is half of B. */
#ifndef TRAINER_SIM_COSTS_H
#define TRAINER_SIM_COSTS_H

#include "model.h"

#include <stddef.h>

enum { TR_OP_F, TR_OP_B, TR_OP_I, TR_OP_W, TR_NOPS };

typedef struct {
    double fixed[TR_NOPS], per_gflop[TR_NOPS];
    int have[TR_NOPS];
    double adamw_per_mparam;
    double comm; /* > 0: every reshard's time */
    double gap;  /* after every compute op: the executor's polling and starts */
    double step; /* once per step: what a step holds beyond its ops (zeroing, skew) */
} tr_sim_costs;

/* Forward GFLOP of layers [first, last) for a microbatch of B sequences, the blocks split
 * tp ways (matrix products 2 flops a multiply-add; attention over the whole context). */
double tr_sim_gflop(const tr_config *c, int B, int first, int last, int tp);
/* Parameters (millions) one tensor-parallel rank holds of layers [first, last). */
double tr_sim_mparams(const tr_config *c, int first, int last, int tp);

/* A costs file or (when it starts with '{') a trace. 0, or -1 with a one-line reason. */
int tr_sim_costs_load(const char *path, tr_sim_costs *c, char *err, size_t len);

/* A trace's steps after the first, in seconds: the slowest rank's "step" event (what
 * meshcast-train prints as ms), or in a trace without them the span of the step's events;
 * *steps is malloc'ed. */
int tr_sim_trace_steps(const char *path, double **steps, int *n, char *err, size_t len);

#endif
