/* Plan statistics that follow from the flows alone: messages, bytes per link class, staging. */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

static int contains(const int64_t *ids, int n, int64_t id)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ids[lo] == id;
}

int mc_piece_needs(const mc_piece_t *p, int64_t device)
{
    return contains(p->needers, p->nneeders, device);
}

int mc_piece_holds(const mc_piece_t *p, int64_t device)
{
    return contains(p->holders, p->nholders, device);
}

int64_t mc_piece_addend(const mc_piece_t *p, int64_t device)
{
    int lo = 0, hi = p->nholders;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (p->holders[mid] < device)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == p->nholders || p->holders[lo] != device)
        return -1;
    return p->addends ? p->addends[lo] : 0;
}

int mc_flow_rooted_at(const mc_plan_t *plan, const mc_flow_t *f, int64_t device)
{
    const mc_piece_t *p = &plan->pieces->pieces[f->piece];
    return !p->addends && mc_piece_holds(p, device);
}

/* Staging per device: a relay that neither holds nor needs the flow keeps the whole box, a
 * combiner each gathered input (and its result, unless it is the reducer and needs it);
 * every send and receive also uses a double-buffered chunk (pack / unpack). */
mc_status_t mc_plan_count(mc_plan_t *plan)
{
    mc_plan_stats_t *st = &plan->stats;
    int64_t ndev = mc_topology_devices(plan->topo);
    int64_t *staging = mc_calloc((size_t)ndev, sizeof *staging);
    if (!staging)
        return MC_ERR_NOMEM;
    st->pieces = plan->pieces->npieces;
    st->flows = plan->nflows;
    for (int64_t i = 0; i < plan->pieces->npieces; i++) {
        const mc_piece_t *p = &plan->pieces->pieces[i];
        st->local_bytes += p->bytes * p->nself;
    }
    for (int64_t i = 0; i < plan->nflows; i++) {
        const mc_flow_t *f = &plan->flows[i];
        const mc_piece_t *p = &plan->pieces->pieces[f->piece];
        int64_t chunks = (f->bytes + f->chunk_bytes - 1) / f->chunk_bytes;
        /* a reducer that does not need the piece, and a host combiner, combine into a buffer
         * of their own */
        int64_t reducer = mc_flow_reducer(plan, f);
        if (f->ngather && !mc_piece_needs(p, reducer))
            staging[reducer] += f->bytes;
        for (int64_t j = 0; j < f->ngather; j++)
            for (int64_t k = 0; k < j; k++)
                if (plan->edges[f->edge0 + k].to == plan->edges[f->edge0 + j].from) {
                    staging[plan->edges[f->edge0 + j].from] += f->bytes;
                    break;
                }
        for (int64_t j = 0; j < f->nedges; j++) {
            const mc_edge_t *e = &plan->edges[f->edge0 + j];
            st->messages++;
            st->chunks += chunks;
            if (mc_edge_class(plan->topo, e->from, e->to) == MC_LINK_NIC)
                st->nic_bytes += f->bytes;
            else
                st->intra_host_bytes += f->bytes;
            int64_t c = 2 * (f->chunk_bytes < f->bytes ? f->chunk_bytes : f->bytes);
            staging[e->from] += c;
            staging[e->to] += c;
            /* a gathered addend waits for the combine in a buffer of its own */
            if (j < f->ngather || !mc_piece_needs(p, e->to))
                staging[e->to] += f->bytes;
        }
    }
    for (int64_t d = 0; d < ndev; d++)
        if (staging[d] > st->peak_staging_bytes)
            st->peak_staging_bytes = staging[d];
    free(staging);
    return MC_OK;
}
