/* NIC split: direct sends in which every needer takes a share of each piece that its own
 * host holds over the NIC, from a holder on another host (docs/planning.md, the meshcast
 * row). An all-to-all inside every host whose data other hosts hold too (RS1R -> RRS1 on
 * 25 x 8 devices) runs on the device ports alone, while the NICs idle; a NIC transfer holds
 * the hosts' NICs and no device port, so moving the fraction f of these bytes onto the NIC
 * shortens the busiest device port until the NIC is as busy: the water level below.
 *
 * One flow per piece keeps the simulator's port queues short (a stripe per holder, as the
 * multi-path candidate cuts, simulates 2x slower on such cases): each piece is cut in two
 * boxes, the first (1 - f) taken from a local holder as in direct sends, the last f from
 * the holder host with the least NIC egress so far; or, as a second candidate with a port per
 * NIC, that last share in parts, each from another holder (NIC_SHARE_BYTES). */
#include <math.h>
#include <stdlib.h>
#include "strategy_common.h"
#include "util/util.h"

/* Slabs a piece is cut into before f is rounded to a whole number of them. */
#define SPLIT_SLABS 64
/* With a port per NIC, the NIC share of a piece in parts of about this size, each from the
 * remote holder whose NIC the α–β model sees free first: one holder's NIC (50 GB/s on the
 * -rails profiles) sending a needer's whole share took 42 us for 2 MB, and a holder that two
 * needers picked twice that (g0034 of seed 11 on dgx-h100-rails: 1.664 of the bound). */
#define NIC_SHARE_BYTES (256 << 10)
/* ... for a share of at most this many bytes: larger ones, cut so, queued up at the needers'
 * NICs in whole-message parts (g0206 of seed 2 on dgx-h100-rails, 100 MB shares: 1.069 of the
 * bound in one part each, 1.100 in 256 KiB parts, 1.121 in a part per holder host) */
#define NIC_SHARE_MOST (4 << 20)

typedef struct {
    double *in_fix, *in_split;   /* per device: intra bytes in, fixed / movable to the NIC */
    double *nic_dev;             /* per device: NIC bytes in, fixed (a port per NIC only) */
    double *out_fix, *out_split; /* per device: intra bytes out */
    double *nic_in, *nic_out;    /* per host: NIC bytes, fixed */
    double *in_host, *out_host;  /* per host: movable bytes, in / out if moved */
} water_t;

/* Modelled time of the busiest port when the fraction f of the movable bytes crosses NICs,
 * with its link's latency (the last byte through it still travels): a small piece's NIC
 * share then stays small (g0038 of the scale benchmark, seed 2: one device takes 4.6 MB from
 * a host mate, 13.2 us; the bandwidths' balance moves 47% onto the NIC, 15.4 us, the
 * latencies' 15%, 11.7 us). Each term is linear in f plus a constant: the maximum stays
 * convex. */
static double water_time(const water_t *w, int64_t ndev, int64_t nhost, double f, double bi,
                         double bn_in, double bn_out, double bn_port, double a_intra, double a_nic)
{
    double t = 0;
    for (int64_t d = 0; d < ndev; d++) {
        /* with a port per NIC a needer's NIC share enters through its own NIC */
        if (bn_port > 0 && w->nic_dev[d] + w->in_split[d] > 0)
            t = fmax(t, (w->nic_dev[d] + f * w->in_split[d]) / bn_port + a_nic);
        if (w->in_fix[d] + w->in_split[d] > 0)
            t = fmax(t, (w->in_fix[d] + (1 - f) * w->in_split[d]) / bi + a_intra);
        if (w->out_fix[d] + w->out_split[d] > 0)
            t = fmax(t, (w->out_fix[d] + (1 - f) * w->out_split[d]) / bi + a_intra);
    }
    for (int64_t h = 0; h < nhost; h++) {
        if (w->nic_in[h] + w->in_host[h] > 0)
            t = fmax(t, (w->nic_in[h] + f * w->in_host[h]) / bn_in + a_nic);
        if (w->nic_out[h] + w->out_host[h] > 0)
            t = fmax(t, (w->nic_out[h] + f * w->out_host[h]) / bn_out + a_nic);
    }
    return t;
}

/* The fraction of the movable bytes that balances the device ports against the NICs: the
 * busiest port's time is a maximum of linear functions of f, so convex; ternary search.
 * Loads are what direct sends would put on each port, a local delivery spread over the
 * local holders and a moved one over the other holder hosts. With slack_in and slack_out
 * (per device, or NULL): the bytes each device port could still take at that level, within
 * the busiest port's time (what PXN hops may use: nic_sender). */
static mc_status_t water_level(const mc_plan_t *plan, double *level, double *slack_in,
                               double *slack_out)
{
    const mc_pieces_t *ps = plan->pieces;
    const mc_topology_t *topo = plan->topo;
    int64_t ndev = mc_topology_devices(topo), nhost = mc_topology_hosts(topo), most = 1;
    for (int64_t i = 0; i < ps->npieces; i++)
        if (ps->pieces[i].nholders > most)
            most = ps->pieces[i].nholders;
    double *mem = mc_calloc((size_t)(5 * ndev + 4 * nhost), sizeof *mem);
    mc_host_run_t *runs = mc_calloc((size_t)most, sizeof *runs);
    if (!mem || !runs) {
        free(mem);
        free(runs);
        return MC_ERR_NOMEM;
    }
    water_t w = {mem,
                 mem + ndev,
                 mem + 4 * ndev + 4 * nhost,
                 mem + 2 * ndev,
                 mem + 3 * ndev,
                 mem + 4 * ndev,
                 mem + 4 * ndev + nhost,
                 mem + 4 * ndev + 2 * nhost,
                 mem + 4 * ndev + 3 * nhost};
    double movable = 0;
    for (int64_t i = 0; i < ps->npieces; i++) {
        const mc_piece_t *p = &ps->pieces[i];
        double b = (double)p->bytes;
        int nh = mc_group_by_host(topo, p->holders, p->nholders, runs);
        for (int j = 0; j < p->nneeders; j++) {
            int64_t n = p->needers[j], hn = mc_topology_host_of(topo, n);
            const mc_host_run_t *run = mc_find_run(runs, nh, hn);
            if (!run) { /* from another host in any case */
                w.nic_in[hn] += b;
                w.nic_dev[n] += b;
                for (int r = 0; r < nh; r++)
                    w.nic_out[runs[r].host] += b / nh;
                continue;
            }
            double *in = nh > 1 ? w.in_split : w.in_fix, *out = nh > 1 ? w.out_split : w.out_fix;
            in[n] += b;
            for (int k = 0; k < run->count; k++)
                out[p->holders[run->first + k]] += b / run->count;
            if (nh < 2)
                continue;
            movable += b;
            w.in_host[hn] += b;
            for (int r = 0; r < nh; r++)
                if (runs[r].host != hn)
                    w.out_host[runs[r].host] += b / (nh - 1);
        }
    }
    double bi = mc_topology_link(topo, MC_LINK_INTRA).bandwidth;
    double bn_in = mc_topology_nic_in(topo), bn_out = mc_topology_nic_out(topo);
    double bn_port =
        mc_topology_nic_ports(topo) > 1 ? 1 / mc_topology_nic_port_seconds_per_byte(topo) : 0;
    double ai = mc_topology_link(topo, MC_LINK_INTRA).latency;
    double an = mc_topology_link(topo, MC_LINK_NIC).latency;
    double lo = 0, hi = 1;
    for (int it = 0; it < 40 && movable > 0; it++) {
        double a = lo + (hi - lo) / 3, c = hi - (hi - lo) / 3;
        if (water_time(&w, ndev, nhost, a, bi, bn_in, bn_out, bn_port, ai, an) <=
            water_time(&w, ndev, nhost, c, bi, bn_in, bn_out, bn_port, ai, an))
            hi = c;
        else
            lo = a;
    }
    *level = movable > 0 ? (lo + hi) / 2 : 0;
    double t = water_time(&w, ndev, nhost, *level, bi, bn_in, bn_out, bn_port, ai, an);
    for (int64_t d = 0; slack_in && d < ndev; d++) {
        slack_in[d] = (t - ai) * bi - w.in_fix[d] - (1 - *level) * w.in_split[d];
        slack_out[d] = (t - ai) * bi - w.out_fix[d] - (1 - *level) * w.out_split[d];
    }
    free(mem);
    free(runs);
    return MC_OK;
}

/* A NIC split build's state: its loads so far, and with a port per NIC each host's device
 * on each port and the flow each device last relayed (PXN hops, once per flow). */
typedef struct {
    mc_plan_t *plan;
    mc_loads_t loads;
    mc_host_run_t *runs;
    mc_box_t *slabs;
    int64_t *on_nic, *relayed;
    double *slack_in, *slack_out; /* per device: bytes its ports can still take (water_level) */
} split_t;

/* The sender of a byte range of piece p to needer n over the NIC: the least-loaded holder of
 * the holder host (other than skip) with the least NIC egress so far. */
static int64_t remote_holder(const split_t *x, const mc_piece_t *p, int nh, int64_t skip)
{
    const mc_host_run_t *far = NULL;
    for (int r = 0; r < nh; r++)
        if (x->runs[r].host != skip &&
            (!far || x->loads.host_send[x->runs[r].host] < x->loads.host_send[far->host]))
            far = &x->runs[r];
    return mc_least_loaded(p->holders + far->first, far->count, x->loads.dev_nic_send);
}

/* With a port per NIC, the sender of `bytes` of piece p to needer n over the NIC, from a
 * holder host other than skip: the device of such a host whose NIC the α–β model sees
 * deliver first (its NIC's bytes so far over the per-NIC rate, plus the spine's extra
 * latency to n), a device that does not hold p reached first over the host's links from the
 * host's least-loaded holder (α_intra and the bytes over the port, the hop's edge added):
 * PXN, as NCCL's. A holder's own NIC alone sent every share of a stripe that one device per
 * host holds through one port while its mates' NICs idled (g0098 of seed 3 on
 * dgx-h100-rails, an RS1 -> RS01 inside each of 3 hosts: 1.666 of the bound). Host egress
 * balanced over hosts can likewise pile a host's shares onto one of its NICs (g0193 of seed
 * 102). A hop only where the relay's in-port and the holder's out-port have room for it
 * within the water level's time: in an all-to-all inside the hosts every in-port is that
 * busy, and hops into them made the plan slower than the holders' own NICs (g0124 of seed 3,
 * 1.006 -> 1.110). A device that needs p is no relay: it would get those bytes twice. */
static mc_status_t nic_sender(split_t *x, const mc_piece_t *p, int nh, int64_t skip, int64_t n,
                              double bytes, int64_t *out)
{
    const mc_topology_t *topo = x->plan->topo;
    double inv = mc_topology_nic_port_seconds_per_byte(topo), best_t = INFINITY;
    double hop = mc_pxn_hop(topo, bytes);
    int64_t ports = mc_topology_nic_ports(topo), feed = -1;
    *out = -1;
    for (int r = 0; r < nh; r++) {
        const mc_host_run_t *run = &x->runs[r];
        if (run->host == skip)
            continue;
        int64_t holder = mc_least_loaded(p->holders + run->first, run->count, x->loads.dev_send);
        /* the holder on its own NIC where it is not its port's first device (devices that
         * share a NIC port), which the loop below would reach only through a hop to a mate */
        int64_t port = mc_topology_nic_port(topo, holder);
        double own = x->loads.nic_send[port] * inv + mc_topology_nic_extra_latency(topo, holder, n);
        if (x->on_nic[port] != holder && own < best_t) {
            best_t = own;
            *out = holder;
            feed = -1;
        }
        for (int64_t k = 0; k < ports; k++) {
            int64_t d = x->on_nic[run->host * ports + k];
            if (d < 0 || (d != holder && mc_piece_needs(p, d)))
                continue;
            int holds = d == holder || mc_piece_holds(p, d);
            if (!holds && (x->slack_in[d] < bytes || x->slack_out[holder] < bytes))
                continue;
            double t = x->loads.nic_send[mc_topology_nic_port(topo, d)] * inv +
                       mc_topology_nic_extra_latency(topo, d, n) + (holds ? 0 : hop);
            if (t < best_t) {
                best_t = t;
                *out = d;
                feed = holds ? -1 : holder;
            }
        }
    }
    if (feed < 0 || x->relayed[*out] == x->plan->nflows)
        return MC_OK;
    x->relayed[*out] = x->plan->nflows;
    x->slack_in[*out] -= bytes;
    x->slack_out[feed] -= bytes;
    mc_loads_add(&x->loads, topo, feed, *out, bytes);
    return mc_plan_add_edge(x->plan, feed, *out);
}

/* The sender of bytes of p to needer n over the NIC, from a holder host other than skip. */
static mc_status_t remote_sender(split_t *x, const mc_piece_t *p, int nh, int64_t skip, int64_t n,
                                 double bytes, int64_t *out)
{
    if (mc_topology_nic_ports(x->plan->topo) > 1)
        return nic_sender(x, p, nh, skip, n, bytes, out);
    *out = remote_holder(x, p, nh, skip);
    return MC_OK;
}

/* One piece: a flow for the local share and, when some needer's host holds the piece and
 * another host does too, a flow for the NIC share (the last slabs of the piece's box), or
 * with a port per NIC a flow per NIC_SHARE_BYTES of it. */
static mc_status_t split_piece(split_t *x, int64_t i, double level, int in_parts, int *cut)
{
    mc_plan_t *plan = x->plan;
    mc_host_run_t *runs = x->runs;
    mc_box_t *slabs = x->slabs;
    const mc_piece_t *p = &plan->pieces->pieces[i];
    const mc_topology_t *topo = plan->topo;
    int ndim = plan->pieces->ndim;
    int nh = mc_group_by_host(topo, p->holders, p->nholders, runs);
    int k = mc_box_split(&p->box, ndim, SPLIT_SLABS, slabs);
    int moved = nh > 1 ? (int)lround(level * k) : 0;
    if (moved >= k)
        moved = k - 1;
    /* parts: [first slab, end slab) per flow; the local share first, then the NIC share's */
    int64_t slab_bytes = p->bytes / k, parts = 1;
    if (in_parts && moved && mc_topology_nic_ports(topo) > 1 &&
        moved * slab_bytes <= NIC_SHARE_MOST)
        parts = (moved * slab_bytes + NIC_SHARE_BYTES - 1) / NIC_SHARE_BYTES;
    parts = parts < 1 ? 1 : parts > moved ? moved : parts;
    *cut |= parts > 1;
    mc_status_t s = MC_OK;
    for (int64_t f = 0; f < (moved ? 1 + parts : 1) && !s; f++) {
        int lo = f == 0 ? 0 : k - moved + (int)((f - 1) * moved / parts);
        int hi = f == 0 ? k - moved : k - moved + (int)(f * moved / parts);
        mc_box_t part = slabs[lo];
        for (int d = 0; d < ndim; d++) /* slabs cut one dim: join their ranges */
            part.hi[d] = slabs[hi - 1].hi[d];
        double bytes = (double)(mc_box_volume(&part, ndim) * plan->pieces->elem_size);
        s = mc_plan_add_flow(plan, i, moved ? &part : &p->box);
        for (int j = 0; j < p->nneeders && !s; j++) {
            int64_t n = p->needers[j], hn = mc_topology_host_of(topo, n), from;
            const mc_host_run_t *run = mc_find_run(runs, nh, hn);
            if (run && f == 0)
                from = mc_least_loaded(p->holders + run->first, run->count, x->loads.dev_send);
            else
                s = remote_sender(x, p, nh, run ? hn : -1, n, bytes, &from);
            mc_loads_add(&x->loads, topo, from, n, bytes);
            if (!s)
                s = mc_plan_add_edge(plan, from, n);
        }
    }
    return s;
}

/* Frees x's arrays (each may be NULL). */
static void split_free(split_t *x)
{
    free(x->runs);
    free(x->slabs);
    free(x->on_nic);
    free(x->relayed);
    free(x->slack_in);
    mc_loads_destroy(&x->loads);
}

mc_status_t mc_strategy_nic_split(mc_plan_t *plan, int parts, int *built)
{
    const mc_pieces_t *ps = plan->pieces;
    double level = 0;
    int64_t *by_size = NULL, ndev = mc_topology_devices(plan->topo);
    int pxn = mc_topology_nic_ports(plan->topo) > 1, cut = 0;
    split_t x = {.plan = plan};
    *built = 0;
    if (pxn) {
        x.on_nic = mc_devices_on_nics(plan->topo);
        x.relayed = mc_calloc((size_t)ndev, sizeof *x.relayed);
        x.slack_in = mc_calloc((size_t)(2 * ndev), sizeof *x.slack_in);
        x.slack_out = x.slack_in ? x.slack_in + ndev : NULL;
    }
    x.runs = mc_calloc((size_t)mc_pieces_most_devices(ps), sizeof *x.runs);
    x.slabs = mc_calloc(SPLIT_SLABS, sizeof *x.slabs);
    mc_status_t s = !x.runs || !x.slabs || (pxn && (!x.on_nic || !x.relayed || !x.slack_in))
                        ? MC_ERR_NOMEM
                        : water_level(plan, &level, x.slack_in, x.slack_out);
    if (s || level * SPLIT_SLABS < 0.5) { /* nothing worth moving: direct sends already */
        split_free(&x);
        return s;
    }
    if (!(s = mc_loads_create(plan->topo, &x.loads)))
        s = mc_pieces_by_size(ps, &by_size);
    for (int64_t k = 0; k < ps->npieces && !s; k++)
        if (ps->pieces[by_size[k]].nneeders > 0)
            s = split_piece(&x, by_size[k], level, parts, &cut);
    if (!s)
        s = mc_plan_order_rounds(plan);
    *built = !s && (!parts || cut);
    free(by_size);
    split_free(&x);
    return s;
}
