/* The pipeline's program: what every pipeline rank does in one step, in order — its
 * schedule's compute ops, the start and the wait of every reshard it takes part in, the
 * waits for its sends still in flight, the data-parallel gradient sum and the optimizer
 * step. Built from the schedule's action lists alone (no model, no communicator), so the
 * executor (pipeline.c) runs it and the step simulator (simulate.c) times it: the simulated
 * step is the step that runs.
 *
 * Reshards between two ranks must start in the same order on both, and a receiver has no
 * action of its own for its start: the builder fixes one order with a dry run of all lists
 * (blocking receives, planning costs F 1, B 2, I 1, W 1) and orders the sends by the time
 * they ran there; a receiver starts its side right after its own last send to that sender
 * that comes earlier in the order (or at the top of the step). */
#ifndef TRAINER_PIPELINE_PROGRAM_H
#define TRAINER_PIPELINE_PROGRAM_H

#include "meshcast/meshcast.h"

#include <stddef.h>
#include <stdio.h>

typedef struct {
    int first, last, rank; /* layers [first, last) */
} stage_t;

/* One tensor crossing ranks for one microbatch: a reshard of its own. */
typedef struct {
    int from, to; /* producing and consuming stage */
    int src, dst; /* their ranks */
    int mb, grad;
    int edge;  /* -1: the chain tensor between neighbour stages; else a skip edge of the model */
    int after; /* receiver: its action after which it starts its side (-1: at the top) */
} xfer_t;

enum {
    IN_COMPUTE,  /* index: the action in the rank's list; first < last: only those layers */
    IN_START,    /* index: the transfer */
    IN_WAIT,     /* index: the transfer */
    IN_DP_SUM,   /* the gradient sum over the replicas, one blocking sum (--dp-buckets 1) */
    IN_DP_START, /* index: a bucket of the rank's layers; starts its sum */
    IN_DP_WAIT,  /* index: that bucket; waits for its sum */
    IN_OPTIM     /* AdamW on the rank's own parameters */
};
typedef struct {
    int kind, index;
    int first, last; /* IN_COMPUTE: a part of the op, layers [first, last) (0, 0: all) */
} instr_t;

/* A bucket of the data-parallel gradient sum: layers [first, last) of one stage. */
typedef struct {
    int stage, first, last;
} tr_bucket;

typedef struct {
    int nranks, nstages, M; /* pipeline ranks, stages, microbatches per replica */
    const stage_t *stages;
    int nskips; /* the model's skip edges, as layer numbers */
    const int *skip_from, *skip_to;
    const mc_sched_action_t *const *acts; /* per rank: its action list */
    const size_t *nacts;
    /* Data parallelism: with replicas > 1 and dp_buckets > 1, each stage's layers form up
     * to dp_buckets buckets (contiguous, about equal in layer_weight, its parameters), and
     * the stage's last backward (B or W) runs bucket by bucket from the top, starting each
     * bucket's sum as soon as its layers' gradients are final; the rank waits for them all
     * before AdamW. Otherwise one blocking sum after the backward. */
    int replicas, dp_buckets;
    const double *layer_weight; /* per layer */
} tr_program_spec;

typedef struct {
    xfer_t *x; /* every transfer of the step, in the order of the dry run's sends */
    int nx;
    int *key_first, *key_n; /* per (stage pair, microbatch, direction): its transfers */
    instr_t **prog;         /* per rank */
    int *nprog;
    tr_bucket **buckets; /* per rank: its buckets, in the order their sums start */
    int *nbuckets;
    int nranks, nstages, M;
} tr_program;

/* The schedule of `kind` over nranks ranks and M microbatches, and its stages: stage s is
 * the layer range [s*n/S, (s+1)*n/S) of the model's n layers, on mc_schedule_stage_rank; the
 * model's skip edges (layer numbers) between stages that are not neighbours are passed to
 * the schedule (one per stage pair). *stages is malloc'ed. 0, or -1 with a reason. */
int tr_program_schedule(mc_sched_kind_t kind, int nranks, int M, int nlayers, int nskips,
                        const int *skip_from, const int *skip_to, mc_schedule_t **sched,
                        stage_t **stages, int *nstages, char *err, size_t len);
/* One pipeline rank has no schedule: F then B per microbatch, one stage of every layer.
 * Both malloc'ed; 0, or -1 when out of memory. */
int tr_program_solo(int M, int nlayers, mc_sched_action_t **list, stage_t **stages);

/* 0, or -1 with a one-line reason (an action the executor does not run, a deadlock). */
int tr_program_build(const tr_program_spec *spec, tr_program *out, char *err, size_t len);
void tr_program_free(tr_program *g);

/* The transfers of a SEND or RECV action (first and count). */
void tr_program_xfers(const tr_program *g, const mc_sched_action_t *a, int *first, int *n);

/* The stage holding a layer. */
int tr_program_stage_of_layer(const stage_t *stages, int nstages, int layer);

/* Trace names both traces use: "1F0" for a compute op ("1B3 layers 4-5" for a part),
 * "act 0->1 mb2", "skip0 grad 2->1 mb0" for a transfer, "dp sum stage 1 layers 4-5" for a
 * bucket's sum. */
void tr_program_compute_name(const mc_sched_action_t *a, const instr_t *in, char *buf, size_t len);
void tr_program_bucket_name(const tr_bucket *b, char *buf, size_t len);
void tr_program_xfer_name(const xfer_t *x, char *buf, size_t len);
/* Writes one Chrome-trace span (after a previous event, so it starts with a comma), as the
 * executor's and the simulator's traces both do: async (a b/e pair with id on tid 1, category
 * reshard) for reshards and bucket sums, otherwise a complete event on tid 0 in category cat,
 * its name after "wait " when wait is set. */
void tr_program_trace_span(FILE *f, const char *name, const char *cat, int wait, int async, int id,
                           int pid, double ts, double dur, int step);

#endif
