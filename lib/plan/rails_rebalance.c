/* Rail crossings rebalanced over the NICs (docs/planning.md, "Rail rebalancing").
 *
 * A rail-stripe build sends each crossing on the NIC whose bytes so far, plus the hops it
 * needs over the host's links, end it first. Chosen one at a time, early crossings take the
 * NICs of their own rail and later ones, finding those loaded, go around: where a host's
 * bytes are all needed on other rails, one device's stripes went to another rail's NIC
 * (a hop before the crossing) while that rail's device's own went to the first device's NIC
 * (a hop before and after), the same loads as the other way round with twice the hops.
 * Here each crossing looks again with every crossing's bytes known, and moves to the NIC that
 * ends it sooner, until none moves (or a few passes); the moves count only where they bring
 * the latest crossing's end measurably sooner. */
#include <math.h>
#include "strategy_common.h"
#include "topology/topology_internal.h"

/* Most passes over the crossings (each moves a crossing only when that ends it sooner, yet
 * two crossings can trade places back and forth). */
#define REBALANCE_PASSES 8
/* The least gain worth a plan of its own: the latest crossing's end at least this share
 * sooner (a plan built again and judged costs about what the rails plan did). On seeds 1-2 of
 * dgx-h100-rails the plans it made faster gained 10-18% there, while where the NICs' bytes
 * dwarf the hops moves gained 0.2-2.7% and no plan did (seed 1's g0032: 1.4%, 70 ms). */
#define REBALANCE_GAIN 0.05

/* When crossing x ends on NIC n of its hosts, whose ports carry send and recv seconds of
 * bytes (x's own included): the later of the two, after the hop before it, and the hop after. */
static double end_on(const mc_rail_crossing_t *x, int n, double send, double recv, double hop)
{
    double before = (x->hop_send >> n) & 1 ? hop : 0, after = (x->hop_recv >> n) & 1 ? hop : 0;
    return fmax(send + before, recv) + after;
}

/* The latest end of crossings xs[0..n) on their NICs. */
static double latest(const mc_topology_t *topo, const mc_rail_crossing_t *xs, int64_t n,
                     const double *nic_send, const double *nic_recv)
{
    int64_t ports = mc_topology_nic_ports(topo);
    double inv = mc_topology_nic_port_seconds_per_byte(topo), t = 0;
    for (int64_t i = 0; i < n; i++) {
        const mc_rail_crossing_t *x = &xs[i];
        t = fmax(t,
                 end_on(x, x->nic, nic_send[x->from_host * ports + x->nic] * inv,
                        nic_recv[x->to_host * ports + x->nic] * inv, mc_pxn_hop(topo, x->bytes)));
    }
    return t;
}

int64_t mc_rails_rebalance(const mc_topology_t *topo, mc_rail_crossing_t *xs, int64_t n,
                           double *nic_send, double *nic_recv)
{
    int64_t ports = mc_topology_nic_ports(topo), moved = 0;
    double inv = mc_topology_nic_port_seconds_per_byte(topo);
    double before = latest(topo, xs, n, nic_send, nic_recv);
    for (int pass = 0; pass < REBALANCE_PASSES; pass++) {
        int64_t moves = 0;
        for (int64_t i = 0; i < n; i++) {
            mc_rail_crossing_t *x = &xs[i];
            double hop = mc_pxn_hop(topo, x->bytes);
            double *send = nic_send + x->from_host * ports, *recv = nic_recv + x->to_host * ports;
            double best = end_on(x, x->nic, send[x->nic] * inv, recv[x->nic] * inv, hop);
            int to = x->nic;
            for (int k = 0; k < ports && k < 64; k++) {
                if (k == x->nic || !((x->usable >> k) & 1))
                    continue;
                double t =
                    end_on(x, k, (send[k] + x->bytes) * inv, (recv[k] + x->bytes) * inv, hop);
                if (t < best * (1 - 1e-9)) {
                    best = t;
                    to = k;
                }
            }
            if (to == x->nic)
                continue;
            send[x->nic] -= x->bytes;
            recv[x->nic] -= x->bytes;
            send[to] += x->bytes;
            recv[to] += x->bytes;
            x->nic = to;
            moves++;
        }
        moved += moves;
        if (!moves)
            break;
    }
    return latest(topo, xs, n, nic_send, nic_recv) <= (1 - REBALANCE_GAIN) * before ? moved : 0;
}
