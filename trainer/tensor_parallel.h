/* Tensor parallelism: the sums inside a Megatron-split block. A row-split layer's output
 * (and a column-split layer's input gradient) is a partial sum on each of the T ranks of a
 * tensor-parallel group; one meshcast reshard, Partial -> Replicate over the group's
 * one-axis mesh, sums it on every rank. The tensor is always one microbatch's [B*T, C]
 * activation, so one plan serves every sum of a step. */
#ifndef TRAINER_TENSOR_PARALLEL_H
#define TRAINER_TENSOR_PARALLEL_H

#include "meshcast/meshcast.h"

#include <stddef.h>

typedef struct tr_tp tr_tp;

/* The group of T ranks (devices: its device ids in tp order; me: this rank's index) summing
 * [rows, cols] f32 tensors on comm. 0, or -1 with a one-line reason in err. */
int tr_tp_create(mc_comm_t *comm, const mc_topology_t *topo, const int64_t *devices, int T, int me,
                 int64_t rows, int64_t cols, mc_strategy_t strategy, mc_sender_choice_t sender,
                 tr_tp **out, char *err, size_t len);
/* buf (this rank's addend) becomes the sum over the group (collective over the group). A
 * failure is kept (buf is then undefined) and reported by tr_tp_check; later sums are
 * skipped. */
void tr_tp_allreduce(tr_tp *tp, float *buf);
/* 0, or -1 with the first failure's reason. */
int tr_tp_check(const tr_tp *tp, char *err, size_t len);
/* Seconds spent in sums since the last call (then reset). */
double tr_tp_take_seconds(tr_tp *tp);
void tr_tp_free(tr_tp *tp);

#endif
