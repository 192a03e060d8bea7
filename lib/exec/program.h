/* Programs: a plan compiled for one rank of a communicator. Built from the plan's flows,
 * independent of buffers, so one program serves every execution of the plan. */
#ifndef MC_PROGRAM_H
#define MC_PROGRAM_H

#include <stdint.h>
#include "exec/strided.h"
#include "plan/plan_internal.h"

/* Where an op reads or writes: a device's source tile, its destination tile, or a staging
 * buffer holding a whole flow box (relays that do not need the bytes themselves). */
typedef enum { MC_AT_SRC, MC_AT_DST, MC_AT_STAGING } mc_at_t;

typedef struct {
    mc_at_t at;
    int64_t index;      /* mesh index (SRC, DST) or staging buffer index */
    mc_box_t box;       /* the box moved, in tensor coordinates */
    mc_strided_t shape; /* the box in its tile or buffer, unbound (mc_strided_bind) */
} mc_region_t;

typedef enum {
    MC_OP_LOCAL_COPY, /* both ends on this rank */
    MC_OP_SEND,       /* from this rank (PACK first when the source is strided) */
    MC_OP_RECV,       /* to this rank (UNPACK after when the destination is strided) */
    MC_OP_COMBINE,    /* reduction at a combiner: inputs (the plan's order) combined into dst */
    MC_OP_FILL        /* a Partial destination's tile that is not addend 0: the identity */
} mc_op_kind_t;

typedef struct {
    mc_op_kind_t kind;
    int64_t flow; /* index in plan->flows; -1 for a local copy of a whole piece */
    int peer;     /* the other rank (SEND, RECV); this rank for a local copy */
    int64_t from_dev, to_dev;
    int64_t bytes, chunk_bytes, nchunks;
    int64_t msg0;      /* message id of chunk 0 (ids are unique within a reshard) */
    int from_holder;   /* the source holds every chunk from the start */
    int64_t child0;    /* children: ops of this flow that start where this one ends */
    int64_t nchildren; /* (indices in program->children) */
    int gather;        /* the gather phase (an addend or partial moved, a partial combined):
                        * linked as the flow's combine tree says, not by where it writes */
    int64_t in0, nin;  /* COMBINE: its inputs, program->inputs[in0 .. in0 + nin) */
    int64_t nwait;     /* COMBINE: ops (RECVs, COMBINEs) whose chunks it waits for */
    mc_region_t src, dst;
} mc_op_t;

/* A task of the one-rank worker pool: ops [op_begin, op_end) run in order on one byte
 * range of their boxes (len < 0: each op's whole box). */
typedef struct {
    int64_t op_begin, op_end;
    int64_t off, len;
} mc_task_t;

typedef struct {
    int rank, nranks;
    int64_t ndevices; /* devices of the plan's topology */
    int64_t nops;
    mc_op_t *ops; /* flows in plan order, each flow's ops parent before child */
    int64_t nchildren;
    int64_t *children; /* op indices */
    int64_t nroots;    /* ops whose source is a holder, or whole-piece local copies */
    int64_t *roots;
    int64_t nstaging;
    int64_t *staging_bytes; /* per staging buffer */
    int64_t *staging_off;   /* where each starts in one allocation; [nstaging]: the total */
    int64_t ninputs;
    mc_region_t *inputs;    /* COMBINE inputs */
    mc_dtype_t dtype;       /* of the tensor (combines) */
    mc_reduce_t reduce;     /* the source's pending reduction (MC_REDUCE_NONE: copies) */
    mc_reduce_t dst_reduce; /* the destination's (FILL ops write its identity) */
    int64_t nmessages;      /* message ids in use by the whole reshard (every rank) */
    int64_t units;          /* chunk completions this rank waits for */
    uint64_t fingerprint;   /* hash of the plan and chunking (equal on every rank) */
    int64_t elem_size;
    int ndim;
    int64_t src_mesh_size, dst_mesh_size;
    /* per mesh index: 1 where an op of this rank reads (src) or writes (dst) that tile */
    unsigned char *src_used, *dst_used;
    unsigned char *member; /* per rank: 1 for the reshard's participants */
    int64_t ntasks;        /* one rank: the worker pool's tasks */
    mc_task_t *tasks;
} mc_program_t;

/* Device d belongs to rank d * nranks / ndevices. */
int mc_device_rank(int64_t device, int nranks, int64_t ndevices);

/* member[r] = 1 for every rank r that takes part in a reshard of plan (participants.c). */
void mc_participants(const mc_plan_t *plan, int nranks, unsigned char *member);

/* chunk_bytes > 0 overrides the plan's chunk sizes. */
mc_status_t mc_program_compile(const mc_plan_t *plan, int rank, int nranks, int64_t chunk_bytes,
                               mc_program_t **out);
void mc_program_destroy(mc_program_t *program);

#endif
