/* Every layer's backward against central finite differences of its forward. The
 * objective is sum(out * R) for a fixed random R (so dout = R), summed in double; each
 * input and parameter element is nudged by +-EPS in f32. */
#include "block.h"
#include "kernels.h"
#include "rng.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { B = 2, T = 5, C = 8, H = 2, V = 11, N = B * T };
#define EPS 1e-2f
#define TOL 2e-3 /* relative to the largest gradient, plus 1e-4 for f32 rounding */

static tr_rng rng;

static float *randn(size_t n, float std)
{
    float *v = calloc(n, sizeof(float));
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(std * tr_rng_normal(&rng));
    return v;
}

static float *zeros(size_t n)
{
    return calloc(n, sizeof(float));
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* Compares g (analytic) with finite differences of f over every element of x. */
static void check(const char *what, double (*f)(void *), void *ctx, float *x, const float *g,
                  size_t n)
{
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(g[i]));
    for (size_t i = 0; i < n; i++) {
        const float keep = x[i], hi = keep + EPS, lo = keep - EPS;
        x[i] = hi;
        double fh = f(ctx);
        x[i] = lo;
        double fl = f(ctx);
        x[i] = keep;
        double num = (fh - fl) / ((double)hi - lo);
        worst = fmax(worst, fabs(num - g[i]));
    }
    if (worst > TOL * scale + 1e-4)
        fail_msg("%s: finite differences differ from the backward by %g (max |grad| %g)", what,
                 worst, scale);
}

/* ---- linear ---- */
typedef struct {
    float *in, *w, *b, *out, *r;
} lin_ctx;

static double lin_f(void *p)
{
    lin_ctx *c = p;
    tr_linear_forward(c->out, c->in, c->w, c->b, N, C, 3);
    return dot(c->out, c->r, N * 3);
}

static void test_linear(void **state)
{
    (void)state;
    lin_ctx c = {randn(N * C, 1), randn(3 * C, 0.5f), randn(3, 0.5f), zeros(N * 3),
                 randn(N * 3, 1)};
    float *din = zeros(N * C), *dw = zeros(3 * C), *db = zeros(3);
    lin_f(&c);
    tr_linear_backward(din, dw, db, c.r, c.in, c.w, N, C, 3);
    check("linear input", lin_f, &c, c.in, din, N * C);
    check("linear weight", lin_f, &c, c.w, dw, 3 * C);
    check("linear bias", lin_f, &c, c.b, db, 3);
    float *bufs[] = {c.in, c.w, c.b, c.out, c.r, din, dw, db};
    for (size_t i = 0; i < 8; i++)
        free(bufs[i]);
}

/* ---- layernorm ---- */
typedef struct {
    float *in, *w, *b, *out, *mean, *rstd, *r;
} ln_ctx;

static double ln_f(void *p)
{
    ln_ctx *c = p;
    tr_layernorm_forward(c->out, c->mean, c->rstd, c->in, c->w, c->b, N, C);
    return dot(c->out, c->r, N * C);
}

static void test_layernorm(void **state)
{
    (void)state;
    ln_ctx c = {randn(N * C, 1), randn(C, 1), randn(C, 1),    zeros(N * C),
                zeros(N),        zeros(N),    randn(N * C, 1)};
    float *din = zeros(N * C), *dw = zeros(C), *db = zeros(C);
    ln_f(&c);
    tr_layernorm_backward(din, dw, db, c.r, c.in, c.w, c.mean, c.rstd, N, C);
    check("layernorm input", ln_f, &c, c.in, din, N * C);
    check("layernorm weight", ln_f, &c, c.w, dw, C);
    check("layernorm bias", ln_f, &c, c.b, db, C);
    float *bufs[] = {c.in, c.w, c.b, c.out, c.mean, c.rstd, c.r, din, dw, db};
    for (size_t i = 0; i < 10; i++)
        free(bufs[i]);
}

/* ---- attention ---- */
typedef struct {
    float *qkv, *att, *out, *r;
} attn_ctx;

static double attn_f(void *p)
{
    attn_ctx *c = p;
    tr_attention_forward(c->out, c->att, c->qkv, B, T, C, H);
    return dot(c->out, c->r, N * C);
}

static void test_attention(void **state)
{
    (void)state;
    attn_ctx c = {randn(N * 3 * C, 1), zeros(B * H * T * T), zeros(N * C), randn(N * C, 1)};
    float *dqkv = zeros(N * 3 * C), *scratch = zeros(2 * T * T);
    attn_f(&c);
    tr_attention_backward(dqkv, scratch, c.r, c.qkv, c.att, B, T, C, H);
    check("attention qkv", attn_f, &c, c.qkv, dqkv, N * 3 * C);
    free(c.qkv);
    free(c.att);
    free(c.out);
    free(c.r);
    free(dqkv);
    free(scratch);
}

/* ---- gelu ---- */
typedef struct {
    float *in, *out, *r;
} gelu_ctx;

static double gelu_f(void *p)
{
    gelu_ctx *c = p;
    tr_gelu_forward(c->out, c->in, N * C);
    return dot(c->out, c->r, N * C);
}

static void test_gelu(void **state)
{
    (void)state;
    gelu_ctx c = {randn(N * C, 2), zeros(N * C), randn(N * C, 1)};
    float *din = zeros(N * C);
    tr_gelu_backward(din, c.r, c.in, N * C);
    check("gelu", gelu_f, &c, c.in, din, N * C);
    free(c.in);
    free(c.out);
    free(c.r);
    free(din);
}

/* ---- cross-entropy: the objective is the mean loss itself ---- */
typedef struct {
    float *logits, *probs;
    int *targets;
} ce_ctx;

static double ce_f(void *p)
{
    ce_ctx *c = p;
    return tr_crossentropy_forward(c->probs, c->logits, c->targets, N, V);
}

static void test_crossentropy(void **state)
{
    (void)state;
    int targets[N];
    for (int i = 0; i < N; i++)
        targets[i] = (int)(tr_rng_next(&rng) % V);
    ce_ctx c = {randn(N * V, 2), zeros(N * V), targets};
    float *dl = zeros(N * V);
    ce_f(&c);
    tr_crossentropy_backward(dl, c.probs, targets, N, V, 1.0f);
    check("cross-entropy logits", ce_f, &c, c.logits, dl, N * V);
    free(c.logits);
    free(c.probs);
    free(dl);
}

/* ---- embedding ---- */
typedef struct {
    float *wte, *wpe, *out, *r;
    int *tokens;
} emb_ctx;

static double emb_f(void *p)
{
    emb_ctx *c = p;
    tr_embedding_forward(c->out, c->tokens, c->wte, c->wpe, B, T, C);
    return dot(c->out, c->r, N * C);
}

static void test_embedding(void **state)
{
    (void)state;
    int tokens[N];
    for (int i = 0; i < N; i++)
        tokens[i] = (int)(tr_rng_next(&rng) % 4); /* repeats: gradients must add up */
    emb_ctx c = {randn(V * C, 1), randn(T * C, 1), zeros(N * C), randn(N * C, 1), tokens};
    float *dwte = zeros(V * C), *dwpe = zeros(T * C);
    tr_embedding_backward(dwte, dwpe, c.r, tokens, B, T, C);
    check("embedding wte", emb_f, &c, c.wte, dwte, V * C);
    check("embedding wpe", emb_f, &c, c.wpe, dwpe, T * C);
    float *bufs[] = {c.wte, c.wpe, c.out, c.r, dwte, dwpe};
    for (size_t i = 0; i < 6; i++)
        free(bufs[i]);
}

/* ---- U join ---- */
typedef struct {
    float *x, *skip, *w, *b, *out, *r;
} join_ctx;

static double join_f(void *p)
{
    join_ctx *c = p;
    tr_join_forward(c->out, c->x, c->skip, c->w, c->b, N, C);
    return dot(c->out, c->r, N * C);
}

static void test_join(void **state)
{
    (void)state;
    join_ctx c = {randn(N * C, 1), randn(N * C, 1), randn(C * 2 * C, 0.5f),
                  randn(C, 0.5f),  zeros(N * C),    randn(N * C, 1)};
    float *dx = zeros(N * C), *dskip = zeros(N * C), *dw = zeros(C * 2 * C), *db = zeros(C);
    tr_join_backward(dx, dskip, dw, db, c.r, c.x, c.skip, c.w, N, C);
    check("join x", join_f, &c, c.x, dx, N * C);
    check("join skip", join_f, &c, c.skip, dskip, N * C);
    check("join weight", join_f, &c, c.w, dw, C * 2 * C);
    check("join bias", join_f, &c, c.b, db, C);
    float *bufs[] = {c.x, c.skip, c.w, c.b, c.out, c.r, dx, dskip, dw, db};
    for (size_t i = 0; i < 10; i++)
        free(bufs[i]);
}

/* ---- a whole block: the pieces composed, residuals included ---- */
typedef struct {
    tr_block blk;
    tr_block_acts acts;
    float *x, *y, *r;
} block_ctx;

static double block_f(void *p)
{
    block_ctx *c = p;
    tr_block_forward(&c->blk, &c->acts, c->y, c->x, B, T, C, H);
    return dot(c->y, c->r, N * C);
}

static void test_block(void **state)
{
    (void)state;
    tr_params ps;
    block_ctx c;
    assert_int_equal(tr_params_init(&ps, TR_BLOCK_NPARAMS), 0);
    assert_int_equal(tr_block_register(&c.blk, &ps, "b", C, 1, 0), 0);
    assert_int_equal(tr_params_alloc(&ps), 0);
    for (int i = 0; i < ps.count; i++) /* LayerNorm weights away from 1, biases nonzero */
        tr_param_normal(&ps.p[i], 0.3, &rng);
    assert_int_equal(tr_block_acts_alloc(&c.acts, B, T, C, H), 0);
    c.x = randn(N * C, 1);
    c.y = zeros(N * C);
    c.r = randn(N * C, 1);
    tr_block_scratch s;
    assert_int_equal(tr_block_scratch_alloc(&s, B, T, C), 0);
    float *dx = zeros(N * C);
    block_f(&c);
    tr_block_backward(&c.blk, &c.acts, &s, dx, c.r, c.x, B, T, C, H);
    check("block input", block_f, &c, c.x, dx, N * C);
    for (int i = 0; i < ps.count; i++)
        check(ps.p[i].name, block_f, &c, ps.p[i].value.data, ps.p[i].grad.data,
              (size_t)ps.p[i].value.size);
    free(dx);
    free(c.x);
    free(c.y);
    free(c.r);
    tr_block_scratch_free(&s);
    tr_block_acts_free(&c.acts);
    tr_params_free(&ps);
}

int main(void)
{
    tr_blas_single_thread();
    rng = tr_rng_seed(42);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear),       cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_attention),    cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_crossentropy), cmocka_unit_test(test_embedding),
        cmocka_unit_test(test_join),         cmocka_unit_test(test_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
