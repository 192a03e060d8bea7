/* Helpers shared by the strategies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategy_common.h"
#include "topology/topology_internal.h"
#include "util/util.h"

int mc_group_by_host(const mc_topology_t *topo, const int64_t *devs, int n, mc_host_run_t *out)
{
    int runs = 0;
    for (int i = 0; i < n; i++) {
        int64_t h = mc_host_of(topo, devs[i]);
        if (runs > 0 && out[runs - 1].host == h) {
            out[runs - 1].count++;
            continue;
        }
        out[runs++] = (mc_host_run_t){h, i, 1};
    }
    return runs;
}

int64_t mc_least_loaded(const int64_t *devs, int n, const double *load)
{
    int64_t best = devs[0];
    for (int i = 1; i < n; i++)
        if (load[devs[i]] < load[best])
            best = devs[i];
    return best;
}

int64_t mc_least_loaded_tie(const int64_t *devs, int n, const double *load, const double *tie)
{
    int64_t best = devs[0];
    for (int i = 1; i < n; i++)
        if (load[devs[i]] < load[best] || (load[devs[i]] == load[best] && tie[devs[i]] < tie[best]))
            best = devs[i];
    return best;
}

int64_t mc_least_nic_sender(const mc_topology_t *topo, const mc_loads_t *loads, const int64_t *devs,
                            int n, int64_t best, int64_t to)
{
    double inv = mc_topology_nic_port_seconds_per_byte(topo);
    double best_t = loads->nic_send[mc_topology_nic_port(topo, best)] * inv +
                    mc_topology_nic_extra_latency(topo, best, to);
    for (int i = 0; i < n; i++) {
        int64_t d = devs[i];
        double t = loads->nic_send[mc_topology_nic_port(topo, d)] * inv +
                   mc_topology_nic_extra_latency(topo, d, to);
        if (t < best_t || (t == best_t && loads->dev_nic_send[d] < loads->dev_nic_send[best])) {
            best = d;
            best_t = t;
        }
    }
    return best;
}

int64_t mc_least_nic_holder(const mc_topology_t *topo, const mc_loads_t *loads, const mc_piece_t *p,
                            const mc_host_run_t *runs, int nruns, int64_t skip, int64_t to)
{
    int64_t best = -1;
    for (int r = 0; r < nruns; r++)
        if (runs[r].host != skip)
            best = mc_least_nic_sender(topo, loads, p->holders + runs[r].first, runs[r].count,
                                       best >= 0 ? best : p->holders[runs[r].first], to);
    return best;
}

const mc_host_run_t *mc_find_run(const mc_host_run_t *runs, int nruns, int64_t host)
{
    for (int i = 0; i < nruns; i++)
        if (runs[i].host == host)
            return &runs[i];
    return NULL;
}

mc_status_t mc_loads_create(const mc_topology_t *topo, mc_loads_t *out)
{
    size_t ndev = (size_t)mc_topology_devices(topo), nhost = (size_t)mc_topology_hosts(topo);
    out->dev_send = mc_calloc(ndev, sizeof(double));
    out->dev_recv = mc_calloc(ndev, sizeof(double));
    out->dev_nic_send = mc_calloc(ndev, sizeof(double));
    out->dev_nic_recv = mc_calloc(ndev, sizeof(double));
    out->host_send = mc_calloc(nhost, sizeof(double));
    out->host_recv = mc_calloc(nhost, sizeof(double));
    size_t nports = nhost * (size_t)mc_topology_nic_ports(topo);
    out->nic_send = mc_calloc(nports, sizeof(double));
    out->nic_recv = mc_calloc(nports, sizeof(double));
    if (!out->dev_send || !out->dev_recv || !out->dev_nic_send || !out->dev_nic_recv ||
        !out->host_send || !out->host_recv || !out->nic_send || !out->nic_recv) {
        mc_loads_destroy(out);
        return MC_ERR_NOMEM;
    }
    return MC_OK;
}

void mc_loads_destroy(mc_loads_t *loads)
{
    free(loads->dev_send);
    free(loads->dev_recv);
    free(loads->dev_nic_send);
    free(loads->dev_nic_recv);
    free(loads->host_send);
    free(loads->host_recv);
    free(loads->nic_send);
    free(loads->nic_recv);
    *loads = (mc_loads_t){0};
}

void mc_loads_add(mc_loads_t *loads, const mc_topology_t *topo, int64_t from, int64_t to,
                  double bytes)
{
    int64_t hf = mc_host_of(topo, from), ht = mc_host_of(topo, to);
    loads->dev_send[from] += bytes;
    loads->dev_recv[to] += bytes;
    if (hf != ht) {
        loads->dev_nic_send[from] += bytes;
        loads->dev_nic_recv[to] += bytes;
        loads->host_send[hf] += bytes;
        loads->host_recv[ht] += bytes;
        loads->nic_send[mc_topology_nic_port(topo, from)] += bytes;
        loads->nic_recv[mc_topology_nic_port(topo, to)] += bytes;
    }
}

int64_t mc_pieces_most_devices(const mc_pieces_t *pieces)
{
    int64_t most = 1;
    for (int64_t i = 0; i < pieces->npieces; i++) {
        if (pieces->pieces[i].nholders > most)
            most = pieces->pieces[i].nholders;
        if (pieces->pieces[i].nneeders > most)
            most = pieces->pieces[i].nneeders;
    }
    return most;
}

mc_status_t mc_pieces_by_size(const mc_pieces_t *pieces, int64_t **out)
{
    int64_t n = pieces->npieces;
    int64_t *order = mc_calloc((size_t)n + 1, sizeof *order);
    if (!order)
        return MC_ERR_NOMEM;
    int sorted = 1;
    for (int64_t i = 0; i < n; i++) {
        order[i] = i;
        sorted &= i == 0 || pieces->pieces[i].bytes <= pieces->pieces[i - 1].bytes;
    }
    if (sorted) { /* often all pieces are the same size */
        *out = order;
        return MC_OK;
    }
    /* a stable radix sort by bytes, largest first, a byte of the size at a time (bytes all
     * sizes share skipped): ties stay in index order, as a comparison sort by (bytes
     * descending, index) would leave them, at a fraction of qsort's calls (a build of 9,000
     * pieces sorted them in 5% of a plan's time) */
    int64_t *tmp = mc_calloc((size_t)n + 1, sizeof *tmp);
    if (!tmp) {
        free(order);
        return MC_ERR_NOMEM;
    }
    for (int shift = 0; shift < 64; shift += 8) {
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++)
            count[((~(uint64_t)pieces->pieces[order[i]].bytes >> shift) & 0xff) + 1]++;
        if (count[((~(uint64_t)pieces->pieces[order[0]].bytes >> shift) & 0xff) + 1] == n)
            continue; /* every size has this byte */
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (int64_t i = 0; i < n; i++)
            tmp[count[(~(uint64_t)pieces->pieces[order[i]].bytes >> shift) & 0xff]++] = order[i];
        memcpy(order, tmp, (size_t)n * sizeof *order);
    }
    free(tmp);
    *out = order;
    return MC_OK;
}

/* Levels below the root of a k-ary tree of n nodes. */
static int tree_depth(int64_t k, int64_t n)
{
    int depth = 0;
    for (int64_t level = 1, total = 1; total < n; depth++) {
        level = level > n / k ? n : level * k;
        total += level;
    }
    return depth;
}

/* Fan-out degree inside a host for a stripe of bytes to count devices that takes arrive
 * seconds to come in: the k whose k-ary tree the α–β model finds fastest. Each device port
 * sends k copies, and the stripe's arrival or that sets the pace; every level adds α_intra and
 * a chunk. */
static int64_t fan_degree(const mc_topology_t *topo, int count, double bytes, double arrive)
{
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA);
    double chunk = fmin(bytes, MC_PLAN_MIN_CHUNK_BYTES);
    double hop = intra.latency + chunk / intra.bandwidth, best = INFINITY;
    int64_t best_k = 1;
    for (int64_t k = 1; k < count; k++) {
        double t = fmax(arrive, (double)k * bytes / intra.bandwidth) + tree_depth(k, count) * hop;
        if (t < best * (1 - 1e-9)) {
            best = t;
            best_k = k;
        }
    }
    return best_k;
}

mc_status_t mc_fan_out_paced(mc_plan_t *plan, mc_loads_t *loads, const int64_t *needers, int count,
                             int64_t first, double bytes, double arrive)
{
    mc_status_t s = MC_OK;
    const mc_topology_t *topo = plan->topo;
    int64_t k = fan_degree(topo, count, bytes, arrive);
    int start = 0;
    while (start < count && needers[start] != first)
        start++;
    /* order[0] = first, then the others in rotated id order; node i hangs off (i-1)/k */
    for (int i = 1; i < count && !s; i++) {
        int64_t parent = needers[(start + (i - 1) / k) % count];
        int64_t n = needers[(start + i) % count];
        mc_loads_add(loads, topo, parent, n, bytes);
        s = mc_plan_add_edge(plan, parent, n);
    }
    return s;
}

/* Fan-out inside a host from `first` (already holding the stripe) to the run's other
 * needers along a tree of degree fan_degree, the stripe arriving at the NIC rate. */
mc_status_t mc_fan_out_in_host(mc_plan_t *plan, mc_loads_t *loads, const int64_t *needers,
                               int count, int64_t first, double bytes)
{
    return mc_fan_out_paced(plan, loads, needers, count, first, bytes,
                            bytes / mc_topology_nic_in(plan->topo));
}

mc_status_t mc_fan_out_star(mc_plan_t *plan, mc_loads_t *loads, const int64_t *needers, int count,
                            int64_t first, double bytes)
{
    mc_status_t s = MC_OK;
    for (int i = 0; i < count && !s; i++)
        if (needers[i] != first) {
            mc_loads_add(loads, plan->topo, first, needers[i], bytes);
            s = mc_plan_add_edge(plan, first, needers[i]);
        }
    return s;
}

int64_t mc_addend_sender(const mc_topology_t *topo, const mc_piece_t *p, int64_t a, int64_t to,
                         const mc_loads_t *loads)
{
    int64_t best = -1, host = mc_host_of(topo, to);
    int best_local = 0;
    for (int i = 0; i < p->nholders; i++) {
        if (p->addends[i] != a)
            continue;
        int64_t d = p->holders[i];
        int local = mc_host_of(topo, d) == host;
        if (best < 0 || local > best_local ||
            (local == best_local && loads->dev_send[d] < loads->dev_send[best])) {
            best = d;
            best_local = local;
        }
    }
    return best;
}

double mc_pxn_hop(const mc_topology_t *topo, double bytes)
{
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA);
    return intra.latency + bytes / intra.bandwidth;
}

int64_t *mc_devices_on_nics(const mc_topology_t *topo)
{
    int64_t ports = mc_topology_nic_ports(topo), n = mc_topology_hosts(topo) * ports;
    int64_t *on_nic = mc_calloc((size_t)n, sizeof *on_nic);
    if (!on_nic)
        return NULL;
    for (int64_t i = 0; i < n; i++)
        on_nic[i] = -1;
    for (int64_t d = mc_topology_devices(topo) - 1; d >= 0; d--)
        on_nic[mc_topology_nic_port(topo, d)] = d;
    return on_nic;
}
