/* Combine trees of reduction flows (docs/planning.md#reductions).
 *
 * A reduction flow's gather edges form a tree into its reducer: edge X -> Y carries X's
 * partial, X's own addend combined with whatever X's own gather edges brought it (none: the
 * addend alone). Edges into X come before X's edge out, and the reducer is the destination
 * of the last gather edge. Each combiner combines its inputs (its own addend and the
 * partials it received) ordered by the least addend index in each, so the order of
 * combination is a property of the plan: the same on every device, rank and run. A flat
 * gather (every edge into the reducer) combines in addend order. */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

int64_t mc_flow_reducer(const mc_plan_t *plan, const mc_flow_t *f)
{
    return f->ngather > 0 ? plan->edges[f->edge0 + f->ngather - 1].to : -1;
}

void mc_reduce_tree_free(mc_reduce_tree_t *t)
{
    free(t->comb);
    free(t->in);
    free(t->edge);
    *t = (mc_reduce_tree_t){0};
}

/* The least addend index in input v of t (an addend, or a combiner's partial). */
static int64_t least(const mc_reduce_tree_t *t, int64_t v)
{
    return v >= 0 ? v : t->comb[-v - 1].least;
}

/* Sorts a combiner's inputs by their least addend (few inputs: insertion sort). */
static void sort_inputs(mc_reduce_tree_t *t, const mc_combiner_t *c)
{
    int64_t *in = t->in + c->in0, *edge = t->edge + c->in0;
    for (int64_t i = 1; i < c->nin; i++)
        for (int64_t j = i; j > 0 && least(t, in[j]) < least(t, in[j - 1]); j--) {
            int64_t v = in[j], e = edge[j];
            in[j] = in[j - 1];
            edge[j] = edge[j - 1];
            in[j - 1] = v;
            edge[j - 1] = e;
        }
}

static mc_status_t bad(int64_t fi, const char *what, int64_t dev)
{
    return mc_error(MC_ERR_INVALID, "flow %lld: gather edge from device %lld %s", (long long)fi,
                    (long long)dev, what);
}

mc_status_t mc_reduce_tree(const mc_plan_t *plan, int64_t fi, mc_reduce_tree_t *out)
{
    const mc_flow_t *f = &plan->flows[fi];
    const mc_piece_t *p = &plan->pieces->pieces[f->piece];
    const mc_edge_t *g = plan->edges + f->edge0;
    int64_t n = f->ngather;
    mc_reduce_tree_t t = {0};
    *out = t;
    if (n <= 0)
        return mc_error(MC_ERR_INVALID, "flow %lld has no gather edges", (long long)fi);
    /* node j < n: the sender of gather edge j; node n: the reducer */
    t.comb = mc_calloc((size_t)n + 1, sizeof *t.comb);
    t.in = mc_calloc(2 * (size_t)n + 1, sizeof *t.in);
    t.edge = mc_calloc(2 * (size_t)n + 1, sizeof *t.edge);
    int64_t *node_comb = mc_calloc((size_t)n + 1, sizeof *node_comb);
    int64_t *parent = mc_calloc((size_t)n, sizeof *parent);
    mc_status_t s = MC_OK;
    if (!t.comb || !t.in || !t.edge || !node_comb || !parent) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    int64_t reducer = g[n - 1].to;
    for (int64_t j = 0; j < n && !s; j++) {
        parent[j] = -1;
        node_comb[j] = -1;
        if (mc_piece_addend(p, g[j].from) < 0)
            s = bad(fi, "holds no addend", g[j].from);
        else if (g[j].from == reducer || g[j].from == g[j].to)
            s = bad(fi, "goes nowhere", g[j].from);
        for (int64_t k = 0; k < j && !s; k++)
            if (g[k].from == g[j].from)
                s = bad(fi, "is its second", g[j].from);
            else if (g[k].to == g[j].from)
                parent[k] = j; /* edge k feeds X = g[j].from, which sends after */
        if (s)
            break;
        if (g[j].to == reducer)
            parent[j] = n;
    }
    for (int64_t j = 0; j < n && !s; j++)
        if (parent[j] < 0)
            s = bad(fi, "goes to a device that sends no partial before it", g[j].from);
    if (s)
        goto out;
    /* combiners in the order of their edge out (children first), the reducer last */
    node_comb[n] = -1;
    for (int64_t x = 0; x <= n && !s; x++) {
        int64_t nin = 0, dev = x < n ? g[x].from : reducer;
        for (int64_t j = 0; j < n; j++)
            nin += parent[j] == x;
        if (nin == 0)
            continue;
        mc_combiner_t *c = &t.comb[t.ncomb];
        int64_t own = mc_piece_addend(p, dev);
        *c = (mc_combiner_t){.device = dev,
                             .out_edge = x < n ? x : -1,
                             .in0 = t.nin,
                             .least = own >= 0 ? own : INT64_MAX};
        if (own >= 0) {
            t.edge[t.nin] = -1;
            t.in[t.nin++] = own;
        }
        for (int64_t j = 0; j < n; j++) {
            if (parent[j] != x)
                continue;
            int64_t v = node_comb[j] >= 0 ? -node_comb[j] - 1 : mc_piece_addend(p, g[j].from);
            t.edge[t.nin] = j;
            t.in[t.nin++] = v;
            if (least(&t, v) < c->least)
                c->least = least(&t, v);
        }
        c->nin = t.nin - c->in0;
        sort_inputs(&t, c);
        node_comb[x] = t.ncomb++;
    }
    /* every addend exactly once under the reducer */
    int64_t k = plan->pieces->naddends, got = 0;
    char *seen = mc_calloc((size_t)k, 1);
    if (!seen) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    for (int64_t i = 0; i < t.nin && !s; i++) {
        int64_t a = t.in[i];
        if (a < 0)
            continue;
        if (a >= k || seen[a])
            s = mc_error(MC_ERR_INVALID, "flow %lld: addend %lld is combined twice", (long long)fi,
                         (long long)a);
        else
            seen[a] = 1, got++;
    }
    free(seen);
    if (!s && got != k)
        s = mc_error(MC_ERR_INVALID, "flow %lld: reducer %lld combines %lld of %lld addends",
                     (long long)fi, (long long)reducer, (long long)got, (long long)k);
    /* avg divides once, by the number of addends, at the one combine */
    if (!s && t.ncomb > 1 && plan->pieces->op == MC_REDUCE_AVG)
        s = mc_error(MC_ERR_INVALID, "flow %lld: avg is combined at the reducer only",
                     (long long)fi);
out:
    free(node_comb);
    free(parent);
    if (s)
        mc_reduce_tree_free(&t);
    else
        *out = t;
    return s;
}
