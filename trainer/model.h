/* A byte-level language model as a stack of stage layers:
 *   layer 0            embedding (tokens -> x)
 *   layers 1..L        transformer blocks (GPT: plain; U-transformer: down, up with joins)
 *   layer L+1          head: final LayerNorm, LM head, cross-entropy (-> loss)
 * A stage is a contiguous range [first, last) of these layers. It runs forward and backward
 * on its own: activations cross its boundary as one [B,T,C] tensor each way, plus the skip
 * tensors of the U-transformer's skip edges that start or end inside it. This is what a
 * pipeline executor calls per microbatch; the whole model is the stage [0, L+2). */
#ifndef TRAINER_MODEL_H
#define TRAINER_MODEL_H

#include "block.h"
#include "params.h"

typedef enum { TR_ARCH_GPT, TR_ARCH_UTRANSFORMER } tr_arch;

typedef struct {
    tr_arch arch;
    int blocks; /* transformer blocks, L */
    int dmodel; /* C */
    int heads;  /* H; C % H == 0 */
    int seq;    /* T, the context length */
    int vocab;  /* V; 256 for bytes */
} tr_config;

typedef enum { TR_LAYER_EMBED, TR_LAYER_BLOCK, TR_LAYER_HEAD } tr_layer_kind;

typedef struct {
    tr_layer_kind kind;
    tr_param *wte, *wpe;         /* embed */
    tr_block blk;                /* block */
    int skip_out;                /* block: skip edge its output starts, or -1 */
    int skip_in;                 /* block: skip edge joined into its input, or -1 */
    tr_param *joinw, *joinb;     /* block with skip_in: the join projection [C,2C], [C] */
    tr_param *lnfw, *lnfb, *lmw; /* head; the LM head is untied from wte */
} tr_layer;

typedef struct {
    tr_config cfg;
    int nlayers; /* L + 2 */
    tr_layer *layers;
    int nskips; /* skip edges: edge e runs from layer skip_from[e] to layer skip_to[e] */
    int *skip_from, *skip_to;
    int *tp, *tp_rank; /* per layer: the blocks' tensor-parallel share (NULL: whole) */
    tr_params params;
} tr_model;

/* Activations of one microbatch of B sequences, for every layer (a stage uses its own). */
typedef struct {
    int B, T;
    int *tokens, *targets; /* [B,T] copies: the embedding and the head read them again */
    float **x, **dx;       /* x[l]: output of layer l, [B,T,C]; dx[l] its gradient */
    tr_block_acts *blk;    /* per layer (blocks only) */
    float **joined;        /* per layer with a join: the joined block input */
    float **djoin;         /* and its gradient, kept for the join's weight gradient */
    float **skip, **dskip; /* per skip edge: the tensor and its gradient, [B,T,C] */
    float *lnf, *lnf_mean, *lnf_rstd, *logits, *probs, *dlnf, *dlogits; /* head */
    tr_block_scratch scratch;
    float loss;
} tr_acts;

/* NULL when cfg is valid, else what is wrong with it (a static string). */
const char *tr_config_check(const tr_config *cfg);
/* Builds and initialises the model from seed; NULL on bad config or out of memory. */
tr_model *tr_model_create(const tr_config *cfg, uint64_t seed);
/* A tensor-parallel rank's copy of `whole`: block layer l holds share tp_rank[l] of
 * tp[l] (block.h), every other parameter whole; values copied from `whole`. */
tr_model *tr_model_create_part(const tr_model *whole, const int *tp, const int *tp_rank);
/* Parts of parameter i: its tensor-parallel split, or 1. */
int tr_model_param_parts(const tr_model *m, int i);
void tr_model_free(tr_model *m);

tr_acts *tr_acts_create(const tr_model *m, int B);
void tr_acts_free(const tr_model *m, tr_acts *a);

/* Forward of layers [first, last). first == 0 reads tokens, else `in` [B,T,C]; last ==
 * nlayers reads targets and returns the mean loss, else writes `out` [B,T,C] and returns 0.
 * Skip tensors of edges starting in the stage are written to a->skip[e]; edges ending in it
 * read a->skip[e] (the caller moves them when the edge crosses stages). */
float tr_stage_forward(tr_model *m, tr_acts *a, int first, int last, const int *tokens,
                       const int *targets, const float *in, float *out);
/* Backward of layers [first, last) after their forward on the same acts. last == nlayers
 * starts from loss_scale * loss, else from `dout`; first > 0 writes `din`. Parameter
 * gradients accumulate. Edges ending in the stage write a->dskip[e]; edges starting in it
 * add a->dskip[e] into their layer's output gradient. The input part, then the weight part. */
void tr_stage_backward(tr_model *m, tr_acts *a, int first, int last, float loss_scale,
                       const float *dout, float *din);
/* The backward split as the zero-bubble schedules run it. The input part (I) computes din
 * and the skip gradients (and the LayerNorms' gradients, elementwise, from the same pass);
 * the weight part (W), any time after it, the linear layers', joins' and embedding's
 * parameter gradients from what I kept in a. */
void tr_stage_backward_input(tr_model *m, tr_acts *a, int first, int last, float loss_scale,
                             const float *dout, float *din);
void tr_stage_backward_weight(tr_model *m, tr_acts *a, int first, int last);

/* Layer builders the architectures share: fill *ly and register its parameters. */
int tr_model_add_embed(tr_model *m, tr_layer *ly);
int tr_model_add_block(tr_model *m, tr_layer *ly, int index);
int tr_model_add_head(tr_model *m, tr_layer *ly);

/* The whole model: forward returns the mean loss, backward accumulates its gradient
 * times loss_scale (1/microbatches under gradient accumulation). */
float tr_model_forward(tr_model *m, tr_acts *a, const int *tokens, const int *targets);
void tr_model_backward(tr_model *m, tr_acts *a, float loss_scale);

#endif
