#include "model_utransformer.h"

#include <stdio.h>
#include <stdlib.h>

int tr_utransformer_build(tr_model *m)
{
    const int L = m->cfg.blocks, C = m->cfg.dmodel;
    m->nskips = L / 2;
    m->skip_from = calloc((size_t)m->nskips, sizeof(int));
    m->skip_to = calloc((size_t)m->nskips, sizeof(int));
    if (!m->skip_from || !m->skip_to || tr_model_add_embed(m, &m->layers[0]))
        return -1;
    for (int i = 0; i < L; i++)
        if (tr_model_add_block(m, &m->layers[1 + i], i))
            return -1;
    for (int e = 0; e < m->nskips; e++) {
        /* edge e: down-block e (layer 1+e) into up-block L-1-e (layer L-e) */
        tr_layer *down = &m->layers[1 + e], *up = &m->layers[L - e];
        char name[48];
        const int64_t w[2] = {C, 2 * C}, b[1] = {C};
        tr_utransformer_skip(L, e, &m->skip_from[e], &m->skip_to[e]);
        down->skip_out = e;
        up->skip_in = e;
        snprintf(name, sizeof(name), "block%d.join.w", L - 1 - e);
        up->joinw = tr_params_add(&m->params, name, 2, w, 1);
        snprintf(name, sizeof(name), "block%d.join.b", L - 1 - e);
        up->joinb = tr_params_add(&m->params, name, 1, b, 0);
        if (!up->joinw || !up->joinb)
            return -1;
    }
    return tr_model_add_head(m, &m->layers[L + 1]);
}

void tr_utransformer_init_join(tr_model *m, tr_layer *ly)
{
    const int C = m->cfg.dmodel;
    for (int i = 0; i < C; i++) {
        ly->joinw->value.data[(size_t)i * 2 * C + i] = 1.0f;
        ly->joinw->value.data[(size_t)i * 2 * C + C + i] = 1.0f;
    }
}
