/* The layers as forward/backward pairs, on row-major f32 arrays of N rows (N = B*T tokens).
 * Every matrix product goes through cblas_sgemm. Every backward ACCUMULATES (+=) into the
 * gradients it writes (input and parameter gradients alike); callers zero them first. */
#ifndef TRAINER_KERNELS_H
#define TRAINER_KERNELS_H

/* One BLAS thread: one rank is one core, parallelism comes from meshcast, not from BLAS. */
void tr_blas_single_thread(void);

/* out[N,O] = in[N,K] w[O,K]^T + b[O] */
void tr_linear_forward(float *out, const float *in, const float *w, const float *b, int N, int K,
                       int O);
/* din may be NULL (nothing upstream needs it). Both halves below, in one call. */
void tr_linear_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                        const float *w, int N, int K, int O);
/* The halves, for a backward split into its input-gradient part (I) and its weight-gradient
 * part (W, run later from the kept dout and in): din += dout w; dw += dout^T in and
 * db += the column sums of dout (db may be NULL). */
void tr_linear_backward_input(float *din, const float *dout, const float *w, int N, int K, int O);
void tr_linear_backward_weight(float *dw, float *db, const float *dout, const float *in, int N,
                               int K, int O);

/* Per row: (in - mean) * rstd * w + b; mean and rstd (N each) are kept for the backward. */
void tr_layernorm_forward(float *out, float *mean, float *rstd, const float *in, const float *w,
                          const float *b, int N, int C);
void tr_layernorm_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                           const float *w, const float *mean, const float *rstd, int N, int C);

/* Causal multi-head attention. qkv[B,T,3C] holds q, k, v side by side per token; att
 * [B,H,T,T] keeps the softmax probabilities (zero above the diagonal); out[B,T,C]. */
void tr_attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int H);
/* scratch: 2*T*T floats. */
void tr_attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                           const float *att, int B, int T, int C, int H);

/* GELU, tanh approximation (GPT-2). */
void tr_gelu_forward(float *out, const float *in, int n);
void tr_gelu_backward(float *din, const float *dout, const float *in, int n);

/* Mean cross-entropy of softmax(logits[N,V]) against targets; probs[N,V] kept. */
float tr_crossentropy_forward(float *probs, const float *logits, const int *targets, int N, int V);
/* dlogits += scale * (probs - onehot(targets)) / N: the gradient of scale * mean loss. */
void tr_crossentropy_backward(float *dlogits, const float *probs, const int *targets, int N, int V,
                              float scale);

/* out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:] */
void tr_embedding_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B,
                          int T, int C);
void tr_embedding_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B,
                           int T, int C);

/* U-join: concatenate [x, skip] (2C) and project back to C: out = [x skip] w[C,2C]^T + b.
 * Written as two products on the halves of w, so no concatenated copy is made. */
void tr_join_forward(float *out, const float *x, const float *skip, const float *w, const float *b,
                     int N, int C);
void tr_join_backward(float *dx, float *dskip, float *dw, float *db, const float *dout,
                      const float *x, const float *skip, const float *w, int N, int C);
/* Its input-gradient and weight-gradient halves (as tr_linear_backward_*). */
void tr_join_backward_input(float *dx, float *dskip, const float *dout, const float *w, int N,
                            int C);
void tr_join_backward_weight(float *dw, float *db, const float *dout, const float *x,
                             const float *skip, int N, int C);

/* out = a + b; the backward of a residual add is dout into both branches. */
void tr_add(float *out, const float *a, const float *b, int n);
void tr_add_into(float *dst, const float *src, int n);

#endif
