#include "optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tr_adamw_init(tr_adamw *o, size_t n, float lr)
{
    *o = (tr_adamw){.lr = lr, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};
    o->n = n;
    o->m = tr_alloc(n);
    o->v = tr_alloc(n);
    return o->m && o->v ? 0 : -1;
}

void tr_adamw_update(tr_adamw *o, tr_params *ps)
{
    tr_adamw_update_some(o, ps, NULL);
}

void tr_adamw_update_some(tr_adamw *o, tr_params *ps, const unsigned char *mine)
{
    o->step++;
    const float c1 = 1.0f - powf(o->beta1, (float)o->step);
    const float c2 = 1.0f - powf(o->beta2, (float)o->step);
    for (int i = 0; i < ps->count; i++) {
        if (mine && !mine[i])
            continue;
        const tr_param *p = &ps->p[i];
        const float wd = p->decay ? o->weight_decay : 0.0f;
        float *w = p->value.data, *m = o->m + p->offset, *v = o->v + p->offset;
        const float *g = p->grad.data;
        for (int64_t j = 0; j < p->value.size; j++) {
            m[j] = o->beta1 * m[j] + (1.0f - o->beta1) * g[j];
            v[j] = o->beta2 * v[j] + (1.0f - o->beta2) * g[j] * g[j];
            float mhat = m[j] / c1, vhat = v[j] / c2;
            w[j] -= o->lr * (mhat / (sqrtf(vhat) + o->eps) + wd * w[j]);
        }
    }
}

void tr_adamw_free(tr_adamw *o)
{
    free(o->m);
    free(o->v);
    memset(o, 0, sizeof(*o));
}
