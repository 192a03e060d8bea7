/* Plan validator: every needer gets every byte it needs exactly once, from a device that has
 * it at that moment, and nothing is sent where it is neither needed nor forwarded. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "plan_internal.h"
#include "util/util.h"

typedef struct {  /* 8 bytes: a plan of 250,000 edges makes as many, sorted once */
    int32_t slot; /* the (piece, needer) pair's place among all pairs: piece, then needer */
    int32_t flow; /* the piece is the flow's */
} delivery_t;

static int boxes_overlap(const mc_box_t *a, const mc_box_t *b, int ndim)
{
    for (int d = 0; d < ndim; d++)
        if (a->hi[d] <= b->lo[d] || b->hi[d] <= a->lo[d])
            return 0;
    return 1;
}

/* Devices are numbered by their place in ids (both meshes' devices, ascending): stamp
 * arrays follow the devices used, not the largest id. */
typedef struct {
    const int64_t *ids;
    int64_t n;
    int64_t *stamp;
    int64_t *place;     /* place[id]: the id's place in ids or -1, for ids up to max_id (NULL:
                           ids too sparse, binary search) */
    int64_t max_id;     /* the largest id */
    const int64_t *off; /* per piece: its first (piece, needer) slot */
} devices_t;

/* The device's place in ids, or -1. */
static int64_t find(const devices_t *dv, int64_t id)
{
    if (!dv->place)
        return mc_ids_find(dv->ids, dv->n, id);
    return id < 0 || id > dv->max_id ? -1 : dv->place[id];
}

/* A delivery of piece pi to device to if it needs it (its slot from its place among the
 * piece's ascending needers); returns whether it does. */
static int deliver(const mc_pieces_t *ps, const devices_t *dv, int64_t pi, int64_t to, int64_t fi,
                   delivery_t *out, int64_t *nout)
{
    const mc_piece_t *p = &ps->pieces[pi];
    int64_t at = mc_ids_find(p->needers, p->nneeders, to);
    if (at < 0)
        return 0;
    out[(*nout)++] = (delivery_t){(int32_t)(dv->off[pi] + at), (int32_t)fi};
    return 1;
}

/* The gather edges of a reduction flow: a combine tree (lib/plan/reduce_tree.c) bringing
 * every addend exactly once to the reducer, which then has the combined box. Copy flows
 * have none. */
static mc_status_t check_gather(const mc_plan_t *plan, int64_t fi, const devices_t *dv,
                                delivery_t *out, int64_t *nout)
{
    const mc_flow_t *f = &plan->flows[fi];
    int64_t n = plan->pieces->naddends;
    if ((n > 1) != (f->ngather > 0) || f->ngather < 0 || f->ngather > f->nedges)
        return mc_error(MC_ERR_INVALID, "flow %lld: %lld gather edges for %lld addends",
                        (long long)fi, (long long)f->ngather, (long long)n);
    if (n == 1)
        return MC_OK;
    for (int64_t j = 0; j < f->ngather; j++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + j];
        if (find(dv, e->from) < 0 || find(dv, e->to) < 0)
            return mc_error(MC_ERR_INVALID, "flow %lld: bad gather edge %lld -> %lld",
                            (long long)fi, (long long)e->from, (long long)e->to);
    }
    mc_reduce_tree_t t;
    mc_status_t s = mc_reduce_tree(plan, fi, &t);
    if (s)
        return s;
    mc_reduce_tree_free(&t);
    int64_t reducer = mc_flow_reducer(plan, f);
    dv->stamp[find(dv, reducer)] = fi + 1;
    deliver(plan->pieces, dv, f->piece, reducer, fi, out, nout);
    return MC_OK;
}

static mc_status_t check_flow(const mc_plan_t *plan, int64_t fi, const devices_t *dv,
                              delivery_t *out, int64_t *nout)
{
    const mc_flow_t *f = &plan->flows[fi];
    const mc_pieces_t *ps = plan->pieces;
    int ndim = ps->ndim;
    if (f->piece < 0 || f->piece >= ps->npieces)
        return mc_error(MC_ERR_INVALID, "flow %lld: no piece %lld", (long long)fi,
                        (long long)f->piece);
    const mc_piece_t *p = &ps->pieces[f->piece];
    for (int d = 0; d < ndim; d++)
        if (f->box.lo[d] < p->box.lo[d] || f->box.hi[d] > p->box.hi[d] ||
            f->box.lo[d] >= f->box.hi[d])
            return mc_error(MC_ERR_INVALID, "flow %lld: box is empty or outside piece %lld",
                            (long long)fi, (long long)f->piece);
    if (f->chunk_bytes <= 0 || f->chunk_bytes % ps->elem_size)
        return mc_error(MC_ERR_INVALID, "flow %lld: bad chunk size %lld", (long long)fi,
                        (long long)f->chunk_bytes);
    mc_status_t s = check_gather(plan, fi, dv, out, nout);
    if (s)
        return s;
    for (int64_t j = f->ngather; j < f->nedges; j++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + j];
        int64_t a = find(dv, e->from), b = find(dv, e->to);
        if (a < 0 || b < 0 || a == b)
            return mc_error(MC_ERR_INVALID, "flow %lld: bad edge %lld -> %lld", (long long)fi,
                            (long long)e->from, (long long)e->to);
        if (dv->stamp[a] != fi + 1 && !mc_flow_rooted_at(plan, f, e->from)) /* a search */
            return mc_error(MC_ERR_INVALID,
                            "flow %lld: device %lld sends piece %lld before it has it",
                            (long long)fi, (long long)e->from, (long long)f->piece);
        if (mc_flow_rooted_at(plan, f, e->to) || dv->stamp[b] == fi + 1)
            return mc_error(MC_ERR_INVALID, "flow %lld: device %lld receives bytes it has",
                            (long long)fi, (long long)e->to);
        dv->stamp[b] = fi + 1;
        if (deliver(ps, dv, f->piece, e->to, fi, out, nout))
            continue;
        int forwards = 0;
        for (int64_t k = j + 1; k < f->nedges && !forwards; k++)
            forwards = plan->edges[f->edge0 + k].from == e->to;
        if (!forwards)
            return mc_error(MC_ERR_INVALID,
                            "flow %lld: device %lld gets piece %lld but neither needs nor "
                            "forwards it",
                            (long long)fi, (long long)e->to, (long long)f->piece);
    }
    return MC_OK;
}

mc_status_t mc_plan_validate(const mc_plan_t *plan)
{
    mc_status_t s = MC_OK;
    if (!plan)
        return mc_error(MC_ERR_INVALID, "mc_plan_validate: NULL plan");
    const mc_pieces_t *ps = plan->pieces;
    devices_t dv = {0};
    int64_t *ids = NULL, *off = mc_calloc((size_t)ps->npieces + 1, sizeof *off), *count = NULL;
    /* not cleared: each delivery is written before it is read (clearing them was a tenth of
     * the validation of a plan of 250,000 edges) */
    delivery_t *del = malloc(((size_t)plan->nedges + 1) * sizeof *del), *sorted = NULL;
    int64_t ndel = 0;
    if (!del || !off || (s = mc_mesh_union(plan->src->mesh, plan->dst->mesh, &ids, &dv.n)) ||
        !(dv.stamp = mc_calloc((size_t)dv.n, sizeof *dv.stamp))) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    dv.ids = ids;
    dv.off = off;
    for (int64_t i = 0; i < ps->npieces; i++)
        off[i + 1] = off[i] + ps->pieces[i].nneeders;
    if (off[ps->npieces] > INT32_MAX || plan->nflows > INT32_MAX) { /* delivery_t's int32_t */
        s = mc_error(MC_ERR_INVALID, "plan too large to validate");
        goto out;
    }
    /* a table from id to place when the ids are dense enough (device ids usually are) */
    dv.max_id = dv.n > 0 ? ids[dv.n - 1] : -1;
    if (dv.n > 0 && ids[0] >= 0 && dv.max_id < 4 * dv.n + 4096 &&
        (dv.place = malloc((size_t)(dv.max_id + 1) * sizeof *dv.place))) {
        for (int64_t id = 0; id <= dv.max_id; id++)
            dv.place[id] = -1;
        for (int64_t i = 0; i < dv.n; i++)
            dv.place[ids[i]] = i;
    }
    for (int64_t fi = 0; fi < plan->nflows && !s; fi++)
        s = check_flow(plan, fi, &dv, del, &ndel);
    if (s)
        goto out;
    /* by (piece, needer), then flow: a counting sort by slot, stable (deliveries come in flow
     * order) */
    count = mc_calloc((size_t)off[ps->npieces] + 2, sizeof *count);
    sorted = malloc(((size_t)ndel + 1) * sizeof *sorted);
    if (!count || !sorted) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    for (int64_t i = 0; i < ndel; i++)
        count[del[i].slot + 1]++;
    for (int64_t k = 0; k < off[ps->npieces]; k++)
        count[k + 1] += count[k];
    for (int64_t i = 0; i < ndel; i++)
        sorted[count[del[i].slot]++] = del[i];
    free(del);
    del = sorted;
    sorted = NULL;
    int64_t groups_seen = 0, expected = 0;
    for (int64_t i = 0; i < ps->npieces; i++)
        expected += ps->pieces[i].nneeders;
    for (int64_t a = 0; a < ndel;) {
        int64_t b = a, vol = 0, piece = plan->flows[del[a].flow].piece;
        const mc_piece_t *p = &ps->pieces[piece];
        int64_t needer = p->needers[del[a].slot - off[piece]];
        while (b < ndel && del[b].slot == del[a].slot)
            b++;
        for (int64_t i = a; i < b; i++) {
            const mc_box_t *bi = &plan->flows[del[i].flow].box;
            vol += mc_box_volume(bi, ps->ndim);
            for (int64_t j = a; j < i; j++)
                if (boxes_overlap(bi, &plan->flows[del[j].flow].box, ps->ndim)) {
                    s = mc_error(MC_ERR_INVALID, "device %lld gets bytes of piece %lld twice",
                                 (long long)needer, (long long)piece);
                    goto out;
                }
        }
        if (vol != mc_box_volume(&p->box, ps->ndim)) {
            s = mc_error(MC_ERR_INVALID, "device %lld gets %lld of the %lld elements of piece %lld",
                         (long long)needer, (long long)vol,
                         (long long)mc_box_volume(&p->box, ps->ndim), (long long)piece);
            goto out;
        }
        groups_seen++;
        a = b;
    }
    if (groups_seen != expected)
        s = mc_error(MC_ERR_INVALID, "%lld (piece, needer) pairs receive nothing",
                     (long long)(expected - groups_seen));
out:
    free(ids);
    free(dv.stamp);
    free(dv.place);
    free(off);
    free(count);
    free(sorted);
    free(del);
    return s;
}
