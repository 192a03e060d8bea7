/* The trainer's step simulator: times one training step of a pipeline configuration
 * without running it. It walks the same per-rank programs the executor runs
 * (pipeline_program.h) with costs instead of compute and transfers:
 *   - a compute op takes its sim_costs.h time (divided by `speed`), plus, on a stage with
 *     tensor parallelism, the planner's estimate of each of its tp sums (2 per block in F,
 *     in B and in I); a pipeline rank computes one op at a time;
 *   - a reshard starts when both its sender and its receiver have started it (its first
 *     exchange, the plan fingerprints, needs both), then holds the sender rank's outgoing
 *     and the receiver rank's incoming network side, in the order reshards became ready,
 *     for the part of the planner's estimate of its plan (the boundary layouts, strategy
 *     and topology of the run) that grows with its bytes; the rest (the same plan's
 *     estimate for one element per device: latencies) delays its end without holding them.
 *     A side whose NIC has a burst (.topo 'nic ... burst=', a shaper's token bucket) saves
 *     credit while idle, up to burst / rate seconds, and a reshard crossing hosts passes
 *     that much of its time at once (the smaller credit of its two sides). Compute goes on
 *     meanwhile; a wait blocks;
 *   - the data-parallel gradient sum takes its plan's estimate: one blocking sum, or with
 *     buckets (pipeline_program.h) each bucket's sum from its start, one after another on the
 *     stage mesh, while compute goes on, until the waits before AdamW; a stage's last
 *     backward runs in bucket parts, each its share of the op's FLOPs;
 *   - AdamW takes its per-parameter cost times the rank's parameters.
 * Replicas and tensor-parallel ranks of a pipeline rank do the same work at the same time,
 * so one of each is simulated. Reshard times come from mc_plan_query's estimate_s. */
#ifndef TRAINER_SIMULATE_H
#define TRAINER_SIMULATE_H

#include "model.h"
#include "pipeline_program.h"
#include "sim_costs.h"

#include <stdio.h>

typedef struct {
    tr_config model;
    int micro_batch;  /* sequences per microbatch */
    int ranks;        /* pipeline ranks */
    int microbatches; /* of all replicas */
    int dp;           /* replicas (0 counts as 1) */
    int dp_buckets;   /* buckets of each stage's gradient sum (0: 2, as the executor) */
    const int *tp;    /* per pipeline rank (NULL: 1) */
    mc_sched_kind_t kind;
    mc_strategy_t strategy; /* the boundary reshards' and, by default, the sums' */
    mc_sender_choice_t sender;
    int sums_strategy; /* >= 0: an mc_strategy_t for the tp and dp sums instead */
    mc_sender_choice_t sums_sender;
    const char *topology; /* NULL: cpu-testbed with one host per rank, as the executor; else a
                           * profile or file, one rank per device, hosts filled in order */
    tr_sim_costs costs;   /* costs.comm > 0: every reshard holds its sides that long instead */
    double speed;         /* every cost but the reshards this many times smaller (0 counts as 1) */
} tr_sim_config;

typedef struct {
    double step_s;                         /* the slowest rank's step */
    double tokens_per_s;                   /* batch tokens / step_s */
    double compute_s, reshard_s, hidden_s; /* as tr_pipe_stats: summed over all ranks */
    double wait_s, reduce_s; /* reduce_s: dp and tp sums (these also inside compute_s) */
    double tp_sum_s;         /* the tp sums alone */
} tr_sim_result;

typedef struct tr_sim tr_sim;

/* Plans every reshard and builds the programs. 0, or -1 with a one-line reason. */
int tr_sim_create(const tr_sim_config *cfg, tr_sim **out, char *err, size_t len);
/* Simulates one step. 0, or -1 with err (a deadlock, which the program builder excludes). */
int tr_sim_run(tr_sim *s, tr_sim_result *res, char *err, size_t len);
/* The last simulated step as a Chrome trace with the executor's names (pipeline_trace.c):
 * per world rank of replica 0 and tp rank 0, compute ops and waits, reshards as async
 * slices. 0, or -1 when writing failed. */
int tr_sim_write_trace(const tr_sim *s, FILE *f);
/* The programs, and pipeline rank r's action list (for tests). */
const tr_program *tr_sim_program(const tr_sim *s);
void tr_sim_actions(const tr_sim *s, int r, const mc_sched_action_t **list, size_t *n);
/* World rank of pipeline rank r's replica 0, tp rank 0. */
int tr_sim_world_rank(const tr_sim *s, int r);
void tr_sim_free(tr_sim *s);

#endif
