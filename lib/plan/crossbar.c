/* The crossbar rule (docs/planning.md, "Crossbar"): a host-to-host transfer runs at E times
 * the NIC rate when its sender's host sends to two or more other hosts in the plan and its
 * receiver's host receives from two or more. Measured on the testbed (docs/testbed.md): such
 * a crossbar of hosts, with the NICs at both ends saturated, finishes 5-20% later over UCX
 * than disjoint host pairs moving the same bytes per NIC, with no loss under bbr, while two
 * hosts feeding one (one saturated end) run at the NIC rate. A plan knows hosts, not ranks,
 * so the rule is stated for hosts. */
#include <stdlib.h>
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

/* Per host: the first other host seen, and whether a second one was. */
typedef struct {
    int64_t first_to, first_from;
    char many_to, many_from;
} peers_t;

static void add_peer(int64_t *first, char *many, int64_t host)
{
    if (*first < 0)
        *first = host;
    else if (*first != host)
        *many = 1;
}

mc_status_t mc_crossbar_edges(const mc_plan_t *plan, char **slow)
{
    const mc_topology_t *topo = plan->topo;
    *slow = NULL;
    if (!(topo->crossbar_eff > 0 && topo->crossbar_eff < 1) || plan->nedges == 0)
        return MC_OK; /* off: no line, or E = 1 */
    int64_t nhost = mc_topology_hosts(topo);
    peers_t *p = mc_calloc((size_t)nhost, sizeof *p);
    char *s = mc_calloc((size_t)plan->nedges, 1);
    if (!p || !s) {
        free(p);
        free(s);
        return MC_ERR_NOMEM;
    }
    for (int64_t h = 0; h < nhost; h++)
        p[h].first_to = p[h].first_from = -1;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t g = 0; g < plan->nedges; g++) {
            const mc_edge_t *e = &plan->edges[g];
            if (mc_edge_class(topo, e->from, e->to) != MC_LINK_NIC)
                continue;
            int64_t a = mc_topology_host_of(topo, e->from), b = mc_topology_host_of(topo, e->to);
            if (pass == 0) {
                add_peer(&p[a].first_to, &p[a].many_to, b);
                add_peer(&p[b].first_from, &p[b].many_from, a);
            } else {
                s[g] = p[a].many_to && p[b].many_from;
            }
        }
    free(p);
    *slow = s;
    return MC_OK;
}
