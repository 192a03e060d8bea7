#include "params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_params_init(tr_params *ps, int capacity)
{
    memset(ps, 0, sizeof(*ps));
    ps->p = calloc((size_t)capacity, sizeof(*ps->p));
    ps->capacity = capacity;
    return ps->p ? 0 : -1;
}

tr_param *tr_params_add(tr_params *ps, const char *name, int ndim, const int64_t *shape, int decay)
{
    if (ps->count == ps->capacity)
        return NULL;
    tr_param *p = &ps->p[ps->count++];
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->value = tr_tensor_view(NULL, ndim, shape);
    p->grad = p->value;
    p->offset = ps->total;
    p->decay = decay;
    ps->total += (size_t)p->value.size;
    return p;
}

tr_param *tr_params_add_split(tr_params *ps, const char *name, int ndim, const int64_t *shape,
                              int decay, int sdim, tr_split split)
{
    int64_t local[TR_MAX_DIMS];
    memcpy(local, shape, (size_t)ndim * sizeof(int64_t));
    local[sdim] /= split.parts;
    tr_param *p = tr_params_add(ps, name, ndim, local, decay);
    if (p)
        p->split = split;
    return p;
}

int64_t tr_param_part_size(const tr_param *whole, int parts)
{
    return whole->split.mid ? whole->value.size / parts : whole->value.size;
}

/* Copies part `part` of `parts` from src to dst; one of them is the whole tensor (full),
 * the other the dense slice. A replicated parameter's part is all of it. */
static void copy_part(const tr_param *whole, int parts, int part, float *dst, const float *src,
                      int dst_is_full)
{
    const tr_split *s = &whole->split;
    if (!s->mid || parts == 1) {
        memcpy(dst, src, (size_t)whole->value.size * sizeof(float));
        return;
    }
    const int64_t rows = s->mid / parts, run = rows * s->inner;
    for (int64_t o = 0; o < s->outer; o++) {
        const int64_t f = (o * s->mid + (int64_t)part * rows) * s->inner, l = o * run;
        memcpy(dst + (dst_is_full ? f : l), src + (dst_is_full ? l : f),
               (size_t)run * sizeof(float));
    }
}

void tr_param_get_part(const tr_param *whole, int parts, int part, const float *full, float *slice)
{
    copy_part(whole, parts, part, slice, full, 0);
}

void tr_param_put_part(const tr_param *whole, int parts, int part, const float *slice, float *full)
{
    copy_part(whole, parts, part, full, slice, 1);
}

int tr_params_alloc(tr_params *ps)
{
    ps->values = tr_alloc(ps->total);
    ps->grads = tr_alloc(ps->total);
    if (!ps->values || !ps->grads)
        return -1;
    for (int i = 0; i < ps->count; i++) {
        ps->p[i].value.data = ps->values + ps->p[i].offset;
        ps->p[i].grad.data = ps->grads + ps->p[i].offset;
    }
    return 0;
}

void tr_params_zero_grad(tr_params *ps)
{
    memset(ps->grads, 0, ps->total * sizeof(float));
}

void tr_params_free(tr_params *ps)
{
    free(ps->p);
    free(ps->values);
    free(ps->grads);
    memset(ps, 0, sizeof(*ps));
}

void tr_param_fill(tr_param *p, float v)
{
    for (int64_t i = 0; i < p->value.size; i++)
        p->value.data[i] = v;
}

void tr_param_normal(tr_param *p, double std, tr_rng *rng)
{
    for (int64_t i = 0; i < p->value.size; i++)
        p->value.data[i] = (float)(std * tr_rng_normal(rng));
}
