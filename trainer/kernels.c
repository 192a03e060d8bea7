#include "kernels.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* Debian's cblas.h may be the reference one (alternatives); OpenBLAS is what we link. */
void openblas_set_num_threads(int num_threads);

void tr_blas_single_thread(void)
{
    openblas_set_num_threads(1);
}

static void add_bias(float *out, const float *b, int N, int O)
{
    if (!b)
        return;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            out[(size_t)n * O + o] += b[o];
}

static void bias_grad(float *db, const float *dout, int N, int O)
{
    if (!db)
        return;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            db[o] += dout[(size_t)n * O + o];
}

void tr_linear_forward(float *out, const float *in, const float *w, const float *b, int N, int K,
                       int O)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, O, K, 1.0f, in, K, w, K, 0.0f, out, O);
    add_bias(out, b, N, O);
}

void tr_linear_backward_input(float *din, const float *dout, const float *w, int N, int K, int O)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, K, O, 1.0f, dout, O, w, K, 1.0f, din,
                K);
}

void tr_linear_backward_weight(float *dw, float *db, const float *dout, const float *in, int N,
                               int K, int O)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, O, K, N, 1.0f, dout, O, in, K, 1.0f, dw,
                K);
    bias_grad(db, dout, N, O);
}

void tr_linear_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                        const float *w, int N, int K, int O)
{
    if (din)
        tr_linear_backward_input(din, dout, w, N, K, O);
    tr_linear_backward_weight(dw, db, dout, in, N, K, O);
}

void tr_layernorm_forward(float *out, float *mean, float *rstd, const float *in, const float *w,
                          const float *b, int N, int C)
{
    const float eps = 1e-5f;
    for (int n = 0; n < N; n++) {
        const float *x = in + (size_t)n * C;
        float *y = out + (size_t)n * C;
        float m = 0.0f, v = 0.0f;
        for (int i = 0; i < C; i++)
            m += x[i];
        m /= C;
        for (int i = 0; i < C; i++)
            v += (x[i] - m) * (x[i] - m);
        float s = 1.0f / sqrtf(v / C + eps);
        for (int i = 0; i < C; i++)
            y[i] = (x[i] - m) * s * w[i] + b[i];
        mean[n] = m;
        rstd[n] = s;
    }
}

void tr_layernorm_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                           const float *w, const float *mean, const float *rstd, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const float *x = in + (size_t)n * C, *dy = dout + (size_t)n * C;
        float *dx = din + (size_t)n * C;
        /* the two means the normalisation's Jacobian needs */
        float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
        for (int i = 0; i < C; i++) {
            float norm = (x[i] - mean[n]) * rstd[n];
            dnorm_mean += w[i] * dy[i];
            dnorm_norm_mean += w[i] * dy[i] * norm;
        }
        dnorm_mean /= C;
        dnorm_norm_mean /= C;
        for (int i = 0; i < C; i++) {
            float norm = (x[i] - mean[n]) * rstd[n];
            db[i] += dy[i];
            dw[i] += norm * dy[i];
            dx[i] += (w[i] * dy[i] - dnorm_mean - norm * dnorm_norm_mean) * rstd[n];
        }
    }
}

void tr_attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int H)
{
    const int hs = C / H, ld = 3 * C;
    const float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            const float *q = qkv + (size_t)b * T * ld + h * hs, *k = q + C, *v = q + 2 * C;
            float *a = att + ((size_t)b * H + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, ld, k, ld,
                        0.0f, a, T);
            for (int i = 0; i < T; i++) {
                float *row = a + (size_t)i * T, max = row[0], sum = 0.0f;
                for (int j = 1; j <= i; j++)
                    max = fmaxf(max, row[j]);
                for (int j = 0; j <= i; j++) {
                    row[j] = expf(row[j] - max);
                    sum += row[j];
                }
                for (int j = 0; j <= i; j++)
                    row[j] /= sum;
                for (int j = i + 1; j < T; j++)
                    row[j] = 0.0f; /* causal: token i sees tokens 0..i */
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, ld,
                        0.0f, out + (size_t)b * T * C + h * hs, C);
        }
    }
}

void tr_attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                           const float *att, int B, int T, int C, int H)
{
    const int hs = C / H, ld = 3 * C;
    const float scale = 1.0f / sqrtf((float)hs);
    float *datt = scratch, *dpre = scratch + (size_t)T * T;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            const float *q = qkv + (size_t)b * T * ld + h * hs, *k = q + C, *v = q + 2 * C;
            float *dq = dqkv + (size_t)b * T * ld + h * hs, *dk = dq + C, *dv = dq + 2 * C;
            const float *a = att + ((size_t)b * H + h) * T * T;
            const float *dy = dout + (size_t)b * T * C + h * hs;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dy, C, v, ld, 0.0f,
                        datt, T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, dy, C, 1.0f,
                        dv, ld);
            /* softmax backward, row by row; above the diagonal att is 0, so dpre is too */
            for (int i = 0; i < T; i++) {
                const float *ar = a + (size_t)i * T, *dr = datt + (size_t)i * T;
                float *pr = dpre + (size_t)i * T, dot = 0.0f;
                for (int j = 0; j <= i; j++)
                    dot += ar[j] * dr[j];
                for (int j = 0; j < T; j++)
                    pr[j] = j <= i ? ar[j] * (dr[j] - dot) : 0.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, dpre, T, k, ld,
                        1.0f, dq, ld);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, dpre, T, q, ld,
                        1.0f, dk, ld);
        }
    }
}

#define GELU_S 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_C 0.044715f

void tr_gelu_forward(float *out, const float *in, int n)
{
    for (int i = 0; i < n; i++) {
        float x = in[i];
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_S * (x + GELU_C * x * x * x)));
    }
}

void tr_gelu_backward(float *din, const float *dout, const float *in, int n)
{
    for (int i = 0; i < n; i++) {
        float x = in[i], t = tanhf(GELU_S * (x + GELU_C * x * x * x));
        float d =
            0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_S * (1.0f + 3.0f * GELU_C * x * x);
        din[i] += d * dout[i];
    }
}

float tr_crossentropy_forward(float *probs, const float *logits, const int *targets, int N, int V)
{
    double loss = 0.0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * V;
        float *p = probs + (size_t)n * V, max = z[0], sum = 0.0f;
        for (int i = 1; i < V; i++)
            max = fmaxf(max, z[i]);
        for (int i = 0; i < V; i++) {
            p[i] = expf(z[i] - max);
            sum += p[i];
        }
        for (int i = 0; i < V; i++)
            p[i] /= sum;
        loss -= log(p[targets[n]]);
    }
    return (float)(loss / N);
}

void tr_crossentropy_backward(float *dlogits, const float *probs, const int *targets, int N, int V,
                              float scale)
{
    const float s = scale / N;
    for (int n = 0; n < N; n++) {
        const float *p = probs + (size_t)n * V;
        float *d = dlogits + (size_t)n * V;
        for (int i = 0; i < V; i++)
            d[i] += s * (p[i] - (i == targets[n] ? 1.0f : 0.0f));
    }
}

void tr_embedding_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B,
                          int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *e = wte + (size_t)tokens[b * T + t] * C, *p = wpe + (size_t)t * C;
            float *y = out + ((size_t)b * T + t) * C;
            for (int i = 0; i < C; i++)
                y[i] = e[i] + p[i];
        }
}

void tr_embedding_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B,
                           int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *dy = dout + ((size_t)b * T + t) * C;
            float *de = dwte + (size_t)tokens[b * T + t] * C, *dp = dwpe + (size_t)t * C;
            for (int i = 0; i < C; i++) {
                de[i] += dy[i];
                dp[i] += dy[i];
            }
        }
}

void tr_join_forward(float *out, const float *x, const float *skip, const float *w, const float *b,
                     int N, int C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, C, C, 1.0f, x, C, w, 2 * C, 0.0f, out,
                C);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, C, C, 1.0f, skip, C, w + C, 2 * C, 1.0f,
                out, C);
    add_bias(out, b, N, C);
}

void tr_join_backward_input(float *dx, float *dskip, const float *dout, const float *w, int N,
                            int C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, C, 1.0f, dout, C, w, 2 * C, 1.0f,
                dx, C);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, C, 1.0f, dout, C, w + C, 2 * C,
                1.0f, dskip, C);
}

void tr_join_backward_weight(float *dw, float *db, const float *dout, const float *x,
                             const float *skip, int N, int C)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, C, N, 1.0f, dout, C, x, C, 1.0f, dw,
                2 * C);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, C, N, 1.0f, dout, C, skip, C, 1.0f,
                dw + C, 2 * C);
    bias_grad(db, dout, N, C);
}

void tr_join_backward(float *dx, float *dskip, float *dw, float *db, const float *dout,
                      const float *x, const float *skip, const float *w, int N, int C)
{
    tr_join_backward_input(dx, dskip, dout, w, N, C);
    tr_join_backward_weight(dw, db, dout, x, skip, N, C);
}

void tr_add(float *out, const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void tr_add_into(float *dst, const float *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] += src[i];
}
