#include "block.h"

#include "kernels.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_block_register(tr_block *blk, tr_params *ps, const char *prefix, int C, int tp, int tp_rank)
{
    enum { NONE, COLUMN, ROW }; /* column: output rows split; row: input columns split */
    struct {
        tr_param **slot;
        const char *name;
        int64_t rows, cols;       /* cols 0: a vector */
        int decay, split, groups; /* groups: q, k, v each split on their own */
    } table[TR_BLOCK_NPARAMS] = {
        {&blk->ln1w, "ln1.w", C, 0, 0, NONE, 1},
        {&blk->ln1b, "ln1.b", C, 0, 0, NONE, 1},
        {&blk->qkvw, "qkv.w", 3 * C, C, 1, COLUMN, 3},
        {&blk->qkvb, "qkv.b", 3 * C, 0, 0, COLUMN, 3},
        {&blk->projw, "proj.w", C, C, 1, ROW, 1},
        {&blk->projb, "proj.b", C, 0, 0, NONE, 1},
        {&blk->ln2w, "ln2.w", C, 0, 0, NONE, 1},
        {&blk->ln2b, "ln2.b", C, 0, 0, NONE, 1},
        {&blk->fcw, "fc.w", 4 * C, C, 1, COLUMN, 1},
        {&blk->fcb, "fc.b", 4 * C, 0, 0, COLUMN, 1},
        {&blk->fcprojw, "fcproj.w", C, 4 * C, 1, ROW, 1},
        {&blk->fcprojb, "fcproj.b", C, 0, 0, NONE, 1},
    };
    blk->tp = tp;
    blk->tp_rank = tp_rank;
    blk->group = NULL;
    for (int i = 0; i < TR_BLOCK_NPARAMS; i++) {
        char name[48];
        const int64_t rows = table[i].rows, cols = table[i].cols, shape[2] = {rows, cols};
        const int ndim = cols ? 2 : 1;
        snprintf(name, sizeof(name), "%s.%s", prefix, table[i].name);
        if (table[i].split == NONE) {
            *table[i].slot = tr_params_add(ps, name, ndim, shape, table[i].decay);
        } else {
            const int g = table[i].groups, col = table[i].split == COLUMN;
            tr_split sp = {.outer = col ? g : rows,
                           .mid = col ? rows / g : cols,
                           .inner = col && cols ? cols : 1,
                           .parts = tp,
                           .part = tp_rank};
            *table[i].slot =
                tr_params_add_split(ps, name, ndim, shape, table[i].decay, col ? 0 : 1, sp);
        }
        if (!*table[i].slot)
            return -1;
    }
    return 0;
}

void tr_block_init(tr_block *blk, int nblocks, tr_rng *rng)
{
    const double std = 0.02, residual_std = 0.02 / sqrt(2.0 * nblocks);
    tr_param_fill(blk->ln1w, 1.0f);
    tr_param_fill(blk->ln2w, 1.0f);
    tr_param_normal(blk->qkvw, std, rng);
    tr_param_normal(blk->projw, residual_std, rng);
    tr_param_normal(blk->fcw, std, rng);
    tr_param_normal(blk->fcprojw, residual_std, rng);
    /* biases and LayerNorm shifts stay 0 (the buffers are zeroed) */
}

int tr_block_acts_alloc(tr_block_acts *a, int B, int T, int C, int H)
{
    const size_t N = (size_t)B * T;
    float **bufs[] = {&a->ln1,  &a->ln1_mean, &a->ln1_rstd, &a->qkv,      &a->att,
                      &a->atty, &a->x2,       &a->ln2,      &a->ln2_mean, &a->ln2_rstd,
                      &a->fch,  &a->fch_gelu, &a->dx2,      &a->dqkv,     &a->dfch};
    const size_t sizes[] = {N * C,     N,         N,     3 * N * C, (size_t)B * H * T * T,
                            N * C,     N * C,     N * C, N,         N,
                            4 * N * C, 4 * N * C, N * C, 3 * N * C, 4 * N * C};
    int ok = 1;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        ok &= (*bufs[i] = tr_alloc(sizes[i])) != NULL;
    return ok ? 0 : -1;
}

void tr_block_acts_free(tr_block_acts *a)
{
    float *bufs[] = {a->ln1,  a->ln1_mean, a->ln1_rstd, a->qkv,      a->att,
                     a->atty, a->x2,       a->ln2,      a->ln2_mean, a->ln2_rstd,
                     a->fch,  a->fch_gelu, a->dx2,      a->dqkv,     a->dfch};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        free(bufs[i]);
    memset(a, 0, sizeof(*a));
}

int tr_block_scratch_alloc(tr_block_scratch *s, int B, int T, int C)
{
    const size_t N = (size_t)B * T;
    s->dln = tr_alloc(N * C);
    s->datty = tr_alloc(N * C);
    s->dfch_gelu = tr_alloc(4 * N * C);
    s->datt = tr_alloc(2 * (size_t)T * T);
    return s->dln && s->datty && s->dfch_gelu && s->datt ? 0 : -1;
}

void tr_block_scratch_free(tr_block_scratch *s)
{
    free(s->dln);
    free(s->datty);
    free(s->dfch_gelu);
    free(s->datt);
    memset(s, 0, sizeof(*s));
}

/* The partial products of a row split, summed over the tp ranks. */
static void tp_sum(const tr_block *blk, float *buf)
{
    if (blk->tp > 1)
        tr_tp_allreduce(blk->group, buf);
}

void tr_block_forward(const tr_block *blk, tr_block_acts *a, float *y, const float *x, int B, int T,
                      int C, int H)
{
    /* this tp rank's share: Cl of the attention width (H/tp heads), Fl of the MLP's */
    const int N = B * T, Cl = C / blk->tp, Hl = H / blk->tp, Fl = 4 * C / blk->tp;
    const int first = blk->tp_rank == 0; /* adds the row-split layers' biases */
    tr_layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, x, blk->ln1w->value.data,
                         blk->ln1b->value.data, N, C);
    tr_linear_forward(a->qkv, a->ln1, blk->qkvw->value.data, blk->qkvb->value.data, N, C, 3 * Cl);
    tr_attention_forward(a->atty, a->att, a->qkv, B, T, Cl, Hl);
    /* y holds the attention projection for a moment before the residual add */
    tr_linear_forward(y, a->atty, blk->projw->value.data, first ? blk->projb->value.data : NULL, N,
                      Cl, C);
    tp_sum(blk, y);
    tr_add(a->x2, x, y, N * C);
    tr_layernorm_forward(a->ln2, a->ln2_mean, a->ln2_rstd, a->x2, blk->ln2w->value.data,
                         blk->ln2b->value.data, N, C);
    tr_linear_forward(a->fch, a->ln2, blk->fcw->value.data, blk->fcb->value.data, N, C, Fl);
    tr_gelu_forward(a->fch_gelu, a->fch, N * Fl);
    tr_linear_forward(y, a->fch_gelu, blk->fcprojw->value.data,
                      first ? blk->fcprojb->value.data : NULL, N, Fl, C);
    tp_sum(blk, y);
    tr_add(y, a->x2, y, N * C);
}

void tr_block_backward_input(const tr_block *blk, tr_block_acts *a, tr_block_scratch *s, float *dx,
                             const float *dy, const float *x, int B, int T, int C, int H)
{
    const size_t N = (size_t)B * T;
    const int Cl = C / blk->tp, Hl = H / blk->tp, Fl = 4 * C / blk->tp;
    /* MLP branch; dy also flows straight through the residual into dx2 */
    memcpy(a->dx2, dy, N * C * sizeof(float));
    memset(s->dfch_gelu, 0, N * Fl * sizeof(float));
    tr_linear_backward_input(s->dfch_gelu, dy, blk->fcprojw->value.data, N, Fl, C);
    memset(a->dfch, 0, N * Fl * sizeof(float));
    tr_gelu_backward(a->dfch, s->dfch_gelu, a->fch, N * Fl);
    memset(s->dln, 0, N * C * sizeof(float));
    tr_linear_backward_input(s->dln, a->dfch, blk->fcw->value.data, N, C, Fl);
    tp_sum(blk, s->dln); /* the column split's input gradient: partial over tp */
    tr_layernorm_backward(a->dx2, blk->ln2w->grad.data, blk->ln2b->grad.data, s->dln, a->x2,
                          blk->ln2w->value.data, a->ln2_mean, a->ln2_rstd, N, C);
    /* attention branch; dx2 flows straight through the residual into dx */
    tr_add_into(dx, a->dx2, N * C);
    memset(s->datty, 0, N * Cl * sizeof(float));
    tr_linear_backward_input(s->datty, a->dx2, blk->projw->value.data, N, Cl, C);
    memset(a->dqkv, 0, 3 * N * Cl * sizeof(float));
    tr_attention_backward(a->dqkv, s->datt, s->datty, a->qkv, a->att, B, T, Cl, Hl);
    memset(s->dln, 0, N * C * sizeof(float));
    tr_linear_backward_input(s->dln, a->dqkv, blk->qkvw->value.data, N, C, 3 * Cl);
    tp_sum(blk, s->dln);
    tr_layernorm_backward(dx, blk->ln1w->grad.data, blk->ln1b->grad.data, s->dln, x,
                          blk->ln1w->value.data, a->ln1_mean, a->ln1_rstd, N, C);
}

void tr_block_backward_weight(const tr_block *blk, const tr_block_acts *a, const float *dy, int B,
                              int T, int C)
{
    const int N = B * T, Cl = C / blk->tp, Fl = 4 * C / blk->tp;
    /* dy and dx2 are complete on every tp rank, so the row-split biases' gradients are too */
    tr_linear_backward_weight(blk->fcprojw->grad.data, blk->fcprojb->grad.data, dy, a->fch_gelu, N,
                              Fl, C);
    tr_linear_backward_weight(blk->fcw->grad.data, blk->fcb->grad.data, a->dfch, a->ln2, N, C, Fl);
    tr_linear_backward_weight(blk->projw->grad.data, blk->projb->grad.data, a->dx2, a->atty, N, Cl,
                              C);
    tr_linear_backward_weight(blk->qkvw->grad.data, blk->qkvb->grad.data, a->dqkv, a->ln1, N, C,
                              3 * Cl);
}

void tr_block_backward(const tr_block *blk, tr_block_acts *a, tr_block_scratch *s, float *dx,
                       const float *dy, const float *x, int B, int T, int C, int H)
{
    tr_block_backward_input(blk, a, s, dx, dy, x, B, T, C, H);
    tr_block_backward_weight(blk, a, dy, B, T, C);
}
