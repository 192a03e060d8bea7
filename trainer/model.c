#include "model.h"

#include "kernels.h"
#include "model_gpt.h"
#include "model_utransformer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes above these are typos here (the trainer runs on one core per rank). */
#define MAX_BLOCKS 256
#define MAX_DMODEL 8192
#define MAX_SEQ 8192

const char *tr_config_check(const tr_config *c)
{
    if (c->blocks < 1 || c->blocks > MAX_BLOCKS)
        return "--layers must be in 1..256";
    if (c->arch == TR_ARCH_UTRANSFORMER && c->blocks < 2)
        return "--layers must be at least 2 for the U-transformer (a down and an up block)";
    if (c->dmodel < 1 || c->dmodel > MAX_DMODEL)
        return "--dmodel must be in 1..8192";
    if (c->heads < 1 || c->dmodel % c->heads != 0)
        return "--heads must be positive and divide --dmodel";
    if (c->seq < 1 || c->seq > MAX_SEQ)
        return "--seq must be in 1..8192";
    if (c->vocab < 2 || c->vocab > 65536)
        return "vocabulary must be in 2..65536";
    return NULL;
}

int tr_model_add_embed(tr_model *m, tr_layer *ly)
{
    const int64_t wte[2] = {m->cfg.vocab, m->cfg.dmodel}, wpe[2] = {m->cfg.seq, m->cfg.dmodel};
    ly->kind = TR_LAYER_EMBED;
    ly->wte = tr_params_add(&m->params, "embed.wte", 2, wte, 1);
    ly->wpe = tr_params_add(&m->params, "embed.wpe", 2, wpe, 0);
    return ly->wte && ly->wpe ? 0 : -1;
}

int tr_model_add_block(tr_model *m, tr_layer *ly, int index)
{
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "block%d", index);
    ly->kind = TR_LAYER_BLOCK;
    ly->skip_in = ly->skip_out = -1;
    const int l = (int)(ly - m->layers);
    return tr_block_register(&ly->blk, &m->params, prefix, m->cfg.dmodel, m->tp ? m->tp[l] : 1,
                             m->tp ? m->tp_rank[l] : 0);
}

int tr_model_add_head(tr_model *m, tr_layer *ly)
{
    const int64_t c[1] = {m->cfg.dmodel}, w[2] = {m->cfg.vocab, m->cfg.dmodel};
    ly->kind = TR_LAYER_HEAD;
    ly->lnfw = tr_params_add(&m->params, "head.ln.w", 1, c, 0);
    ly->lnfb = tr_params_add(&m->params, "head.ln.b", 1, c, 0);
    ly->lmw = tr_params_add(&m->params, "head.w", 2, w, 1);
    return ly->lnfw && ly->lnfb && ly->lmw ? 0 : -1;
}

/* Weights are drawn in layer order from one stream, so a seed fixes the model. */
static void init_weights(tr_model *m, uint64_t seed)
{
    tr_rng rng = tr_rng_seed(seed);
    for (int l = 0; l < m->nlayers; l++) {
        tr_layer *ly = &m->layers[l];
        switch (ly->kind) {
        case TR_LAYER_EMBED:
            tr_param_normal(ly->wte, 0.02, &rng);
            tr_param_normal(ly->wpe, 0.01, &rng);
            break;
        case TR_LAYER_BLOCK:
            tr_block_init(&ly->blk, m->cfg.blocks, &rng);
            if (ly->skip_in >= 0)
                tr_utransformer_init_join(m, ly);
            break;
        case TR_LAYER_HEAD:
            tr_param_fill(ly->lnfw, 1.0f);
            tr_param_normal(ly->lmw, 0.02, &rng);
            break;
        }
    }
}

/* The layers and their parameters, allocated (zero); tp, tp_rank as tr_model_create_part. */
static tr_model *build(const tr_config *cfg, const int *tp, const int *tp_rank)
{
    if (tr_config_check(cfg))
        return NULL;
    tr_model *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->cfg = *cfg;
    m->nlayers = cfg->blocks + 2;
    m->layers = calloc((size_t)m->nlayers, sizeof(*m->layers));
    int capacity = 2 + cfg->blocks * (TR_BLOCK_NPARAMS + 2) + 3;
    int rc = !m->layers || tr_params_init(&m->params, capacity);
    if (!rc && tp) {
        m->tp = malloc((size_t)m->nlayers * sizeof(int));
        m->tp_rank = malloc((size_t)m->nlayers * sizeof(int));
        rc = !m->tp || !m->tp_rank;
        for (int l = 0; !rc && l < m->nlayers; l++) {
            m->tp[l] = tp[l];
            m->tp_rank[l] = tp_rank[l];
        }
    }
    if (!rc)
        rc = cfg->arch == TR_ARCH_GPT ? tr_gpt_build(m) : tr_utransformer_build(m);
    if (!rc)
        rc = tr_params_alloc(&m->params);
    if (rc) {
        tr_model_free(m);
        return NULL;
    }
    return m;
}

tr_model *tr_model_create(const tr_config *cfg, uint64_t seed)
{
    tr_model *m = build(cfg, NULL, NULL);
    if (m)
        init_weights(m, seed);
    return m;
}

int tr_model_param_parts(const tr_model *m, int i)
{
    const tr_split *s = &m->params.p[i].split;
    return s->mid ? s->parts : 1;
}

tr_model *tr_model_create_part(const tr_model *whole, const int *tp, const int *tp_rank)
{
    tr_model *m = build(&whole->cfg, tp, tp_rank);
    for (int i = 0; m && i < m->params.count; i++)
        tr_param_get_part(&whole->params.p[i], tr_model_param_parts(m, i),
                          m->params.p[i].split.part, whole->params.p[i].value.data,
                          m->params.p[i].value.data);
    return m;
}

void tr_model_free(tr_model *m)
{
    if (!m)
        return;
    tr_params_free(&m->params);
    free(m->layers);
    free(m->skip_from);
    free(m->skip_to);
    free(m->tp);
    free(m->tp_rank);
    free(m);
}

static float **alloc_array(int n, size_t each)
{
    float **v = calloc((size_t)n, sizeof(*v));
    for (int i = 0; v && i < n; i++)
        if (each && !(v[i] = tr_alloc(each)))
            return v; /* the caller sees the NULL and frees */
    return v;
}

static void free_array(float **v, int n)
{
    for (int i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void tr_acts_free(const tr_model *m, tr_acts *a)
{
    if (!a)
        return;
    free(a->tokens);
    free(a->targets);
    free_array(a->x, m->nlayers);
    free_array(a->dx, m->nlayers);
    free_array(a->joined, m->nlayers);
    free_array(a->djoin, m->nlayers);
    free_array(a->skip, m->nskips);
    free_array(a->dskip, m->nskips);
    for (int l = 0; a->blk && l < m->nlayers; l++)
        tr_block_acts_free(&a->blk[l]);
    free(a->blk);
    float *head[] = {a->lnf, a->lnf_mean, a->lnf_rstd, a->logits, a->probs, a->dlnf, a->dlogits};
    for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
        free(head[i]);
    tr_block_scratch_free(&a->scratch);
    free(a);
}

tr_acts *tr_acts_create(const tr_model *m, int B)
{
    const int T = m->cfg.seq, C = m->cfg.dmodel, V = m->cfg.vocab, H = m->cfg.heads;
    const size_t N = (size_t)B * T, act = N * C;
    tr_acts *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->B = B;
    a->T = T;
    int ok = (a->tokens = calloc(N, sizeof(int))) && (a->targets = calloc(N, sizeof(int)));
    ok = ok && (a->x = alloc_array(m->nlayers, act)) && (a->dx = alloc_array(m->nlayers, act));
    ok = ok && (a->joined = alloc_array(m->nlayers, 0)) && (a->djoin = alloc_array(m->nlayers, 0));
    ok = ok && (a->skip = alloc_array(m->nskips, act)) && (a->dskip = alloc_array(m->nskips, act));
    ok = ok && (a->blk = calloc((size_t)m->nlayers, sizeof(*a->blk)));
    for (int l = 0; ok && l < m->nlayers; l++) {
        if (m->layers[l].kind != TR_LAYER_BLOCK)
            continue;
        ok = tr_block_acts_alloc(&a->blk[l], B, T, C, H) == 0;
        if (ok && m->layers[l].skip_in >= 0)
            ok = (a->joined[l] = tr_alloc(act)) && (a->djoin[l] = tr_alloc(act));
    }
    for (int i = 0; ok && i < m->nlayers; i++)
        ok = a->x[i] && a->dx[i];
    for (int e = 0; ok && e < m->nskips; e++)
        ok = a->skip[e] && a->dskip[e];
    ok = ok && (a->lnf = tr_alloc(act)) && (a->lnf_mean = tr_alloc(N)) &&
         (a->lnf_rstd = tr_alloc(N)) && (a->logits = tr_alloc(N * V)) &&
         (a->probs = tr_alloc(N * V)) && (a->dlnf = tr_alloc(act)) &&
         (a->dlogits = tr_alloc(N * V));
    ok = ok && tr_block_scratch_alloc(&a->scratch, B, T, C) == 0;
    if (!ok) {
        tr_acts_free(m, a);
        return NULL;
    }
    return a;
}

static void layer_forward(tr_model *m, tr_acts *a, int l)
{
    const tr_layer *ly = &m->layers[l];
    const int B = a->B, T = a->T, C = m->cfg.dmodel, V = m->cfg.vocab, N = B * T;
    switch (ly->kind) {
    case TR_LAYER_EMBED:
        tr_embedding_forward(a->x[l], a->tokens, ly->wte->value.data, ly->wpe->value.data, B, T, C);
        break;
    case TR_LAYER_BLOCK: {
        const float *in = a->x[l - 1];
        if (ly->skip_in >= 0) {
            tr_join_forward(a->joined[l], in, a->skip[ly->skip_in], ly->joinw->value.data,
                            ly->joinb->value.data, N, C);
            in = a->joined[l];
        }
        tr_block_forward(&ly->blk, &a->blk[l], a->x[l], in, B, T, C, m->cfg.heads);
        if (ly->skip_out >= 0)
            memcpy(a->skip[ly->skip_out], a->x[l], (size_t)N * C * sizeof(float));
        break;
    }
    case TR_LAYER_HEAD:
        tr_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, a->x[l - 1], ly->lnfw->value.data,
                             ly->lnfb->value.data, N, C);
        tr_linear_forward(a->logits, a->lnf, ly->lmw->value.data, NULL, N, C, V);
        a->loss = tr_crossentropy_forward(a->probs, a->logits, a->targets, N, V);
        break;
    }
}

/* Adds this layer's input gradient into a->dx[l - 1] (zeroed by the caller); the
 * parameter gradients that need no more than the pass itself (LayerNorms) accumulate. */
static void layer_backward_input(tr_model *m, tr_acts *a, int l, float loss_scale)
{
    const tr_layer *ly = &m->layers[l];
    const int B = a->B, T = a->T, C = m->cfg.dmodel, V = m->cfg.vocab, N = B * T;
    const size_t act = (size_t)N * C * sizeof(float);
    switch (ly->kind) {
    case TR_LAYER_EMBED: /* no input gradient: its backward is all weight gradient */
        break;
    case TR_LAYER_BLOCK:
        if (ly->skip_out >= 0) /* the skip edge's gradient joins the main path's */
            tr_add_into(a->dx[l], a->dskip[ly->skip_out], N * C);
        if (ly->skip_in < 0) {
            tr_block_backward_input(&ly->blk, &a->blk[l], &a->scratch, a->dx[l - 1], a->dx[l],
                                    a->x[l - 1], B, T, C, m->cfg.heads);
            break;
        }
        /* the block's input gradient lands in djoin, then goes through the join */
        memset(a->djoin[l], 0, act);
        tr_block_backward_input(&ly->blk, &a->blk[l], &a->scratch, a->djoin[l], a->dx[l],
                                a->joined[l], B, T, C, m->cfg.heads);
        memset(a->dskip[ly->skip_in], 0, act);
        tr_join_backward_input(a->dx[l - 1], a->dskip[ly->skip_in], a->djoin[l],
                               ly->joinw->value.data, N, C);
        break;
    case TR_LAYER_HEAD:
        memset(a->dlogits, 0, (size_t)N * V * sizeof(float));
        tr_crossentropy_backward(a->dlogits, a->probs, a->targets, N, V, loss_scale);
        memset(a->dlnf, 0, act);
        tr_linear_backward_input(a->dlnf, a->dlogits, ly->lmw->value.data, N, C, V);
        tr_layernorm_backward(a->dx[l - 1], ly->lnfw->grad.data, ly->lnfb->grad.data, a->dlnf,
                              a->x[l - 1], ly->lnfw->value.data, a->lnf_mean, a->lnf_rstd, N, C);
        break;
    }
}

/* The rest of the layer's parameter gradients, from what the input part kept: its output
 * gradient a->dx[l] (untouched since), the kept block and join gradients, dlogits. */
static void layer_backward_weight(tr_model *m, tr_acts *a, int l)
{
    const tr_layer *ly = &m->layers[l];
    const int B = a->B, T = a->T, C = m->cfg.dmodel, V = m->cfg.vocab, N = B * T;
    switch (ly->kind) {
    case TR_LAYER_EMBED:
        tr_embedding_backward(ly->wte->grad.data, ly->wpe->grad.data, a->dx[l], a->tokens, B, T, C);
        break;
    case TR_LAYER_BLOCK:
        tr_block_backward_weight(&ly->blk, &a->blk[l], a->dx[l], B, T, C);
        if (ly->skip_in >= 0)
            tr_join_backward_weight(ly->joinw->grad.data, ly->joinb->grad.data, a->djoin[l],
                                    a->x[l - 1], a->skip[ly->skip_in], N, C);
        break;
    case TR_LAYER_HEAD:
        tr_linear_backward_weight(ly->lmw->grad.data, NULL, a->dlogits, a->lnf, N, C, V);
        break;
    }
}

float tr_stage_forward(tr_model *m, tr_acts *a, int first, int last, const int *tokens,
                       const int *targets, const float *in, float *out)
{
    const size_t N = (size_t)a->B * a->T, act = N * m->cfg.dmodel * sizeof(float);
    if (first == 0)
        memcpy(a->tokens, tokens, N * sizeof(int));
    else
        memcpy(a->x[first - 1], in, act);
    if (last == m->nlayers)
        memcpy(a->targets, targets, N * sizeof(int));
    for (int l = first; l < last; l++)
        layer_forward(m, a, l);
    if (last < m->nlayers) {
        memcpy(out, a->x[last - 1], act);
        return 0.0f;
    }
    return a->loss;
}

void tr_stage_backward_input(tr_model *m, tr_acts *a, int first, int last, float loss_scale,
                             const float *dout, float *din)
{
    const size_t act = (size_t)a->B * a->T * m->cfg.dmodel * sizeof(float);
    if (last < m->nlayers)
        memcpy(a->dx[last - 1], dout, act);
    for (int l = last - 1; l >= first; l--) {
        if (l > 0)
            memset(a->dx[l - 1], 0, act);
        layer_backward_input(m, a, l, loss_scale);
    }
    if (first > 0)
        memcpy(din, a->dx[first - 1], act);
}

void tr_stage_backward_weight(tr_model *m, tr_acts *a, int first, int last)
{
    for (int l = last - 1; l >= first; l--)
        layer_backward_weight(m, a, l);
}

void tr_stage_backward(tr_model *m, tr_acts *a, int first, int last, float loss_scale,
                       const float *dout, float *din)
{
    tr_stage_backward_input(m, a, first, last, loss_scale, dout, din);
    tr_stage_backward_weight(m, a, first, last);
}

float tr_model_forward(tr_model *m, tr_acts *a, const int *tokens, const int *targets)
{
    return tr_stage_forward(m, a, 0, m->nlayers, tokens, targets, NULL, NULL);
}

void tr_model_backward(tr_model *m, tr_acts *a, float loss_scale)
{
    tr_stage_backward(m, a, 0, m->nlayers, loss_scale, NULL, NULL);
}
