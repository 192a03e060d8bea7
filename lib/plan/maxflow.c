/* Dinic's algorithm with an epsilon for real-valued capacities. */
#include <stdlib.h>
#include "maxflow.h"
#include "util/util.h"

typedef struct {
    int64_t to, next;
    double cap;
} arc_t;

struct mc_maxflow {
    int64_t nodes, narcs, max_arcs;
    arc_t *arcs;
    int64_t *head, *level, *iter, *queue;
    double eps;
};

mc_status_t mc_maxflow_create(int64_t nodes, int64_t max_arcs, mc_maxflow_t **out)
{
    mc_maxflow_t *g = mc_calloc(1, sizeof *g);
    if (!g)
        return MC_ERR_NOMEM;
    g->nodes = nodes;
    g->max_arcs = 2 * max_arcs;
    g->arcs = mc_calloc((size_t)g->max_arcs, sizeof *g->arcs);
    g->head = mc_calloc((size_t)nodes, sizeof *g->head);
    g->level = mc_calloc((size_t)nodes, sizeof *g->level);
    g->iter = mc_calloc((size_t)nodes, sizeof *g->iter);
    g->queue = mc_calloc((size_t)nodes, sizeof *g->queue);
    if (!g->arcs || !g->head || !g->level || !g->iter || !g->queue) {
        mc_maxflow_destroy(g);
        return MC_ERR_NOMEM;
    }
    for (int64_t v = 0; v < nodes; v++)
        g->head[v] = -1;
    *out = g;
    return MC_OK;
}

void mc_maxflow_destroy(mc_maxflow_t *g)
{
    if (!g)
        return;
    free(g->arcs);
    free(g->head);
    free(g->level);
    free(g->iter);
    free(g->queue);
    free(g);
}

mc_status_t mc_maxflow_arc(mc_maxflow_t *g, int64_t from, int64_t to, double capacity)
{
    if (g->narcs + 2 > g->max_arcs)
        return mc_error(MC_ERR_INTERNAL, "max-flow graph: too many arcs");
    g->arcs[g->narcs] = (arc_t){to, g->head[from], capacity};
    g->head[from] = g->narcs++;
    g->arcs[g->narcs] = (arc_t){from, g->head[to], 0};
    g->head[to] = g->narcs++;
    if (capacity * 1e-12 > g->eps && capacity < 1e300)
        g->eps = capacity * 1e-12;
    return MC_OK;
}

static int bfs(mc_maxflow_t *g, int64_t s, int64_t t)
{
    int64_t qh = 0, qt = 0;
    for (int64_t v = 0; v < g->nodes; v++)
        g->level[v] = -1;
    g->level[s] = 0;
    g->queue[qt++] = s;
    while (qh < qt) {
        int64_t v = g->queue[qh++];
        for (int64_t a = g->head[v]; a >= 0; a = g->arcs[a].next)
            if (g->arcs[a].cap > g->eps && g->level[g->arcs[a].to] < 0) {
                g->level[g->arcs[a].to] = g->level[v] + 1;
                g->queue[qt++] = g->arcs[a].to;
            }
    }
    return g->level[t] >= 0;
}

/* Augmenting path search in the level graph; depth is bounded by the number of levels,
 * which is at most 4 in the bound's graphs. */
static double dfs(mc_maxflow_t *g, int64_t v, int64_t t, double pushed)
{
    if (v == t)
        return pushed;
    for (; g->iter[v] >= 0; g->iter[v] = g->arcs[g->iter[v]].next) {
        arc_t *a = &g->arcs[g->iter[v]];
        if (a->cap <= g->eps || g->level[a->to] != g->level[v] + 1)
            continue;
        double d = dfs(g, a->to, t, pushed < a->cap ? pushed : a->cap);
        if (d > g->eps) {
            a->cap -= d;
            g->arcs[g->iter[v] ^ 1].cap += d;
            return d;
        }
    }
    return 0;
}

mc_status_t mc_maxflow_run(mc_maxflow_t *g, int64_t s, int64_t t, double *flow)
{
    double total = 0;
    while (bfs(g, s, t)) {
        for (int64_t v = 0; v < g->nodes; v++)
            g->iter[v] = g->head[v];
        double d;
        while ((d = dfs(g, s, t, 1e308)) > g->eps)
            total += d;
    }
    bfs(g, s, t); /* leaves level[] = residual reachability from s */
    *flow = total;
    return MC_OK;
}

int mc_maxflow_source_side(const mc_maxflow_t *g, int64_t v)
{
    return g->level[v] >= 0;
}
