/* Rule-based generators: GPipe, 1F1B, eager-1F1B, interleaved 1F1B, ZB-H1, DualPipeV.
 * Each writes the compute actions of every rank; communication is inserted later. */
#include <stdlib.h>
#include "schedule/sched_internal.h"
#include "util/util.h"

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* rank r runs w forwards, then m-w (F, B) pairs, then w backwards. eager-1F1B's
 * first_b = 2(p-r)-1 forwards precede its first B, then B and F alternate. */
static mc_status_t one_f_one_b(sched_list_t *l, int r, int m, int warmup)
{
    mc_status_t st = MC_OK;
    for (int i = 0; i < warmup && !st; i++)
        st = sched_list_push(l, MC_SCHED_F, r, i);
    for (int i = 0; i < m - warmup && !st; i++)
        if (!(st = sched_list_push(l, MC_SCHED_F, r, warmup + i)))
            st = sched_list_push(l, MC_SCHED_B, r, i);
    for (int i = m - warmup; i < m && !st; i++)
        st = sched_list_push(l, MC_SCHED_B, r, i);
    return st;
}

/* ZB-H1: 1F1B order with B split into I and W; rank r keeps up to r W's pending so that
 * later ranks fill the cool-down bubble with them (rank 0 runs W right after I). */
static mc_status_t zb_h1(sched_list_t *l, int r, int m, int p)
{
    int warmup = imin(p - 1 - r, m), wnext = 0;
    mc_status_t st = MC_OK;
    for (int i = 0; i < warmup && !st; i++)
        st = sched_list_push(l, MC_SCHED_F, r, i);
    for (int i = 0; i < m && !st; i++) {
        if (warmup + i < m)
            st = sched_list_push(l, MC_SCHED_F, r, warmup + i);
        if (!st)
            st = sched_list_push(l, MC_SCHED_I, r, i);
        if (!st && i + 1 - wnext > r)
            st = sched_list_push(l, MC_SCHED_W, r, wnext++);
    }
    while (!st && wnext < m)
        st = sched_list_push(l, MC_SCHED_W, r, wnext++);
    return st;
}

/* Megatron's interleaved order: virtual step k maps to chunk (k/p)%v (reversed for
 * backward) and microbatch (k/(p*v))*p + k%p. Needs m % p == 0. */
static mc_status_t interleaved(sched_list_t *l, int r, int m, int p, int v)
{
    int total = m * v;
    int warmup = imin((p - r - 1) * 2 + (v - 1) * p, total);
    mc_status_t st = MC_OK;
#define VSTEP(k, fwd)                                                                              \
    ((fwd ? ((k) / p) % v : v - 1 - ((k) / p) % v) * p + r), (((k) / (p * v)) * p + (k) % p)
    for (int k = 0; k < warmup && !st; k++)
        st = sched_list_push(l, MC_SCHED_F, VSTEP(k, 1));
    for (int k = 0; k < total - warmup && !st; k++)
        if (!(st = sched_list_push(l, MC_SCHED_F, VSTEP(warmup + k, 1))))
            st = sched_list_push(l, MC_SCHED_B, VSTEP(k, 0));
    for (int k = total - warmup; k < total && !st; k++)
        st = sched_list_push(l, MC_SCHED_B, VSTEP(k, 0));
#undef VSTEP
    return st;
}

/* DualPipeV (deepseek-ai/DualPipe dualpipev.py): eight phases per rank over the two
 * chunks of the V; F&B pairs that DualPipe overlaps are listed F first. Backwards run
 * "zero bubble" (I now, W queued) where the reference enables it. */
typedef struct {
    sched_list_t *l;
    int r, p, f[2], b[2];
    int *wq; /* queued W: stage * m + mb */
    int wq_head, wq_tail, m;
} dpv_t;

static int dpv_stage(const dpv_t *d, int chunk)
{
    return chunk ? 2 * d->p - 1 - d->r : d->r;
}

static mc_status_t dpv_f(dpv_t *d, int c)
{
    return sched_list_push(d->l, MC_SCHED_F, dpv_stage(d, c), d->f[c]++);
}

static mc_status_t dpv_b(dpv_t *d, int c, int zb)
{
    int s = dpv_stage(d, c), mb = d->b[c]++;
    if (!zb)
        return sched_list_push(d->l, MC_SCHED_B, s, mb);
    d->wq[d->wq_tail++] = s * d->m + mb;
    return sched_list_push(d->l, MC_SCHED_I, s, mb);
}

static mc_status_t dpv_w(dpv_t *d)
{
    if (d->wq_head == d->wq_tail)
        return MC_OK;
    int x = d->wq[d->wq_head++];
    return sched_list_push(d->l, MC_SCHED_W, x / d->m, x % d->m);
}

static mc_status_t dualpipev(sched_list_t *l, int r, int m, int p)
{
    dpv_t d = {.l = l, .r = r, .p = p, .m = m};
    mc_status_t st = MC_OK;
    d.wq = mc_calloc((size_t)(2 * m), sizeof *d.wq);
    if (!d.wq)
        return MC_ERR_NOMEM;
    int n1 = (p - r - 1) * 2, n2 = r + 1, n3 = p - r - 1, n4 = m - 2 * p + r + 1;
    int n5 = p - r - 1, n6 = r + 1, n7 = p - r - 1, n8 = r + 1;
    for (int i = 0; i < n1 && !st; i++)
        st = dpv_f(&d, 0);
    for (int i = 0; i < n2 && !st; i++)
        if (!(st = dpv_f(&d, 0)))
            st = dpv_f(&d, 1);
    for (int i = 0; i < n3 && !st; i++)
        if (!(st = dpv_b(&d, 1, 1)) && !(st = dpv_w(&d)))
            st = dpv_f(&d, 1);
    for (int i = 0; i < n4 && !st; i++)
        if (!(st = dpv_f(&d, 0)) && !(st = dpv_b(&d, 1, 0)) && !(st = dpv_f(&d, 1)))
            st = dpv_b(&d, 0, 0);
    for (int i = 0; i < n5 && !st; i++)
        if (!(st = dpv_b(&d, 1, 0)) && !(st = dpv_f(&d, 1)))
            st = dpv_b(&d, 0, 0);
    int zb = 0;
    for (int i = 0; i < n6 && !st; i++) {
        if (i == n6 / 2 && r % 2 == 1)
            zb = 1;
        st = dpv_b(&d, 1, zb);
        if (i == n6 / 2 && r % 2 == 0)
            zb = 1;
        if (!st)
            st = dpv_b(&d, 0, zb);
    }
    for (int i = 0; i < n7 && !st; i++)
        if (!(st = dpv_w(&d)))
            st = dpv_b(&d, 0, 1);
    for (int i = 0; i < n8 && !st; i++)
        st = dpv_w(&d);
    while (!st && d.wq_head < d.wq_tail)
        st = dpv_w(&d);
    free(d.wq);
    return st;
}

mc_status_t sched_gen_explicit(mc_schedule_t *s, sched_list_t *compute)
{
    int p = s->ranks, m = s->microbatches;
    mc_status_t st = MC_OK;
    for (int r = 0; r < p && !st; r++) {
        sched_list_t *l = &compute[r];
        switch (s->kind) {
        case MC_SCHED_GPIPE:
            st = one_f_one_b(l, r, m, m);
            break;
        case MC_SCHED_1F1B:
            st = one_f_one_b(l, r, m, imin(p - 1 - r, m));
            break;
        case MC_SCHED_EAGER_1F1B: {
            /* 2(p-r)-1 forwards before the first B = warm-up 2(p-r)-2 plus the pair's F */
            int first_b = imin(m, 2 * (p - r) - 1);
            st = one_f_one_b(l, r, m, first_b == m ? m : first_b - 1);
            break;
        }
        case MC_SCHED_INTERLEAVED_1F1B:
            st = interleaved(l, r, m, p, s->chunks);
            break;
        case MC_SCHED_ZB_H1:
            st = zb_h1(l, r, m, p);
            break;
        case MC_SCHED_DUALPIPEV:
            st = dualpipev(l, r, m, p);
            break;
        default:
            st = mc_error(MC_ERR_INTERNAL, "%s has no rule-based generator",
                          mc_sched_kind_name(s->kind));
            break;
        }
    }
    return st;
}
