/* Equal stripes (docs/planning.md, the meshcast row of "Strategies"): a plan's flows cut into
 * stripes of about one size, each stripe along its flow's edges.
 *
 * The simulator, like a fair transport, serves the chunks a port has ready in the order of
 * their byte offsets in their flows, so every flow in flight advances at the same rate: what a
 * port moves at a time is its share of the flows in flight, not of the bytes. Where the two
 * layouts' boundaries cut pieces of unequal sizes, the ports of the small flows run out of
 * chunks at each offset while the others still have theirs, and idle: g0106 of seed 19 of the
 * scale benchmark, an all-to-all over 20 hosts, sends 21.5 MB pieces to 13 hosts and pairs of
 * 10.7 MB ones to the 7 whose columns straddle a source shard, so past the eighth flow of every
 * host pair each offset feeds only those 7 NICs (1.355 of the bound). With stripes of one size
 * every port's share of the flows is its share of the bytes (1.016). */
#include <math.h>
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double mc_stripes_equal_size(const mc_plan_t *plan, double share)
{
    int64_t n = plan->nflows;
    double *bytes = malloc(((size_t)n + 1) * sizeof *bytes), total = 0, sum = 0;
    if (!bytes)
        return 0;
    for (int64_t i = 0; i < n; i++)
        total += bytes[i] = (double)plan->flows[i].bytes;
    qsort(bytes, (size_t)n, sizeof *bytes, cmp_double);
    double size = n > 0 ? bytes[n - 1] : 0;
    for (int64_t i = 0; i < n; i++)
        if ((sum += bytes[i]) >= share * total) {
            size = bytes[i];
            break;
        }
    free(bytes);
    return size;
}

/* Stripes flow f is cut into at size (before the box caps them). */
static int stripes_of(const mc_flow_t *f, double size)
{
    double k = floor((double)f->bytes / size + 0.5);
    return k < 1 ? 1 : k > INT32_MAX ? INT32_MAX : (int)k;
}

mc_status_t mc_plan_stripes_equal(const mc_plan_t *plan, double size, int64_t max_edges,
                                  mc_plan_t *out, int *built)
{
    int ndim = plan->pieces->ndim;
    int64_t flows = 0, edges = 0, most = 1;
    *built = 0;
    if (!(size > 0))
        return MC_OK;
    /* the cut's flows, edges and widest flow; a cut that changes no flow is not built */
    for (int64_t i = 0; i < plan->nflows; i++) {
        const mc_flow_t *f = &plan->flows[i];
        int k = stripes_of(f, size);
        if (f->ngather)
            return MC_OK; /* a reduction's combine tree is one flow */
        flows += k;
        edges += (int64_t)k * f->nedges;
        most = k > most ? k : most;
    }
    if (edges > max_edges || edges == plan->nedges)
        return MC_OK;
    /* out's arrays at their size at once: grown by doubling they were copied and faulted
     * in again (a fifth of a 16,384-piece plan's time on dgx-h100-rails) */
    mc_status_t s = mc_plan_reserve(out, out->nflows + flows + 1, out->nedges + edges + 1);
    if (s)
        return s;
    mc_box_t *stripes = mc_calloc((size_t)most, sizeof *stripes);
    if (!stripes)
        return MC_ERR_NOMEM;
    for (int64_t i = 0; i < plan->nflows && !s; i++) {
        const mc_flow_t *f = &plan->flows[i];
        int k = mc_box_split_even(&f->box, ndim, stripes_of(f, size), stripes);
        for (int j = 0; j < k && !s; j++) {
            s = mc_plan_add_flow(out, f->piece, &stripes[j]);
            for (int64_t e = 0; e < f->nedges && !s; e++)
                s = mc_plan_add_edge(out, plan->edges[f->edge0 + e].from,
                                     plan->edges[f->edge0 + e].to);
        }
    }
    free(stripes);
    /* the stripes of a flow in the rounds of an all-to-all, as every policy's flows are */
    if (!s && !(s = mc_plan_order_rounds(out)))
        *built = 1;
    return s;
}
