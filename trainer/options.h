/* meshcast-train's options (parsed by main.c) and what its two runners share: one process
 * (main.c) and the pipeline over ranks (run_pipeline.c). */
#ifndef TRAINER_OPTIONS_H
#define TRAINER_OPTIONS_H

#include "meshcast/meshcast.h"
#include "model.h"
#include "pipeline.h"

#define TR_MAX_STAGES 64

typedef struct {
    tr_config cfg;
    int batch, micro, steps, eval, json, resume, stages, dp, dp_buckets;
    int tp[TR_MAX_STAGES]; /* per pipeline rank: tensor-parallel ranks */
    float lr;
    uint64_t seed;
    const char *data, *ckdir, *trace, *transport;
    int simulate; /* --simulate: time a step, train nothing */
    const char *sim_costs, *sim_compare, *topology;
    double sim_speed;
    int sim_sums; /* --sim-sums given: sums_strategy, sums_sender */
    mc_strategy_t sums_strategy;
    mc_sender_choice_t sums_sender;
    mc_sched_kind_t kind;
    mc_strategy_t strategy;
    mc_sender_choice_t sender;
} tr_options;

/* The run's first line (text or JSON); params is the model's parameter count. */
void tr_print_header(const tr_options *o, size_t params, size_t data_bytes, int ranks);
/* One progress line; st NULL in one process (no communication to hide). */
void tr_print_step(const tr_options *o, int64_t step, float loss, double seconds,
                   const tr_pipe_stats *st);
void tr_print_val(const tr_options *o, float val, int sequences);

/* Ranks the run takes: replicas x tensor-parallel ranks, summed over the pipeline ranks. */
static inline int tr_options_ranks(const tr_options *o)
{
    int n = 0;
    for (int r = 0; r < o->stages; r++)
        n += o->dp * o->tp[r];
    return n;
}

/* --simulate: the step simulator (simulate.h) for these options; returns the exit status. */
int tr_run_simulation(const tr_options *o);

/* Trains o->stages pipeline ranks (threads of this process, or this process as one UCX
 * rank); returns the exit status. */
int tr_run_pipeline(const tr_options *o);

#endif
