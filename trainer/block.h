/* One pre-LayerNorm transformer block (GPT-2/3):
 *   x2 = x + proj(attention(qkv(ln1(x))))
 *   y  = x2 + fcproj(gelu(fc(ln2(x2))))
 * Parameters, the activations one microbatch keeps for the backward, and the pair
 * forward/backward. */
#ifndef TRAINER_BLOCK_H
#define TRAINER_BLOCK_H

#include "params.h"
#include "rng.h"
#include "tensor_parallel.h"

/* With tensor parallelism (Megatron), rank k of tp holds heads [k*H/tp, (k+1)*H/tp) of qkv
 * and the matching columns of proj's input, and a 4C/tp slice of the MLP: fc (and its bias)
 * column-split, fcproj row-split. The row-split products are partial sums, reduced over the
 * tp ranks (group); so are the input gradients of the column-split ones in the backward.
 * LayerNorms and the row-split layers' biases are replicated: their inputs and output
 * gradients are complete on every tp rank, so their gradients are complete there too and
 * need no reduction over tp. A row-split bias is added by tp rank 0 only, before the sum. */
typedef struct {
    tr_param *ln1w, *ln1b, *qkvw, *qkvb, *projw, *projb;
    tr_param *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
    int tp, tp_rank; /* 1, 0: the whole block */
    tr_tp *group;    /* sums the partial products over the tp ranks (tp > 1) */
} tr_block;

/* What the forward keeps for the backward, for B sequences of T tokens; and what the
 * input-gradient backward keeps for the weight-gradient one: the output gradients of the
 * attention projection (dx2), of qkv (dqkv) and of fc (dfch). */
typedef struct {
    float *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *x2;
    float *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu;
    float *dx2, *dqkv, *dfch;
} tr_block_acts;

/* Gradient scratch shared by all blocks (their backwards run one at a time). */
typedef struct {
    float *dln, *datty, *dfch_gelu, *datt;
} tr_block_scratch;

#define TR_BLOCK_NPARAMS 12

/* Registers the block's parameters under "<prefix>.*", tp rank tp_rank's share of them
 * (tp 1: all); nblocks scales the residual projections' init (GPT-2: 1/sqrt(2 * nblocks)). */
int tr_block_register(tr_block *blk, tr_params *ps, const char *prefix, int C, int tp, int tp_rank);
void tr_block_init(tr_block *blk, int nblocks, tr_rng *rng);

int tr_block_acts_alloc(tr_block_acts *a, int B, int T, int C, int H);
void tr_block_acts_free(tr_block_acts *a);
int tr_block_scratch_alloc(tr_block_scratch *s, int B, int T, int C);
void tr_block_scratch_free(tr_block_scratch *s);

void tr_block_forward(const tr_block *blk, tr_block_acts *a, float *y, const float *x, int B, int T,
                      int C, int H);
/* dx += d(loss)/dx given dy; parameter gradients accumulate. The input-gradient part then
 * the weight-gradient part. */
void tr_block_backward(const tr_block *blk, tr_block_acts *a, tr_block_scratch *s, float *dx,
                       const float *dy, const float *x, int B, int T, int C, int H);
/* The input-gradient part (I of a zero-bubble schedule): dx, and the LayerNorms' gradients
 * (elementwise, from the same pass); keeps in a what the weight part needs. */
void tr_block_backward_input(const tr_block *blk, tr_block_acts *a, tr_block_scratch *s, float *dx,
                             const float *dy, const float *x, int B, int T, int C, int H);
/* The weight-gradient part (W): the four linear layers' weight and bias gradients, from the
 * kept gradients, the forward's activations and dy (still the same values). */
void tr_block_backward_weight(const tr_block *blk, const tr_block_acts *a, const float *dy, int B,
                              int T, int C);

#endif
