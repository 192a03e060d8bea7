/* The fluid lower bound (docs/planning.md). No plan, on any strategy, can finish sooner:
 *   host NIC in:    max_h R_h / B_in(h)                                  + α_nic
 *   rails:          max_h Q_h / (2 B_in(h)) + α_nic + min(α_intra, α_nic), Q_h: bytes h lacks that
 *                   some needer of h gets from no holder on its rail (mc_bound_rails)
 *   rails out:      E_A ≤ Σ_j B_j·(T − α_nic − [j ∈ U_A]·min(α_intra, α_nic))⁺, E_A: bytes only
 *                   host A holds that other hosts need, U_A: A's ports on whose rail none of
 *                   their needers sits (mc_bound_rails_out)
 *   rails in:       per needer d no holder's rail reaches, R_d ≤ Σ_k B·L_k(T): each NIC port k
 *                   of d's host passes d's bytes only in its latency windows (d's own rail:
 *                   a hop before or the spine; a holder's rail: a hop after; another rail:
 *                   both) (mc_bound_rails_in)
 *   host set out:   max_X E(X) / B_out(X)  (max-closure, parametric min-cut) + α_nic
 *   all NICs:       Σ_h R_h / Σ_h B_out(h)                               + α_nic
 *   device in/out:  R_d ≤ B_intra·(T − α_intra)⁺ + B_in(h(d))·(T − α_nic)⁺, and E_d likewise
 *                   with B_out (mc_bound_paths: each port its own latency)
 *   own NIC:        with a port per NIC, X_d ≤ B_j·(T − α_nic)⁺ + min(B_other(h), B_intra)·
 *                   (T − α_nic − α_intra)⁺: what d's host lacks enters d over its own NIC j,
 *                   or over another NIC of the host and then a mate's link
 *   local copies:   max_d C_d / B_copy                                   + α_copy
 *   host bandwidth: max_h Σ_{d in h} R_d / (H + B_in(h))                 + min(α_intra, α_nic)
 *   host ports:     Σ_{d in h} (R_d − B_intra·(T − α_intra)⁺)⁺ ≤ B_in(h)·(T − α_nic)⁺: what a
 *                   device's in-port cannot bring comes through the NIC; E_d likewise with
 *                   out-ports and B_out(h) (mc_bound_host_ports)
 *   own host:       max_d min(α_nic, max(R_d / B_intra + α_intra, L_d's copies to d's
 *                   host mates through d's out-port, straight or relayed: mc_bound_relay))
 *   NIC loops:      Σ_d (R_d − x)⁺ + Σ_h max_{d in h} (O_d − x)⁺ ≤ Σ_h B_in(h)·(T − α_nic)⁺,
 *                   x = B_intra·(T − α_intra)⁺, O_d: bytes d needs of pieces held and needed
 *                   only in its host, which reach it over a NIC only after arriving at another
 *                   host (mc_bound_loops)
 *   slow start:     needing hosts' NICs pass bytes by T − α_nic − α_intra that, before
 *                   α_nic, only hosts holding what others lack can send (mc_bound_start)
 *   senders:        Σ_{d in h} R_d ≤ Σ_{d in h} B_intra·(T − α_intra − s_d)⁺
 *                   + B_in(h)·(T − α_nic)⁺, s_d = 0 if d holds a piece a mate needs, else
 *                   min(α_intra, α_nic): what a host needs leaves its devices' out-ports or
 *                   enters its NIC, and a device holding nothing a mate needs forwards only
 *                   what it received; and the same through the in-ports of any k devices
 *                   that need (the k neediest): before α_min only the e_h early devices feed
 *                   them, Σ_k R_d ≤ min(k, e_h)·B_intra·(T − α_intra)⁺ + (k − min(k, e_h))·
 *                   B_intra·(T − α_intra − α_min)⁺ + B_in(h)·(T − α_nic)⁺ (mc_bound_senders)
 *   device sets:    max_{h, D ⊆ h} paths(U(D); |D|·B_intra, α_intra; B_in(h), α_nic)
 *                   (mc_bound_device_cut: what only D holds in h leaves D's out-ports or
 *                   enters h's NIC, each its latency before it arrives)
 *   relays:         per holder-host set X, its pieces' copies to the m hosts outside X that
 *                   need them through B_out(X); per host h, the copies of pieces no device
 *                   of h holds to its k needers through B_in(h) (mc_bound_relay)
 *   reductions:     Σ_p S_p·M_nic(p) / (hosts · min(B_in, B_out))        + α_nic
 *                   Σ_p S_p·M_dev(p) / (devices · B_intra + hosts · B_out) + min(α_intra, α_nic)
 * R_h: bytes host h needs that no device of h holds; E(X): bytes of such pieces whose holders
 * all lie in X (each must leave X at least once: some host outside its holders needs it);
 * R_d / E_d: bytes device d needs / only d holds and someone needs; X_d: bytes d needs of pieces
 * no device of its host holds; C_d: bytes d copies
 * locally. B_in(h) is at most the other hosts' NICs out together (min(B_in, (H−1)·B_out)),
 * B_out(h) likewise. A device receives from other hosts through its host's NIC and from its own
 * host through its port, matching the simulator's ports; the last byte through a port still travels
 * one link latency, so these terms bound the simulator's estimate too. With a host bandwidth H,
 * every byte a device of h needs arrives over an intra-host edge (H bytes/s for the whole host) or
 * over h's NIC (B_in(h)), whatever the plan: hence that term. Without H the same holds device by
 * device: each receives through its own port, at most B_intra·T, and the NIC brings the rest;
 * likewise the devices of h that alone hold needed bytes send through their own out-ports.
 * Relays: a copy sent from a holder
 * host straight to a host that needs it arrives α_nic after it left; any other copy crossed two
 * NICs; inside a host without a holder, a device fed by a same-host device waits α_nic + α_intra.
 * mc_bound_relay turns that into time. Own host: before α_nic no byte has crossed a NIC, so
 * T >= min(α_nic, R_d/B_intra + α_intra) (all through d's in-port), and the same with the relay
 * term of L_d, the bytes d alone holds in a host where devices need them: each leaves d's
 * out-port once per mate that needs it or is forwarded (α_intra more).
 * For a partial source, a host holds a piece only when it holds every addend index, a device
 * holding the only copy of an addend must send it, and M_nic / M_dev count the fewest NIC
 * crossings / messages per element any reduction needs (mc_reduce_min_messages, with hosts
 * / devices as the nodes): the 2(n-1)/n·S/B of an all-reduce. The host-port and own-host
 * terms hold for it as they are (a needer lacks the combination and a sole holder's addend
 * must leave it: one message per element either way); the relay, slow-start and device-set
 * terms, which count copies of whole pieces, are left out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "maxflow.h"
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

static double closure_value(int64_t ngroups, const double *size, const int64_t *off,
                            const int64_t *hosts, const char *in_x, const double *bout,
                            int64_t nhosts, double *bx)
{
    double f = 0;
    *bx = 0;
    for (int64_t h = 0; h < nhosts; h++)
        if (in_x[h])
            *bx += bout[h];
    for (int64_t g = 0; g < ngroups; g++) {
        int all = 1;
        for (int64_t i = off[g]; i < off[g + 1] && all; i++)
            all = in_x[hosts[i]];
        if (all)
            f += size[g];
    }
    return f;
}

mc_status_t mc_bound_closure(int64_t ngroups, const double *size, const int64_t *off,
                             const int64_t *hosts, int64_t nhosts, const double *bout, double *best)
{
    mc_status_t s = MC_OK;
    char *in_x = mc_calloc((size_t)nhosts, 1);
    double lambda = 0, inf = 1.0;
    *best = 0;
    if (!in_x)
        return MC_ERR_NOMEM;
    for (int64_t g = 0; g < ngroups; g++)
        inf += 2 * size[g];
    for (int iter = 0; iter < 200; iter++) {
        mc_maxflow_t *net = NULL;
        int64_t src = 0, sink = 1, g0 = 2, h0 = 2 + ngroups;
        double cut;
        if ((s = mc_maxflow_create(2 + ngroups + nhosts, ngroups + off[ngroups] + nhosts, &net)))
            break;
        for (int64_t g = 0; g < ngroups && !s; g++) {
            s = mc_maxflow_arc(net, src, g0 + g, size[g]);
            for (int64_t i = off[g]; i < off[g + 1] && !s; i++)
                s = mc_maxflow_arc(net, g0 + g, h0 + hosts[i], inf);
        }
        for (int64_t h = 0; h < nhosts && !s; h++)
            s = mc_maxflow_arc(net, h0 + h, sink, lambda * bout[h]);
        if (!s)
            s = mc_maxflow_run(net, src, sink, &cut);
        int64_t count = 0;
        for (int64_t h = 0; h < nhosts && !s; h++)
            count += in_x[h] = (char)mc_maxflow_source_side(net, h0 + h);
        mc_maxflow_destroy(net);
        if (s || count == 0)
            break;
        double bx, f = closure_value(ngroups, size, off, hosts, in_x, bout, nhosts, &bx);
        if (bx <= 0)
            break;
        double value = f - lambda * bx;
        if (f / bx > *best)
            *best = f / bx;
        if (value <= 1e-12 * (f + 1.0))
            break;
        lambda = f / bx;
    }
    free(in_x);
    return s;
}

double mc_bound_closure_bruteforce(int64_t ngroups, const double *size, const int64_t *off,
                                   const int64_t *hosts, int64_t nhosts, const double *bout)
{
    char in_x[20];
    double best = 0;
    for (uint32_t mask = 1; mask < (1u << nhosts); mask++) {
        for (int64_t h = 0; h < nhosts; h++)
            in_x[h] = (char)((mask >> h) & 1);
        double bx, f = closure_value(ngroups, size, off, hosts, in_x, bout, nhosts, &bx);
        if (bx > 0 && f / bx > best)
            best = f / bx;
    }
    return best;
}

/* Distinct hosts of an ascending device list (hosts ascend too), written to out. */
static int64_t host_set(const mc_topology_t *topo, const int64_t *devs, int n, int64_t *out)
{
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        int64_t h = mc_host_of(topo, devs[i]);
        if (k == 0 || out[k - 1] != h)
            out[k++] = h;
    }
    return k;
}

typedef struct {
    int64_t off, len;
    double size;
    int64_t copies; /* hosts that need the piece and hold none of it */
} group_t;

/* Orders groups by their host lists (ctx: the host array they index). */
static int cmp_group(const void *a, const void *b, void *ctx)
{
    const group_t *x = a, *y = b;
    const int64_t *group_hosts = ctx;
    int64_t n = x->len < y->len ? x->len : y->len;
    for (int64_t i = 0; i < n; i++)
        if (group_hosts[x->off + i] != group_hosts[y->off + i])
            return group_hosts[x->off + i] < group_hosts[y->off + i] ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}

/* Hosts per group and the host ids up to which group_key packs a host list in order. */
#define KEY_HOSTS 3
#define KEY_HOST_BITS 20

/* A group's host list as one key in cmp_group's order: each host + 1 in KEY_HOST_BITS bits,
 * 0 past the list's end (so a list sorts before its extensions). */
static uint64_t group_key(const void *item, const void *ctx)
{
    const group_t *g = item;
    const int64_t *group_hosts = ctx;
    uint64_t key = 0;
    for (int64_t i = 0; i < KEY_HOSTS; i++)
        key = key << KEY_HOST_BITS | (i < g->len ? (uint64_t)group_hosts[g->off + i] + 1 : 0);
    return key;
}

/* Sorts groups by their host lists, stably: by group_key where every list fits one, else
 * by cmp_group. */
static mc_status_t sort_groups(group_t *groups, int64_t n, int64_t *group_hosts, int64_t nhost)
{
    int packs = nhost < ((int64_t)1 << KEY_HOST_BITS) - 1;
    for (int64_t g = 0; g < n && packs; g++)
        packs = groups[g].len <= KEY_HOSTS;
    if (packs)
        return mc_sort_by_key(groups, n, sizeof *groups, group_key, group_hosts);
    qsort_r(groups, (size_t)n, sizeof *groups, cmp_group, group_hosts);
    return MC_OK;
}

/* A needing host's copies of one piece no device of it holds: k of its devices need it. */
typedef struct {
    int64_t host, copies;
    double bytes;
} need_t;

static uint64_t need_host(const void *item, const void *ctx)
{
    (void)ctx;
    return (uint64_t)((const need_t *)item)->host;
}

/* Distinct hosts of an ascending device list with how many of the devices each has. */
static int64_t host_counts(const mc_topology_t *topo, const int64_t *devs, int n, int64_t *hosts,
                           int64_t *counts)
{
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        int64_t h = mc_host_of(topo, devs[i]);
        if (k == 0 || hosts[k - 1] != h) {
            hosts[k] = h;
            counts[k++] = 0;
        }
        counts[k - 1]++;
    }
    return k;
}

/* The relay terms (mc_bound_relay): per run of groups with one holder-host set, its pieces'
 * copies through the set's NICs out; per host, the copies of pieces it holds nothing of
 * through its NIC in, to its needing devices. items has room for max(ngroups, nneeds). */
static mc_status_t relay_terms(const group_t *groups, int64_t ngroups, const int64_t *hosts,
                               need_t *needs, int64_t nneeds, mc_relay_item_t *items, double b_in,
                               double b_out, double a_nic, double a_intra, double *best)
{
    double t = 0;
    mc_status_t s = MC_OK;
    *best = 0;
    for (int64_t i = 0, j; i < ngroups && !s; i = j) {
        for (j = i; j < ngroups && cmp_group(&groups[j], &groups[i], (void *)hosts) == 0; j++)
            items[j - i] = (mc_relay_item_t){groups[j].size, groups[j].copies};
        s = mc_bound_relay(items, j - i, b_out * (double)groups[i].len, a_nic, a_nic, &t);
        *best = t > *best ? t : *best;
    }
    if (!s)
        s = mc_sort_by_key(needs, nneeds, sizeof *needs, need_host, NULL);
    for (int64_t i = 0, j; i < nneeds && !s; i = j) {
        for (j = i; j < nneeds && needs[j].host == needs[i].host; j++)
            items[j - i] = (mc_relay_item_t){needs[j].bytes, needs[j].copies};
        s = mc_bound_relay(items, j - i, b_in, a_nic, a_intra, &t);
        *best = t > *best ? t : *best;
    }
    return s;
}

/* mc_bound_start over needs (sorted by host) and the groups' holder hosts as senders. */
static mc_status_t slow_start(const group_t *groups, int64_t ngroups, const int64_t *hosts,
                              const need_t *needs, int64_t nneeds, mc_relay_item_t *items,
                              int64_t nhost, double b_in, double b_out, double a_nic,
                              double a_intra, double *t)
{
    char *sends = mc_calloc((size_t)nhost + 1, 1);
    int64_t *off = mc_calloc((size_t)nhost + 2, sizeof *off), n = 0, senders = 0;
    mc_status_t s = MC_ERR_NOMEM;
    if (!sends || !off)
        goto out;
    for (int64_t g = 0; g < ngroups; g++)
        for (int64_t i = groups[g].off; i < groups[g].off + groups[g].len; i++) {
            senders += !sends[hosts[i]];
            sends[hosts[i]] = 1;
        }
    for (int64_t i = 0; i < nneeds; i++) {
        if (i == 0 || needs[i].host != needs[i - 1].host)
            off[n++] = i;
        items[i] = (mc_relay_item_t){needs[i].bytes, needs[i].copies};
    }
    off[n] = nneeds;
    s = mc_bound_start(items, off, n, senders, b_in, b_out, a_nic, a_intra, t);
out:
    free(sends);
    free(off);
    return s;
}

/* Bytes a device alone holds in a host where `copies` of its devices need them. */
typedef struct {
    int64_t dev, copies;
    double bytes;
} own_t;

static uint64_t own_dev(const void *item, const void *ctx)
{
    (void)ctx;
    return (uint64_t)((const own_t *)item)->dev;
}

/* Own host before α_nic: per device, its alone-held bytes to its host mates through its
 * out-port, straight or relayed once (mc_bound_relay); the seconds go to l_dev. */
static mc_status_t own_relays(own_t *own, int64_t nown, mc_relay_item_t *items, double b_intra,
                              double a_intra, double *l_dev)
{
    mc_status_t s = mc_sort_by_key(own, nown, sizeof *own, own_dev, NULL);
    for (int64_t i = 0, j; i < nown && !s; i = j) {
        for (j = i; j < nown && own[j].dev == own[i].dev; j++)
            items[j - i] = (mc_relay_item_t){own[j].bytes, own[j].copies};
        s = mc_bound_relay(items, j - i, b_intra, a_intra, a_intra, &l_dev[own[i].dev]);
    }
    return s;
}

/* The machine term: by time T, host h's devices got at most b_in*T of their needs need[h]
 * through its NIC, the rest through intra-host copies, which all hosts together move at
 * machine_bw. For the k hosts needing most, S_k - k*b_in*T <= machine_bw*T, so
 * T >= S_k / (machine_bw + k*b_in) for every k. Sorts need. */
static double machine_term(double *need, int64_t nhost, double machine_bw, double b_in)
{
    mc_sort_desc(need, nhost);
    double sum = 0, best = 0;
    for (int64_t k = 0; k < nhost && need[k] > 0; k++) {
        sum += need[k];
        double t = sum / (machine_bw + (double)(k + 1) * b_in);
        best = t > best ? t : best;
    }
    return best;
}

/* Scratch and sums of the reduction terms. */
typedef struct {
    int64_t *stamp, tick; /* per addend index: last run that saw it */
    int64_t *copies;      /* per addend index: holders of it in the current piece */
    int64_t *known;       /* per host: addend indices it holds of the current piece */
    double nic_bytes;     /* Σ bytes · fewest NIC crossings */
    double msg_bytes;     /* Σ bytes · fewest messages */
} reduce_terms_t;

/* Adds piece p's fewest NIC crossings and messages (mc_reduce_min_messages over hosts and
 * over devices) to r, and to e_dev the bytes of addends only one device holds that another
 * needs. needing_hosts: the piece's needer hosts. Leaves r->known set for p's hosts. */
static void reduction_terms(const mc_pieces_t *ps, const mc_piece_t *p, const mc_topology_t *topo,
                            reduce_terms_t *r, const int64_t *needing_hosts, int64_t nn,
                            double *e_dev)
{
    int64_t k = ps->naddends, max_known = 0, incomplete = 0;
    int knows_some = 0, needer_holds = 0;
    for (int64_t j = 0; j < nn; j++)
        r->known[needing_hosts[j]] = 0;
    for (int i = 0; i < p->nholders; i++) {
        int64_t h = mc_host_of(topo, p->holders[i]), a = p->addends[i];
        if (i == 0 || h != mc_host_of(topo, p->holders[i - 1])) {
            r->tick++;
            r->known[h] = 0;
        }
        if (r->stamp[a] != r->tick) {
            r->stamp[a] = r->tick;
            if (++r->known[h] > max_known)
                max_known = r->known[h];
        }
        r->copies[a] = 0;
    }
    for (int i = 0; i < p->nholders; i++)
        r->copies[p->addends[i]]++;
    for (int i = 0; i < p->nholders; i++) {
        int64_t d = p->holders[i];
        int other = p->nneeders > 1 || (p->nneeders == 1 && p->needers[0] != d);
        if (r->copies[p->addends[i]] == 1 && other)
            e_dev[d] += (double)p->bytes;
        needer_holds |= mc_piece_needs(p, d);
    }
    for (int64_t j = 0; j < nn; j++)
        if (r->known[needing_hosts[j]] < k) {
            incomplete++;
            knows_some |= r->known[needing_hosts[j]] > 0;
        }
    r->nic_bytes +=
        (double)p->bytes * (double)mc_reduce_min_messages(k, max_known, incomplete, knows_some);
    r->msg_bytes +=
        (double)p->bytes * (double)mc_reduce_min_messages(k, 1, p->nneeders, needer_holds);
}

/* Each host's NIC rates in and out, bin[h] and bout[h]: the pooled rates, or with a port per
 * NIC (nic-affinity) the NICs its devices in the meshes sit on, since a device sends and
 * receives on its own NIC only (a host whose used devices reach 4 of its 8 NICs moves half of
 * its rate); then at most what the other hosts send it, and take from it. */
static mc_status_t host_nic_rates(const mc_topology_t *topo, double *bin, double *bout)
{
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    int64_t ports = mc_topology_nic_ports(topo);
    double in_all = 0, out_all = 0;
    char *used = ports > 1 ? mc_calloc((size_t)(nhost * ports), 1) : NULL;
    if (ports > 1 && !used)
        return MC_ERR_NOMEM;
    for (int64_t d = 0; used && d < ndev; d++)
        used[mc_topology_nic_port(topo, d)] = 1;
    for (int64_t h = 0; h < nhost; h++) {
        double nics = (double)ports;
        if (used) {
            nics = 0;
            for (int64_t i = 0; i < ports; i++)
                nics += used[h * ports + i];
        }
        bin[h] = mc_topology_nic_in(topo) * nics / (double)ports;
        bout[h] = mc_topology_nic_out(topo) * nics / (double)ports;
        in_all += bin[h];
        out_all += bout[h];
    }
    for (int64_t h = 0; h < nhost; h++) {
        double in = bin[h];
        bin[h] = fmin(bin[h], out_all - bout[h]);
        bout[h] = fmin(bout[h], in_all - in);
    }
    free(used);
    return MC_OK;
}

mc_status_t mc_bound_compute(const mc_pieces_t *pieces, const mc_topology_t *topo, double *seconds)
{
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA);
    mc_link_t nic = mc_topology_link(topo, MC_LINK_NIC);
    mc_link_t copy = mc_topology_link(topo, MC_LINK_COPY);
    double b_in = mc_topology_nic_in(topo), b_out = mc_topology_nic_out(topo);
    /* what enters one host's NIC left the other hosts' NICs, and the reverse; the hosts are
     * those of the topology, which for a plan is the compact one of its meshes' devices
     * (mc_topology_hosts: its used hosts), since a plan's edges join devices of its two meshes
     * (validate.c): a host the meshes leave idle relays nothing, and one host alone has no NIC
     * traffic at all */
    {
        double in = b_in, others = (double)(nhost - 1);
        b_in = b_in < others * b_out ? b_in : others * b_out;
        b_out = b_out < others * in ? b_out : others * in;
    }
    double host_bw = mc_topology_host_bandwidth(topo);
    mc_status_t s = MC_OK;
    int64_t total_holders = 0, total_needers = 0;
    for (int64_t i = 0; i < pieces->npieces; i++) {
        total_holders += pieces->pieces[i].nholders;
        total_needers += pieces->pieces[i].nneeders;
    }
    double *r_host = mc_calloc((size_t)nhost, sizeof(double));
    double *r_dev = mc_calloc((size_t)ndev, sizeof(double));
    double *e_dev = mc_calloc((size_t)ndev, sizeof(double));
    double *c_dev = mc_calloc((size_t)ndev, sizeof(double));
    double *l_dev = mc_calloc((size_t)ndev, sizeof(double));
    double *o_dev = mc_calloc((size_t)ndev, sizeof(double));    /* host-local bytes d needs */
    double *x_dev = mc_calloc((size_t)ndev, sizeof(double));    /* bytes d needs, its host lacks */
    int64_t *lacks = mc_calloc((size_t)nhost, sizeof(int64_t)); /* piece + 1 h needs, lacks */
    char *early = mc_calloc((size_t)ndev + 1, 1); /* holds a piece a host mate needs */
    own_t *own = NULL;
    int64_t own_cap = 0;
    double *bout = mc_calloc((size_t)nhost, sizeof(double));
    double *bin = mc_calloc((size_t)nhost, sizeof(double));
    int64_t *hosts = mc_calloc((size_t)total_holders + 1, sizeof(int64_t));
    int64_t *tmp = mc_calloc((size_t)ndev + 1, sizeof(int64_t));
    int64_t *count = mc_calloc((size_t)ndev + 1, sizeof(int64_t));
    need_t *needs = mc_calloc((size_t)total_needers + 1, sizeof(need_t));
    mc_relay_item_t *items =
        mc_calloc((size_t)(total_needers > pieces->npieces ? total_needers : pieces->npieces) + 1,
                  sizeof(mc_relay_item_t));
    group_t *groups = mc_calloc((size_t)pieces->npieces + 1, sizeof(group_t));
    double *gsize = mc_calloc((size_t)pieces->npieces + 1, sizeof(double));
    int64_t *goff = mc_calloc((size_t)pieces->npieces + 2, sizeof(int64_t));
    int64_t *ghosts = mc_calloc((size_t)total_holders + 1, sizeof(int64_t));
    reduce_terms_t red = {0};
    if (pieces->naddends > 1) {
        red.stamp = mc_calloc((size_t)pieces->naddends, sizeof *red.stamp);
        red.copies = mc_calloc((size_t)pieces->naddends, sizeof *red.copies);
        red.known = mc_calloc((size_t)nhost, sizeof *red.known);
    }
    if (!r_host || !r_dev || !e_dev || !c_dev || !l_dev || !o_dev || !x_dev || !lacks || !early ||
        !bout || !bin || !hosts || !tmp || !count || !needs || !items || !groups || !gsize ||
        !goff || !ghosts || (pieces->naddends > 1 && (!red.stamp || !red.copies || !red.known))) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    int64_t ngroups = 0, nhosts_used = 0, nneeds = 0, nown = 0;
    for (int64_t i = 0; i < pieces->npieces; i++) {
        const mc_piece_t *p = &pieces->pieces[i];
        double bytes = (double)p->bytes;
        int64_t nh = host_set(topo, p->holders, p->nholders, hosts + nhosts_used);
        int64_t nn = host_counts(topo, p->needers, p->nneeders, tmp, count);
        int64_t needed_elsewhere = 0;
        if (pieces->naddends > 1)
            reduction_terms(pieces, p, topo, &red, tmp, nn, e_dev);
        for (int64_t j = 0; j < nn; j++) {
            int held = 0;
            for (int64_t k = 0; k < nh && !held; k++)
                held = hosts[nhosts_used + k] == tmp[j];
            /* a host holding only some addends needs the piece too */
            if (held && pieces->naddends > 1)
                held = red.known[tmp[j]] >= pieces->naddends;
            if (!held) {
                lacks[tmp[j]] = i + 1;
                r_host[tmp[j]] += bytes;
                needs[nneeds++] = (need_t){tmp[j], count[j], bytes};
                needed_elsewhere++;
            }
        }
        for (int j = 0; j < p->nneeders; j++) {
            r_dev[p->needers[j]] += bytes;
            if (lacks[mc_host_of(topo, p->needers[j])] == i + 1)
                x_dev[p->needers[j]] += bytes;
        }
        /* host-local: its holders and needers in one host */
        if (nh == 1 && nn == 1 && tmp[0] == hosts[nhosts_used] && pieces->naddends <= 1)
            for (int j = 0; j < p->nneeders; j++)
                o_dev[p->needers[j]] += bytes;
        for (int j = 0; j < p->nself; j++)
            c_dev[p->self[j]] += bytes;
        if (p->nholders == 1 && p->nneeders > 0)
            e_dev[p->holders[0]] += bytes;
        /* a device alone holding the piece in a host where devices need it (hosts ascend in
         * both lists) */
        for (int j = 0, k = 0; j < p->nholders; j++) {
            int64_t h = mc_host_of(topo, p->holders[j]);
            while (k < nn && tmp[k] < h)
                k++;
            if (k < nn && tmp[k] == h)
                early[p->holders[j]] = 1;
            if (k < nn && tmp[k] == h && (j == 0 || mc_host_of(topo, p->holders[j - 1]) != h) &&
                (j + 1 == p->nholders || mc_host_of(topo, p->holders[j + 1]) != h)) {
                if (nown == own_cap) { /* grows: most reshards have none */
                    own_t *more = realloc(own, (size_t)(own_cap = 2 * own_cap + 16) * sizeof *own);
                    if (!more) {
                        s = MC_ERR_NOMEM;
                        goto out;
                    }
                    own = more;
                }
                own[nown++] = (own_t){p->holders[j], count[k], bytes};
            }
        }
        if (needed_elsewhere) {
            groups[ngroups++] = (group_t){nhosts_used, nh, bytes, needed_elsewhere};
            nhosts_used += nh;
        }
    }
    /* merge groups with equal holder host sets: keeps the min-cut graph small */
    if ((s = sort_groups(groups, ngroups, hosts, nhost)))
        goto out;
    int64_t m = 0, used = 0;
    for (int64_t g = 0; g < ngroups; g++) {
        if (m > 0 && cmp_group(&groups[g], &groups[g - 1], hosts) == 0) {
            gsize[m - 1] += groups[g].size;
            continue;
        }
        gsize[m] = groups[g].size;
        goff[m] = used;
        memcpy(ghosts + used, hosts + groups[g].off, (size_t)groups[g].len * sizeof *ghosts);
        used += groups[g].len;
        goff[++m] = used;
    }
    double bound = 0, sum_r = 0, sum_out = 0, sum_in = 0, t;
    if ((s = host_nic_rates(topo, bin, bout)))
        goto out;
    for (int64_t h = 0; h < nhost; h++) {
        sum_r += r_host[h];
        sum_out += bout[h];
        sum_in += bin[h];
        if (r_host[h] > 0 && (t = r_host[h] / bin[h] + nic.latency) > bound)
            bound = t;
    }
    /* rails: what reaches a needer from no holder on its rail pays a hop or the spine */
    if ((s = mc_bound_rails(pieces, topo, bin, &t)))
        goto out;
    if (t > bound)
        bound = t;
    /* rails in: each port of a needer's host with its own windows (a hop before, after) */
    if ((s = mc_bound_rails_in(pieces, topo, &t)))
        goto out;
    if (t > bound)
        bound = t;
    /* rails out: a host's NICs on rails where none of its own bytes is needed pass them late */
    if ((s = mc_bound_rails_out(pieces, topo, &t)))
        goto out;
    if (t > bound)
        bound = t;
    /* every host of the meshes may relay, also those that hold and need nothing */
    if (sum_r > 0 && (t = sum_r / sum_out + nic.latency) > bound)
        bound = t;
    double closure = 0;
    if (m > 0 && (s = mc_bound_closure(m, gsize, goff, ghosts, nhost, bout, &closure)))
        goto out;
    if (closure > 0 && closure + nic.latency > bound)
        bound = closure + nic.latency;
    /* the relay, slow-start and device-set terms count copies of whole pieces; a partial
     * source's pieces are made, not copied, and its reduction terms stand in for them (the
     * host-port and own-host terms below hold for both: a needer receives, and a sole
     * holder of an addend another device needs sends, one message per element) */
    int copies = pieces->naddends <= 1;
    if (copies && (s = relay_terms(groups, ngroups, hosts, needs, nneeds, items, b_in, b_out,
                                   nic.latency, intra.latency, &t)))
        goto out;
    if (copies && t > bound)
        bound = t;
    /* slow start: needing hosts' NICs (needs now sorted by host), fed at first only by the
     * hosts that hold */
    if (copies && (s = slow_start(groups, ngroups, hosts, needs, nneeds, items, nhost, b_in, b_out,
                                  nic.latency, intra.latency, &t)))
        goto out;
    if (copies && t > bound)
        bound = t;
    double min_latency = intra.latency < nic.latency ? intra.latency : nic.latency;
    /* reductions: every NIC crossing uses one host's NIC each way, every message a device
     * port or a NIC */
    double b_nic = b_in < b_out ? b_in : b_out;
    if (red.nic_bytes > 0 && (t = red.nic_bytes / (b_nic * (double)nhost) + nic.latency) > bound)
        bound = t;
    double ports = intra.bandwidth * (double)ndev + b_out * (double)nhost;
    if (red.msg_bytes > 0 && (t = red.msg_bytes / ports + min_latency) > bound)
        bound = t;
    /* host ports: a host's needing devices take bytes through their own ports or its NIC
     * (a reduction's needer lacks the combination: it too receives every element), each
     * device's port for itself (bound_host_ports.c); r_host gets each host's needs */
    /* a device's NIC path: with a port per NIC, its own NIC's rate (what comes over other
     * NICs reaches it through its port), else its host's */
    int64_t nic_ports = mc_topology_nic_ports(topo);
    int per_nic = nic_ports > 1;
    double d_in = per_nic ? fmin(b_in, mc_topology_nic_in(topo) / (double)nic_ports) : b_in,
           d_out = per_nic ? fmin(b_out, mc_topology_nic_out(topo) / (double)nic_ports) : b_out;
    /* the own-NIC term: a host's other NICs together, at most its NIC rate (bin) */
    double other_nics = mc_topology_nic_in(topo) * (double)(nic_ports - 1) / (double)nic_ports;
    if ((s = mc_bound_host_ports(topo, r_dev, intra.bandwidth, intra.latency, b_in, d_in,
                                 nic.latency, &t)))
        goto out;
    if (t > bound)
        bound = t;
    if ((s = mc_bound_host_ports(topo, e_dev, intra.bandwidth, intra.latency, b_out, d_out,
                                 nic.latency, &t)))
        goto out;
    if (t > bound)
        bound = t;
    /* NIC loops: what only its own host holds reaches a device over the NIC after an arrival
     * at another host (bound_loops.c) */
    if (copies && (s = mc_bound_loops(topo, r_dev, o_dev, intra.bandwidth, intra.latency, sum_in,
                                      nic.latency, &t)))
        goto out;
    if (copies && t > bound)
        bound = t;
    /* senders: what a host's devices need leaves a device's out-port (a hop later for one
     * that holds nothing a mate needs) or enters the NIC (bound_senders.c) */
    if (copies && (s = mc_bound_senders(topo, r_dev, early, intra.bandwidth, intra.latency,
                                        min_latency, b_in, nic.latency, &t)))
        goto out;
    if (copies && t > bound)
        bound = t;
    memset(r_host, 0, (size_t)nhost * sizeof *r_host);
    for (int64_t d = 0; d < ndev; d++)
        r_host[mc_host_of(topo, d)] += r_dev[d];
    /* device sets: what only D holds in a host leaves D's out-ports or enters the NIC, each
     * its latency before it arrives */
    double cut = 0;
    if (copies && (s = mc_bound_device_cut(pieces, topo, intra.bandwidth, intra.latency, b_in,
                                           nic.latency, bound, &cut)))
        goto out;
    if (cut > bound)
        bound = cut;
    for (int64_t h = 0; h < nhost && host_bw > 0; h++)
        if (r_host[h] > 0 && (t = r_host[h] / (host_bw + b_in) + min_latency) > bound)
            bound = t;
    if (topo->machine_bw > 0 && (t = machine_term(r_host, nhost, topo->machine_bw, b_in)) > 0 &&
        t + min_latency > bound)
        bound = t + min_latency;
    if (copies && nown > 0 &&
        (s = own_relays(own, nown, items, intra.bandwidth, intra.latency, l_dev)))
        goto out;
    for (int64_t d = 0; d < ndev; d++) {
        if ((t = mc_bound_paths(r_dev[d], intra.bandwidth, intra.latency, d_in, nic.latency)) >
            bound)
            bound = t;
        if ((t = mc_bound_paths(e_dev[d], intra.bandwidth, intra.latency, d_out, nic.latency)) >
            bound)
            bound = t;
        /* own NIC: with a port per NIC, what d's host lacks enters d over its own NIC, or
         * over another NIC of its host and then a mate's link, α_intra later
         * (docs/planning.md, "Own NIC") */
        if (per_nic && copies &&
            (t = mc_bound_paths(x_dev[d], d_in, nic.latency,
                                fmin(fmin(bin[mc_host_of(topo, d)], other_nics), intra.bandwidth),
                                nic.latency + intra.latency)) > bound)
            bound = t;
        if (c_dev[d] > 0 && (t = c_dev[d] / copy.bandwidth + copy.latency) > bound)
            bound = t;
        /* before α_nic nothing has crossed a NIC: all comes from the own host */
        double alone = r_dev[d] > 0 ? r_dev[d] / intra.bandwidth + intra.latency : 0;
        alone = fmax(alone, l_dev[d]);
        if (alone > 0 && (t = fmin(nic.latency, alone)) > bound)
            bound = t;
    }
    *seconds = bound > 0 ? bound + topo->reshard_s : 0;
out:
    free(r_host);
    free(r_dev);
    free(e_dev);
    free(c_dev);
    free(l_dev);
    free(o_dev);
    free(x_dev);
    free(lacks);
    free(early);
    free(own);
    free(bout);
    free(bin);
    free(hosts);
    free(tmp);
    free(count);
    free(needs);
    free(items);
    free(groups);
    free(gsize);
    free(goff);
    free(ghosts);
    free(red.stamp);
    free(red.copies);
    free(red.known);
    return s;
}
