/* The pipeline executor: one rank's part of a training step under a pipeline schedule.
 *
 * The schedule (include/meshcast/schedule.h) has p ranks and p*v stages; stage s is the
 * contiguous layer range [s*n/S, (s+1)*n/S) of the model's n layers (S = p*v stages) and
 * runs on the pipeline rank mc_schedule_stage_rank gives. A pipeline rank is a mesh of
 * D replicas x T tensor-parallel ranks (data_parallel.h, tensor_parallel.h), each rank on a
 * host of its own of the cpu-testbed profile (the plans' topology). A rank walks its list
 * with real compute (tr_stage_forward / tr_stage_backward) and moves every tensor that
 * crosses ranks (activations, their gradients, U-transformer skip tensors and their
 * gradients) with a meshcast reshard: the sender starts it at its SEND action, the receiver
 * waits for it at its RECV action. Tensors between two stages on one rank are not moved:
 * the stages share buffers.
 *
 * Every rank builds the whole model (same seed) and trains a copy of its share: its stages'
 * layers, split over tp; the batch is sampled identically on every rank, and each replica
 * runs its own part of the microbatches. */
#ifndef TRAINER_PIPELINE_H
#define TRAINER_PIPELINE_H

#include "meshcast/meshcast.h"
#include "model.h"
#include "optim.h"

#include <stdio.h>

typedef struct {
    mc_sched_kind_t kind;
    int ranks;     /* p: pipeline ranks (1: no schedule, each replica runs F, B per microbatch) */
    int dp;        /* D: data-parallel replicas of every pipeline rank (0 counts as 1) */
    const int *tp; /* per pipeline rank: tensor-parallel ranks, dividing the heads (NULL: 1) */
    int microbatches; /* m: the batch is m microbatches, m / D of them on each replica */
    int micro_batch;  /* B: sequences per microbatch */
    mc_strategy_t strategy;
    mc_sender_choice_t sender;
    int trace;      /* record events for tr_pipe_write_trace */
    int dp_buckets; /* buckets of each stage's gradient sum over replicas (0: 2; 1: one
                     * blocking sum after the backward; pipeline_program.h) */
} tr_pipe_config;

/* One step, over all ranks. */
typedef struct {
    float loss;       /* mean over the microbatches */
    double seconds;   /* wall time of the slowest rank */
    double compute_s; /* compute time, summed over ranks */
    double reshard_s; /* each transfer once, from the sender's start until the receiver saw
                       * it done (after a compute op or in its wait), summed */
    double hidden_s;  /* reshard_s less the time receivers were blocked waiting for them */
    double wait_s;    /* time ranks were blocked waiting for reshards (senders' too), summed */
    double reduce_s;  /* sums over replicas (gradients) and tp ranks (inside compute), over ranks */
} tr_pipe_stats;

typedef struct tr_pipe tr_pipe;

/* Collective over comm's ranks: pipeline rank r has D x tp[r] of them, numbered from the
 * first pipeline rank's, replica-major (replica d, tp rank k: d * tp[r] + k). Builds the
 * schedule, the stage split, this rank's copy of m and o (its tensor-parallel share of its
 * stages' layers), the plans (one per ordered pipeline-rank pair: every crossing tensor is a
 * [D*B*T, C] f32, S on dim 0 over the replicas, replicated over tp) and this rank's program.
 * 0, or -1 with a one-line reason in err. */
int tr_pipe_create(const tr_model *m, const tr_adamw *o, mc_comm_t *comm, const tr_pipe_config *cfg,
                   tr_pipe **out, char *err, size_t errlen);
void tr_pipe_free(tr_pipe *p);

/* One step on this rank: zeroes the gradients, runs the action list over its replica's
 * microbatches of the batch (tokens/targets [m*B, T], the same on every rank), waits for its
 * reshards, sums the gradients over the replicas, updates its parameters with AdamW, and
 * gathers the step's stats (collective). 0, or -1 with err. */
int tr_pipe_step(tr_pipe *p, const int *tokens, const int *targets, tr_pipe_stats *st, char *err,
                 size_t errlen);

/* Collective: afterwards every rank's m and o (the whole model, as passed to create) hold,
 * for every parameter, the values and moments of the ranks that train it (for evaluation and
 * checkpoints). */
int tr_pipe_gather(tr_pipe *p, tr_model *m, tr_adamw *o, char *err, size_t errlen);

/* Collective: gathers every rank's recorded events; rank 0 writes them to f (others pass
 * NULL) as a Chrome trace: per rank, compute ops and waits on one row, each reshard as an
 * async slice from its start to when the rank saw it done. 0, or -1 with err. */
int tr_pipe_write_trace(tr_pipe *p, FILE *f, char *err, size_t errlen);

#endif
