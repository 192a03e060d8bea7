/* Dinic's max-flow on real capacities, for the lower bound's max-closure problem. */
#ifndef MC_MAXFLOW_H
#define MC_MAXFLOW_H

#include <stdint.h>
#include "meshcast/status.h"

typedef struct mc_maxflow mc_maxflow_t;

mc_status_t mc_maxflow_create(int64_t nodes, int64_t max_arcs, mc_maxflow_t **out);
void mc_maxflow_destroy(mc_maxflow_t *g);
mc_status_t mc_maxflow_arc(mc_maxflow_t *g, int64_t from, int64_t to, double capacity);
/* Max flow from s to t; afterwards mc_maxflow_source_side(g, v) tells whether v is reachable
 * from s in the residual graph (the source side of a minimum cut). */
mc_status_t mc_maxflow_run(mc_maxflow_t *g, int64_t s, int64_t t, double *flow);
int mc_maxflow_source_side(const mc_maxflow_t *g, int64_t v);

#endif
