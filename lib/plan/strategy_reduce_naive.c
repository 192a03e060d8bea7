/* reduce_naive: the baseline reduction. Each piece is reduced at one device (a needer that
 * holds an addend when there is one, so that its own addend needs no transfer; else the
 * least-loaded holder), which receives every other addend straight from one of its holders
 * (one in its own host if possible), combines them in addend order and sends the result to
 * every other needer. Whole pieces, no pipelining across devices beyond chunks. */
#include <stdlib.h>
#include "strategy_common.h"
#include "util/util.h"

/* The reducer of piece p: the least-loaded needer holding an addend, else holder. */
static int64_t pick_reducer(const mc_piece_t *p, const mc_loads_t *loads)
{
    int64_t best = -1;
    for (int j = 0; j < p->nneeders; j++)
        if (mc_piece_holds(p, p->needers[j]) &&
            (best < 0 || loads->dev_recv[p->needers[j]] < loads->dev_recv[best]))
            best = p->needers[j];
    return best >= 0 ? best : mc_least_loaded(p->holders, p->nholders, loads->dev_recv);
}

mc_status_t mc_strategy_reduce_naive(mc_plan_t *plan)
{
    const mc_pieces_t *ps = plan->pieces;
    mc_loads_t loads;
    mc_status_t s = mc_loads_create(plan->topo, &loads);
    for (int64_t i = 0; i < ps->npieces && !s; i++) {
        const mc_piece_t *p = &ps->pieces[i];
        if (p->nneeders == 0)
            continue;
        int64_t r = pick_reducer(p, &loads), own = mc_piece_addend(p, r);
        s = mc_plan_add_flow(plan, i, &p->box);
        for (int64_t a = 0; a < ps->naddends && !s; a++) {
            if (a == own)
                continue;
            int64_t from = mc_addend_sender(plan->topo, p, a, r, &loads);
            mc_loads_add(&loads, plan->topo, from, r, (double)p->bytes);
            s = mc_plan_add_gather(plan, from, r);
        }
        for (int j = 0; j < p->nneeders && !s; j++) {
            if (p->needers[j] == r)
                continue;
            mc_loads_add(&loads, plan->topo, r, p->needers[j], (double)p->bytes);
            s = mc_plan_add_edge(plan, r, p->needers[j]);
        }
    }
    mc_loads_destroy(&loads);
    return s;
}
