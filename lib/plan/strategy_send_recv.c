/* send_recv: every needer receives every piece straight from one holder — a holder in its
 * own host when there is one, else the least-loaded holder by bytes sent (Alpa's "normal"
 * sender choice, charged with the piece's bytes, not the whole source tile). */
#include <stdlib.h>
#include "strategy_common.h"
#include "util/util.h"

mc_status_t mc_strategy_send_recv(mc_plan_t *plan)
{
    const mc_pieces_t *ps = plan->pieces;
    mc_loads_t loads;
    mc_status_t s = mc_loads_create(plan->topo, &loads);
    if (s)
        return s;
    for (int64_t i = 0; i < ps->npieces && !s; i++) {
        const mc_piece_t *p = &ps->pieces[i];
        if (p->nneeders == 0)
            continue;
        mc_host_run_t *runs = mc_calloc((size_t)p->nholders, sizeof *runs);
        if (!runs) {
            s = MC_ERR_NOMEM;
            break;
        }
        int nruns = mc_group_by_host(plan->topo, p->holders, p->nholders, runs);
        s = mc_plan_add_flow(plan, i, &p->box);
        for (int j = 0; j < p->nneeders && !s; j++) {
            int64_t n = p->needers[j];
            const mc_host_run_t *local = mc_find_run(runs, nruns, mc_host_of(plan->topo, n));
            int64_t from =
                local ? mc_least_loaded(p->holders + local->first, local->count, loads.dev_send)
                      : mc_least_loaded(p->holders, p->nholders, loads.dev_send);
            mc_loads_add(&loads, plan->topo, from, n, (double)p->bytes);
            s = mc_plan_add_edge(plan, from, n);
        }
        free(runs);
    }
    mc_loads_destroy(&loads);
    return s;
}
