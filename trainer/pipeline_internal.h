/* The pipeline executor's state, shared by pipeline.c (the program and the step) and
 * pipeline_trace.c (events and the Chrome trace). */
#ifndef TRAINER_PIPELINE_INTERNAL_H
#define TRAINER_PIPELINE_INTERNAL_H

#include "data_parallel.h"
#include "pipeline.h"
#include "pipeline_program.h"
#include "tensor_parallel.h"

#include <stdint.h>

/* At most this many requests in flight on a communicator (include/meshcast/reshard.h). */
#define MAX_INFLIGHT 255

enum { XS_IDLE, XS_RUNNING, XS_DONE };
enum { EV_COMPUTE, EV_WAIT, EV_RESHARD, EV_DP_SUM, EV_OPTIM, EV_STEP, EV_DP_WAIT };
typedef struct {
    double t0, t1;
    int32_t kind, rank, step, index; /* compute: instruction; transfer; bucket (-1: all) */
} event_t;

struct tr_pipe {
    const tr_model *whole; /* the caller's model: read at create and written by gather */
    tr_model *m;           /* this rank's copy: its tensor-parallel share of its layers */
    tr_adamw opt;          /* its optimizer state */
    tr_tp *tpg;            /* its tensor-parallel group (tp > 1) */
    int *owner;            /* per parameter: the pipeline rank that trains it */
    mc_comm_t *comm;
    tr_pipe_config cfg;
    int rank, nranks, nstages, M; /* pipeline rank and count; M: microbatches per replica */
    int wrank, nworld;            /* this rank and all ranks of the communicator */
    int D, dpi, tpi;              /* replicas; this rank's replica and tensor-parallel index */
    int *tp, *base;               /* per pipeline rank: tp degree, first world rank */
    mc_schedule_t *sched;         /* NULL for one pipeline rank: solo is its list */
    mc_sched_action_t *solo;
    const mc_sched_action_t *acts; /* this rank's list */
    size_t nacts;
    stage_t *stages;
    tr_program g;    /* every rank's program */
    const xfer_t *x; /* g's transfers */
    int nx;
    const instr_t *prog; /* this rank's program */
    int nprog;
    int *mine, nmine; /* transfers this rank takes part in */
    mc_topology_t *topo;
    mc_layout_t **layout;   /* per rank: its one-device mesh holding a [B*T, C] f32 */
    mc_plan_t **plan;       /* per ordered rank pair */
    mc_buffer_t *src, *dst; /* per mesh device, for the boundary reshards */
    tr_dp *dp;              /* the gradient reduction over replicas */
    int *bucket_of;         /* per parameter: its bucket of the sum, -1: not this rank's */
    int *layer_of;          /* per parameter: its layer */
    double *dp_start;       /* per bucket: when its sum started */
    float *part;            /* the gradient between two parts of a backward op */
    double reduce_s;
    tr_acts **a;                      /* per microbatch, shared by this rank's stages */
    float **in, **out, **dout, **din; /* per stage and microbatch: boundary tensors */
    unsigned char *owned;             /* per parameter: in one of this rank's stages */
    float *loss;                      /* per microbatch, on the last stage's rank */
    double *losses;                   /* per microbatch of all replicas, and all ranks' */
    mc_request_t **req;               /* per transfer */
    int *state;
    double *t_start, *t_done; /* this rank's start, and when it saw the transfer done */
    double *times;            /* per transfer: sender's start, receiver's done and wait */
    double compute_s;
    double wait_s;
    event_t *ev;
    int nev, cap, step;
};

/* The pipeline rank of a world rank. */
int tr_pipe_rank_of(const tr_pipe *p, int world_rank);
/* A pipeline rank's action list. */
void tr_pipe_actions(const tr_pipe *p, int rank, const mc_sched_action_t **list, size_t *n);

/* Notes one event of this rank when tracing (index: the action or the transfer). */
void tr_pipe_record(tr_pipe *p, int kind, int index, double t0, double t1);

#endif
