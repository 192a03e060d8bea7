/* Even stripes for host scatter (docs/planning.md, the meshcast row of "Strategies").
 *
 * mc_box_split cuts along the outermost dim of extent >= 2, so k stripes of an extent E
 * differ by a row: the largest holds ceil(E/k) rows where the mean is E/k. Host scatter
 * makes one stripe per needing host, and each needing host's NIC forwards its stripe to
 * every other one, so the host that got the largest stripes sets the pace: 64 rows cut for
 * 25 hosts are stripes of 2 and 3 rows, and a host entered by 3-row stripes of all 8 pieces
 * forwards 17% more than the mean (g0214 of seed 7 of the scale benchmark). Here the cut
 * goes along the outermost dim whose largest stripe is within 1/EVEN_SLACK of the mean, or
 * else the dim whose largest stripe is least; an inner dim gives strided stripes, which the
 * executor packs. */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

#define EVEN_SLACK 8

/* The dim to cut k even stripes along (above), -1 for none. */
static int even_dim(const mc_box_t *box, int ndim, int k)
{
    int dim = -1;
    double least = 0;
    for (int d = 0; d < ndim && k > 1; d++) {
        int64_t e = box->hi[d] - box->lo[d];
        if (e < 2)
            continue;
        int64_t n = k < e ? k : e;
        /* the largest stripe, in rows of e, against the mean of k stripes */
        double largest = (double)((e + n - 1) / n) / (double)e * k;
        if (largest <= 1 + 1.0 / EVEN_SLACK)
            return d;
        if (dim < 0 || largest < least) {
            dim = d;
            least = largest;
        }
    }
    return dim;
}

/* The outermost dim of extent >= 2 (mc_box_split's), -1 for none. */
static int outer_dim(const mc_box_t *box, int ndim)
{
    for (int d = 0; d < ndim; d++)
        if (box->hi[d] - box->lo[d] >= 2)
            return d;
    return -1;
}

int mc_box_split_even(const mc_box_t *box, int ndim, int k, mc_box_t *out)
{
    int dim = even_dim(box, ndim, k);
    if (dim < 0)
        return mc_box_split(box, ndim, k, out);
    int64_t extent = box->hi[dim] - box->lo[dim];
    if (k > extent)
        k = (int)extent;
    for (int i = 0; i < k; i++) {
        out[i] = *box;
        out[i].lo[dim] = box->lo[dim] + extent * i / k;
        out[i].hi[dim] = box->lo[dim] + extent * (i + 1) / k;
    }
    return k;
}

int mc_box_deep_dim(const mc_box_t *box, int ndim, int k)
{
    int outer = outer_dim(box, ndim);
    for (int d = outer + 1; outer >= 0 && d < ndim; d++)
        if (box->hi[d] - box->lo[d] >= 2)
            return k >= 2 * (box->hi[outer] - box->lo[outer]) ? d : -1;
    return -1;
}

int mc_box_split_deep(const mc_box_t *box, int ndim, int k, mc_box_t *out)
{
    int next = mc_box_deep_dim(box, ndim, k);
    if (next < 0)
        return mc_box_split(box, ndim, k, out);
    int outer = outer_dim(box, ndim);
    int64_t rows = box->hi[outer] - box->lo[outer], cols = box->hi[next] - box->lo[next],
            per = k / rows;
    if (per > cols)
        per = cols;
    int n = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < per; c++, n++) {
            out[n] = *box;
            out[n].lo[outer] = box->lo[outer] + r;
            out[n].hi[outer] = box->lo[outer] + r + 1;
            out[n].lo[next] = box->lo[next] + cols * c / per;
            out[n].hi[next] = box->lo[next] + cols * (c + 1) / per;
        }
    return n;
}

int mc_stripes_outer(const mc_plan_t *plan)
{
    int ndim = plan->pieces->ndim;
    for (int64_t i = 0; i < plan->nflows; i++) {
        const mc_box_t *f = &plan->flows[i].box,
                       *p = &plan->pieces->pieces[plan->flows[i].piece].box;
        int outer = 1; /* before the piece's outermost dim of extent >= 2 */
        for (int d = 0; d < ndim; d++) {
            if (!outer && (f->lo[d] != p->lo[d] || f->hi[d] != p->hi[d]))
                return 0;
            if (p->hi[d] - p->lo[d] >= 2)
                outer = 0;
        }
    }
    return 1;
}

int mc_stripes_uneven(const mc_plan_t *plan)
{
    const mc_pieces_t *ps = plan->pieces;
    int64_t *count = mc_calloc((size_t)ps->npieces + 1, sizeof *count);
    int uneven = !count; /* without memory: try them */
    for (int64_t i = 0; count && i < plan->nflows; i++)
        count[plan->flows[i].piece]++;
    for (int64_t i = 0; count && i < ps->npieces && !uneven; i++) {
        const mc_box_t *box = &ps->pieces[i].box;
        int outer = outer_dim(box, ps->ndim);
        if (count[i] < 2 || outer < 0)
            continue;
        /* a stripe per row: k may have been more than the rows, and an inner dim may cut it */
        if (count[i] == box->hi[outer] - box->lo[outer])
            for (int d = outer + 1; d < ps->ndim && !uneven; d++)
                uneven = box->hi[d] - box->lo[d] >= 2;
        uneven = uneven || even_dim(box, ps->ndim, (int)count[i]) != outer;
    }
    free(count);
    return uneven;
}
