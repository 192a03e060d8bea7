/* Helpers shared by the strategies: devices grouped by host, load-balanced choices. */
#ifndef MC_STRATEGY_COMMON_H
#define MC_STRATEGY_COMMON_H

#include "plan_internal.h"

typedef struct {
    int64_t host;
    int first, count; /* a run of a host-sorted device array */
} mc_host_run_t;

/* Splits an ascending device list into runs of one host each; returns the number of runs.
 * out must have room for n runs. */
int mc_group_by_host(const mc_topology_t *topo, const int64_t *devs, int n, mc_host_run_t *out);

/* The device of devs[0..n) with the least load (ties: lowest id). */
int64_t mc_least_loaded(const int64_t *devs, int n, const double *load);
/* The same, ties broken by the least tie[d] (then the first). */
int64_t mc_least_loaded_tie(const int64_t *devs, int n, const double *load, const double *tie);

/* Run of host h in runs, or NULL. */
const mc_host_run_t *mc_find_run(const mc_host_run_t *runs, int nruns, int64_t host);

/* Per-device and per-host byte loads, zeroed. */
typedef struct {
    double *dev_send, *dev_recv;         /* all bytes a device sends / receives */
    double *dev_nic_send, *dev_nic_recv; /* the part that crosses hosts */
    double *host_send, *host_recv;       /* bytes through each host's NIC */
    double *nic_send, *nic_recv;         /* per cost-model NIC port (mc_topology_nic_port):
                                            the host's, or with NIC affinity each NIC's */
} mc_loads_t;

/* The sender of a crossing to device to whose copy the α–β model sees leave first: its NIC
 * port's bytes sent so far over the per-NIC rate, plus the NIC latency once more when it
 * is on another rail than to (then on its own NIC bytes). best is the first candidate
 * (from devs or elsewhere); returns it or a device of devs that beats it. */
int64_t mc_least_nic_sender(const mc_topology_t *topo, const mc_loads_t *loads, const int64_t *devs,
                            int n, int64_t best, int64_t to);
/* The same over the holders of p (grouped by host in runs[0..nruns)) on every host but skip:
 * the first such holder or one that beats it; -1 when no other host holds p. */
int64_t mc_least_nic_holder(const mc_topology_t *topo, const mc_loads_t *loads, const mc_piece_t *p,
                            const mc_host_run_t *runs, int nruns, int64_t skip, int64_t to);
mc_status_t mc_loads_create(const mc_topology_t *topo, mc_loads_t *out);
void mc_loads_destroy(mc_loads_t *loads);
/* Adds bytes of an edge to the loads. */
void mc_loads_add(mc_loads_t *loads, const mc_topology_t *topo, int64_t from, int64_t to,
                  double bytes);

/* Fan-out inside a host from first (one of needers[0..count), already holding bytes) to the
 * others: the k-ary tree (k = 1 a chain, k = count - 1 a star) the α–β model finds fastest.
 * Adds the edges to the plan's last flow and the loads. */
mc_status_t mc_fan_out_in_host(mc_plan_t *plan, mc_loads_t *loads, const int64_t *needers,
                               int count, int64_t first, double bytes);
/* The same where the stripe takes arrive seconds to come in (mc_fan_out_in_host: its bytes
 * at the host's NIC rate; less fast where several stripes share the NIC at once). */
mc_status_t mc_fan_out_paced(mc_plan_t *plan, mc_loads_t *loads, const int64_t *needers, int count,
                             int64_t first, double bytes, double arrive);
/* The same as a star: `first` sends the stripe to every other needer of the run (the
 * scatter-star policy's all-gather inside a host: each entry forwards only its own stripe). */
mc_status_t mc_fan_out_star(mc_plan_t *plan, mc_loads_t *loads, const int64_t *needers, int count,
                            int64_t first, double bytes);

/* The holder of addend a of piece p that sends it to device to: one in to's host if any,
 * else the least loaded by bytes sent. */
int64_t mc_addend_sender(const mc_topology_t *topo, const mc_piece_t *p, int64_t a, int64_t to,
                         const mc_loads_t *loads);

/* A NIC crossing of a rail-stripe build (strategy_meshcast.c's rail_route), as
 * mc_rails_rebalance sees it: its hosts, its bytes, the NIC it takes, and per NIC of the
 * host (bit n: NIC n, at most 64) whether it may take it and whether doing so costs a hop
 * over the host's links before the crossing (to the device on that NIC) or after it (from
 * the device that NIC delivers to on to the needer). */
typedef struct {
    int64_t from_host, to_host;
    double bytes;
    uint64_t usable, hop_send, hop_recv;
    int nic;
} mc_rail_crossing_t;

/* Moves crossings xs[0..n) to other NICs of their hosts while the α–β model sees one end
 * sooner there, every crossing's bytes counted on its NICs (nic_send and nic_recv, per
 * cost-model NIC port, the build's final loads, kept up to date): a greedy build chooses each
 * NIC knowing only the crossings before it (lib/plan/rails_rebalance.c). Returns how many
 * moves it made, or 0 where they bring the latest crossing's end less than 5% sooner. */
int64_t mc_rails_rebalance(const mc_topology_t *topo, mc_rail_crossing_t *xs, int64_t n,
                           double *nic_send, double *nic_recv);

/* A PXN hop of bytes over a host's links (α_intra and the bytes over a device port): what a
 * relay to or from the device on another NIC adds to a crossing, as every per-NIC build
 * times it (rail_relay, rail_route, mc_rails_rebalance, NIC split). */
double mc_pxn_hop(const mc_topology_t *topo, double bytes);

/* Per host and cost-model NIC port (mc_topology_nic_port): the host's first device on it, or
 * -1 (malloc'd; NULL when out of memory). */
int64_t *mc_devices_on_nics(const mc_topology_t *topo);

/* The most holders or needers of any piece (at least 1): how many host runs a piece can need. */
int64_t mc_pieces_most_devices(const mc_pieces_t *pieces);

/* Pieces ordered for greedy balancing: largest first (ties: original order). *out malloc'd. */
mc_status_t mc_pieces_by_size(const mc_pieces_t *pieces, int64_t **out);

#endif
