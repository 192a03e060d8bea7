/* AdamW (Loshchilov & Hutter): Adam with decoupled weight decay, applied to the
 * parameters marked `decay` (matrices and embeddings). m and v are flat like the
 * parameters, so a sharded optimizer later owns slices of the same offsets. */
#ifndef TRAINER_OPTIM_H
#define TRAINER_OPTIM_H

#include "params.h"

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
    int64_t step; /* updates done; the bias corrections use it */
    size_t n;
    float *m, *v;
} tr_adamw;

/* beta1 0.9, beta2 0.95, eps 1e-8, weight decay 0.1 (GPT-3's). */
int tr_adamw_init(tr_adamw *o, size_t n, float lr);
void tr_adamw_update(tr_adamw *o, tr_params *ps);
/* The same step for the parameters i with mine[i] set (a pipeline rank's own layers); the
 * others keep their values and moments. mine NULL: all. */
void tr_adamw_update_some(tr_adamw *o, tr_params *ps, const unsigned char *mine);
void tr_adamw_free(tr_adamw *o);

#endif
