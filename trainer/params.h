/* The parameter set: every weight is a named tensor view into one flat value buffer, with
 * its gradient at the same offset in one flat gradient buffer. Registering first and
 * allocating once keeps the pointers layers hold stable, and lets the optimizer and the
 * checkpoint walk a single array. */
#ifndef TRAINER_PARAMS_H
#define TRAINER_PARAMS_H

#include "rng.h"
#include "tensor.h"

/* How a weight splits over tensor-parallel ranks (Megatron): its full elements viewed as
 * [outer, mid, inner], rank k of n holds [outer, mid/n at k*mid/n, inner]. A column-split
 * qkv.w [3C, C] is [3, C, C] (each of q, k, v keeps its share of heads), a row-split
 * proj.w [C, C] is [C, C, 1]. mid 0: the parameter is replicated, never split. */
typedef struct {
    int64_t outer, mid, inner;
    int parts, part; /* this copy: part of parts (1, 0: the whole tensor) */
} tr_split;

typedef struct {
    char name[48];
    tr_tensor value, grad;
    size_t offset; /* into the flat buffers */
    int decay;     /* weight decay applies: matrices yes, biases, norms and position no */
    tr_split split;
} tr_param;

typedef struct {
    tr_param *p;
    int count, capacity;
    size_t total; /* elements in all parameters */
    float *values, *grads;
} tr_params;

int tr_params_init(tr_params *ps, int capacity);
/* Registers one parameter; its data pointers are set by tr_params_alloc. */
tr_param *tr_params_add(tr_params *ps, const char *name, int ndim, const int64_t *shape, int decay);
/* The same for a splittable weight: shape is the full tensor's, split says how it divides
 * and which part this copy holds (dim `sdim` of the shape is the one divided). */
tr_param *tr_params_add_split(tr_params *ps, const char *name, int ndim, const int64_t *shape,
                              int decay, int sdim, tr_split split);
int tr_params_alloc(tr_params *ps);
/* Elements of part `part` of `parts` of the whole parameter `whole`. */
int64_t tr_param_part_size(const tr_param *whole, int parts);
/* Copies part `part` of `parts` between the whole tensor (full: whole's elements) and a
 * dense slice. */
void tr_param_get_part(const tr_param *whole, int parts, int part, const float *full, float *slice);
void tr_param_put_part(const tr_param *whole, int parts, int part, const float *slice, float *full);
void tr_param_fill(tr_param *p, float v);
void tr_param_normal(tr_param *p, double std, tr_rng *rng);
void tr_params_zero_grad(tr_params *ps);
void tr_params_free(tr_params *ps);

#endif
