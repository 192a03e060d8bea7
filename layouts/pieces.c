/* Pieces: the tensor cut into boxes with one holder set and one needer set each.
 *
 * Per dimension the shard boundaries of src and dst (each layout's shards partition [0, n),
 * in the order its cut gives, cut.c) cut [0, n) into segments, each inside exactly one src
 * shard and one dst shard. A cell (product of segments) is therefore held by
 * exactly the src devices whose shard-index tuple matches, and needed by the dst devices
 * whose tuple matches. Devices are grouped by tuple (mixed-radix index), so each cell costs
 * O(ndim + group sizes). Every tuple has at least one device, so cells adjacent along a dim
 * (different src or dst shard there) never have the same device sets: cells are maximal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout_internal.h"
#include "pieces.h"
#include "util/util.h"

typedef struct {
    int64_t lo, hi;
    int64_t src_shard, dst_shard;
} segment_t;

/* Device ids grouped by shard-index tuple, each group ascending. */
typedef struct {
    int64_t ngroups;
    int64_t group_size; /* every group has the same size: mesh size / ngroups */
    int64_t stride[MC_MAX_NDIM];
    int64_t *ids;    /* ngroups * group_size */
    int64_t *addend; /* parallel to ids: each device's addend index (partial layouts) */
} groups_t;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static mc_status_t group_devices(const mc_layout_t *l, groups_t *g)
{
    const mc_mesh_t *m = l->mesh;
    int64_t shards[MC_MAX_NDIM];
    g->ngroups = 1;
    for (int d = l->ndim - 1; d >= 0; d--) {
        shards[d] = mc_layout_shards(l, d);
        g->stride[d] = g->ngroups;
        g->ngroups *= shards[d]; /* distinct axes: product <= mesh size */
    }
    g->group_size = m->size / g->ngroups;
    /* Pairs (id, addend) sorted by id within each group, then split into two arrays. */
    int64_t *pairs = mc_calloc((size_t)m->size, 2 * sizeof *pairs);
    int64_t *fill = mc_calloc((size_t)g->ngroups, sizeof *fill);
    g->ids = mc_calloc((size_t)m->size, sizeof *g->ids);
    g->addend = mc_calloc((size_t)m->size, sizeof *g->addend);
    if (!pairs || !fill || !g->ids || !g->addend) {
        free(pairs);
        free(fill);
        free(g->ids);
        free(g->addend);
        g->ids = g->addend = NULL;
        return MC_ERR_NOMEM;
    }
    for (int64_t i = 0; i < m->size; i++) {
        int64_t t = 0;
        for (int d = 0; d < l->ndim; d++)
            t += mc_layout_shard_index(l, d, i) * g->stride[d];
        int64_t *pr = pairs + 2 * (t * g->group_size + fill[t]++);
        pr[0] = m->devices[i];
        pr[1] = mc_layout_addend_index(l, i);
    }
    for (int64_t t = 0; t < g->ngroups; t++)
        qsort(pairs + 2 * t * g->group_size, (size_t)g->group_size, 2 * sizeof *pairs, cmp_i64);
    for (int64_t i = 0; i < m->size; i++) {
        g->ids[i] = pairs[2 * i];
        g->addend[i] = pairs[2 * i + 1];
    }
    free(pairs);
    free(fill);
    return MC_OK;
}

typedef struct {
    int64_t lo, hi, shard;
} owned_t;

static int cmp_owned(const void *a, const void *b)
{
    int64_t x = ((const owned_t *)a)->lo, y = ((const owned_t *)b)->lo;
    return (x > y) - (x < y);
}

/* The non-empty shards of dim d in increasing order: they partition [0, n). */
static mc_status_t dim_owners(const mc_layout_t *l, int d, owned_t **out, int64_t *count)
{
    const mc_spec_t *sp = l->spec;
    int64_t k = mc_layout_shards(l, d), n = 0, size = l->shape[d];
    /* Non-empty shards are disjoint: at most min(k, size) of them. */
    owned_t *o = mc_calloc((size_t)(k < size ? k : size), sizeof *o);
    if (!o)
        return MC_ERR_NOMEM;
    int flat = sp->cut == MC_CUT_FLAT && !sp->nextents[d];
    for (int64_t t = 0; t < k; t++) {
        int64_t lo, hi;
        if (flat) {
            mc_chunk_range(size, k, t, &lo, &hi);
            if (lo >= size)
                break; /* the rest are empty */
        } else if (sp->nextents[d]) {
            lo = sp->offsets[d][t];
            hi = sp->offsets[d][t + 1];
        } else {
            mc_span_t *spans;
            int64_t ns;
            mc_status_t s = mc_layout_dim_spans(l, d, t, &spans, &ns);
            if (s) {
                free(o);
                return s;
            }
            /* At most one span: checked at layout creation. */
            lo = ns ? spans[0].lo : 0;
            hi = ns ? spans[0].hi : 0;
            free(spans);
        }
        if (lo < hi)
            o[n++] = (owned_t){lo, hi, t};
    }
    if (!flat)
        qsort(o, (size_t)n, sizeof *o, cmp_owned);
    *out = o;
    *count = n;
    return MC_OK;
}

/* Segments of dim d: merge the src and dst shard boundaries. */
static mc_status_t dim_segments(const mc_layout_t *src, const mc_layout_t *dst, int d,
                                segment_t **out, int64_t *count)
{
    owned_t *os = NULL, *od = NULL;
    int64_t ns = 0, nd = 0;
    mc_status_t s;
    if ((s = dim_owners(src, d, &os, &ns)) || (s = dim_owners(dst, d, &od, &nd))) {
        free(os);
        return s;
    }
    segment_t *seg = mc_calloc((size_t)(ns + nd), sizeof *seg);
    if (!seg) {
        free(os);
        free(od);
        return MC_ERR_NOMEM;
    }
    int64_t nseg = 0, i = 0, j = 0, x = 0, n = src->shape[d];
    while (x < n) {
        /* Next boundary: end of the current src shard or dst shard, whichever is first. */
        int64_t end = os[i].hi < od[j].hi ? os[i].hi : od[j].hi;
        seg[nseg++] = (segment_t){x, end, os[i].shard, od[j].shard};
        x = end;
        i += os[i].hi == end;
        j += od[j].hi == end;
    }
    free(os);
    free(od);
    *out = seg;
    *count = nseg;
    return MC_OK;
}

static void format_shape(const mc_layout_t *l, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < l->ndim && used < len; d++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", d ? "," : "[",
                                 (long long)l->shape[d]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

mc_status_t mc_pieces_compute(const mc_layout_t *src, const mc_layout_t *dst, mc_pieces_t **out)
{
    if (!src || !dst || !out)
        return mc_error(MC_ERR_INVALID, "pieces: NULL argument");
    int same = src->ndim == dst->ndim;
    for (int d = 0; same && d < src->ndim; d++)
        same = src->shape[d] == dst->shape[d];
    if (!same) {
        char a[160], b[160];
        format_shape(src, a, sizeof a);
        format_shape(dst, b, sizeof b);
        return mc_error(MC_ERR_INVALID, "pieces: src shape %s differs from dst shape %s", a, b);
    }
    if (src->dtype != dst->dtype)
        return mc_error(MC_ERR_INVALID, "pieces: src dtype %s differs from dst dtype %s",
                        mc_dtype_name(src->dtype), mc_dtype_name(dst->dtype));

    if (mc_spec_reduce(dst->spec) == MC_REDUCE_AVG)
        return mc_error(MC_ERR_UNSUPPORTED,
                        "pieces: a Partial(avg) destination has no identity addend (sum, max "
                        "and min do)");

    const int nd = src->ndim;
    const int64_t naddends = mc_layout_addends(src);
    const int64_t esize = (int64_t)mc_dtype_size(src->dtype);
    mc_status_t s = MC_OK;
    segment_t *seg[MC_MAX_NDIM] = {0};
    int64_t nseg[MC_MAX_NDIM];
    groups_t gs = {0}, gd = {0};
    mc_pieces_t *p = NULL;
    int64_t ncells = 1, per_cell, nids;

    for (int d = 0; d < nd; d++) {
        if ((s = dim_segments(src, dst, d, &seg[d], &nseg[d])))
            goto err_segments;
        if (mc_mul_i64(ncells, nseg[d], &ncells)) {
            s = mc_error(MC_ERR_OVERFLOW, "pieces: too many pieces");
            goto err_segments;
        }
    }
    if ((s = group_devices(src, &gs)) || (s = group_devices(dst, &gd)))
        goto err_groups;
    /* Each cell stores its holders (and their addend indices when the source is partial)
     * plus its dst group split into needers and self. */
    if (gs.group_size > INT32_MAX || gd.group_size > INT32_MAX || /* counts are int */
        mc_add_i64(gs.group_size * (naddends > 1 ? 2 : 1), gd.group_size, &per_cell) ||
        mc_mul_i64(ncells, per_cell, &nids) || (uint64_t)nids > SIZE_MAX / sizeof(int64_t) ||
        (uint64_t)ncells > SIZE_MAX / sizeof(mc_piece_t)) {
        s = mc_error(MC_ERR_OVERFLOW, "pieces: %lld pieces do not fit in memory",
                     (long long)ncells);
        goto err_groups;
    }
    if (nids > MC_PIECES_MAX_IDS) {
        s = mc_error(MC_ERR_OVERFLOW,
                     "pieces: %lld pieces of up to %lld devices each are more than the limit "
                     "of %lld piece-device entries",
                     (long long)ncells, (long long)per_cell, (long long)MC_PIECES_MAX_IDS);
        goto err_groups;
    }
    p = mc_calloc(1, sizeof *p);
    if (!p) {
        s = MC_ERR_NOMEM;
        goto err_groups;
    }
    p->pieces = mc_calloc((size_t)ncells, sizeof *p->pieces);
    p->ids = mc_calloc((size_t)nids, sizeof *p->ids);
    if (!p->pieces || !p->ids) {
        s = MC_ERR_NOMEM;
        goto err_pieces;
    }
    p->ndim = nd;
    p->elem_size = esize;
    p->naddends = naddends;
    p->op = mc_spec_reduce(src->spec);
    for (int d = 0; d < nd; d++)
        p->shape[d] = src->shape[d];

    /* Odometer over cells in row-major order of their lower corners. */
    int64_t at[MC_MAX_NDIM] = {0}, next_id = 0, np = 0;
    for (int64_t c = 0; c < ncells; c++) {
        mc_piece_t *pc = &p->pieces[np];
        int64_t ts = 0, td = 0, elems = 1;
        for (int d = 0; d < nd; d++) {
            const segment_t *sg = &seg[d][at[d]];
            pc->box.lo[d] = sg->lo;
            pc->box.hi[d] = sg->hi;
            elems *= sg->hi - sg->lo;
            ts += sg->src_shard * gs.stride[d];
            td += sg->dst_shard * gd.stride[d];
        }
        const int64_t *h = gs.ids + ts * gs.group_size, *w = gd.ids + td * gd.group_size;
        int64_t nh = gs.group_size, nw = gd.group_size;
        int64_t *ids = p->ids + next_id;
        memcpy(ids, h, (size_t)nh * sizeof *ids);
        int64_t *addends = NULL;
        if (naddends > 1) {
            addends = ids + nh; /* the holders' addend indices follow them */
            memcpy(addends, gs.addend + ts * gs.group_size, (size_t)nh * sizeof *addends);
            ids = addends; /* needers and self go after the addends */
        }
        /* Sorted merge: dst devices that also hold the cell copy locally (self). */
        int64_t *need = ids + nh, nneed = 0, nself = 0;
        const int64_t *wa = gd.addend + td * gd.group_size;
        int64_t kept = 0; /* dst devices that take part: of a partial dst, addend 0 only */
        for (int64_t j = 0; j < nw; j++)
            kept += wa[j] == 0;
        int64_t *self_tmp = need + kept; /* the tail of this cell, moved into place below */
        int64_t i = 0;
        for (int64_t j = 0; j < nw; j++) {
            /* a partial destination: addend 0 gets the value, the others the op's identity
             * (filled by the executor, like DTensor's zero contributions) */
            if (wa[j] != 0)
                continue;
            while (i < nh && h[i] < w[j])
                i++;
            /* A holder of one addend of several still needs the others: no local copy. */
            if (i < nh && h[i] == w[j] && naddends == 1)
                self_tmp[-1 - nself++] = w[j]; /* fill the tail backwards */
            else
                need[nneed++] = w[j];
        }
        /* self_tmp[-nself..-1] holds self in descending order; reverse it into place. */
        int64_t *self = need + nneed;
        for (int64_t k = 0; k < nself / 2; k++) {
            int64_t t = self[k];
            self[k] = self[nself - 1 - k];
            self[nself - 1 - k] = t;
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++at[d] < nseg[d])
                break;
            at[d] = 0;
        }
        if (nneed == 0 && nself == 0)
            continue;              /* nobody wants it (cannot happen: dst covers the tensor) */
        pc->bytes = elems * esize; /* elems <= tensor elements: checked at layout creation */
        pc->nholders = (int)nh;
        pc->nneeders = (int)nneed;
        pc->nself = (int)nself;
        pc->holders = addends ? addends - nh : ids;
        pc->addends = addends;
        pc->needers = need;
        pc->self = self;
        next_id += nh * (addends ? 2 : 1) + nneed + nself;
        np++;
    }
    p->npieces = np;
    for (int d = 0; d < nd; d++)
        free(seg[d]);
    free(gs.ids);
    free(gd.ids);
    free(gs.addend);
    free(gd.addend);
    *out = p;
    return MC_OK;

err_pieces:
    mc_pieces_destroy(p);
err_groups:
    free(gs.ids);
    free(gd.ids);
    free(gs.addend);
    free(gd.addend);
err_segments:
    for (int d = 0; d < nd; d++)
        free(seg[d]);
    return s;
}

void mc_pieces_destroy(mc_pieces_t *pieces)
{
    if (!pieces)
        return;
    free(pieces->pieces);
    free(pieces->ids);
    free(pieces);
}
