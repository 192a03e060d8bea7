/* The device-set cut of the lower bound (docs/planning.md, "Device sets").
 *
 * Take a host h and a set D of its devices. A piece whose holders inside h all lie in D (or
 * that h does not hold at all), and that a device of h lacking it needs, reaches that device
 * through an intra-host edge or h's NIC. Follow the byte back along intra-host edges inside
 * h: the chain starts at a holder (in D: its first hop leaves through an out-port of D) or
 * at a device that took it from the NIC. So each such byte passes D's out-ports by
 * T − α_intra or h's NIC in by T − α_nic at least once, whatever the plan (a chunk arrives
 * one link latency after it left its port), and with U(D) their bytes
 *   U(D) <= |D|·B_intra·(T − α_intra)⁺ + B_in(h)·(T − α_nic)⁺,
 * T at least the least time that meets it: paths(U(D); |D|·B_intra, α_intra; B_in, α_nic).
 * Only bytes count, not copies, since one byte out of D may be forwarded by others.
 *
 * The max over D: where paths(D) >= α_max = max(α_intra, α_nic) both ports count, and it is
 * r(D) = (U(D) + |D|·B_intra·α_intra + B_in·α_nic) / (|D|·B_intra + B_in), a max-ratio closure
 * like the host sets' (nodes: h's holder devices at B_intra and its NIC at B_in; a group of
 * pieces with one holder set in h belongs to those devices and the NIC, and each node also
 * has a group of its own of rate·latency bytes). r(D) solves the equation with both ports'
 * (T − α) taken as they are, so paths(D) <= r(D), with equality when r(D) > α_max (below r(D)
 * the ports then pass less than U(D)); a set with no bytes has r = a mean of its latencies,
 * at most α_max. So if the max r* is above α_max it is the term. Else every D with bytes is
 * done by one port before the other delivers: with α_intra <= α_nic, α_intra +
 * U(D) / (|D|·B_intra), a closure over the devices alone (nothing lacking: that would take
 * more than α_nic); with α_nic < α_intra, α_nic + U / B_in for all of h's bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

typedef struct {
    int64_t host, off, len; /* holder devices in host: devs[off .. off+len) */
    double bytes;
} entry_t;

static int cmp_entry(const void *a, const void *b, void *ctx)
{
    const entry_t *x = a, *y = b;
    const int64_t *devs = ctx;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    int64_t n = x->len < y->len ? x->len : y->len;
    for (int64_t i = 0; i < n; i++)
        if (devs[x->off + i] != devs[y->off + i])
            return devs[x->off + i] < devs[y->off + i] ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Max over D of one host's entries [e0, e1) (sorted, so equal holder lists are adjacent) of
 * U(D) / (|D|·b_intra + b_in), or with lat, of r(D) (each node also a group of its own of
 * rate·latency bytes); with nic 0, of U(D) / (|D|·b_intra) over non-empty D (the NIC left out:
 * the entries hold only pieces h holds). */
static mc_status_t host_cut(const entry_t *e, int64_t n, const int64_t *devs, double b_intra,
                            double b_in, const double *lat, int nic, double *best)
{
    int64_t nnodes = 0, nlist = 0;
    for (int64_t i = 0; i < n; i++)
        nlist += e[i].len + 2;
    int64_t *nodes = mc_calloc((size_t)nlist + 1, sizeof *nodes);
    int64_t *off = mc_calloc((size_t)(n + nlist) + 2, sizeof *off);
    int64_t *list = mc_calloc((size_t)(2 * nlist) + 1, sizeof *list);
    double *size = mc_calloc((size_t)(n + nlist) + 1, sizeof *size);
    double *rate = mc_calloc((size_t)nlist + 1, sizeof *rate);
    mc_status_t s = MC_ERR_NOMEM;
    if (!nodes || !off || !list || !size || !rate)
        goto out;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < e[i].len; j++)
            nodes[nnodes++] = devs[e[i].off + j];
    qsort(nodes, (size_t)nnodes, sizeof *nodes, cmp_i64);
    int64_t k = 0;
    for (int64_t i = 0; i < nnodes; i++)
        if (k == 0 || nodes[k - 1] != nodes[i])
            nodes[k++] = nodes[i];
    nnodes = k; /* node nnodes: the NIC */
    for (int64_t i = 0; i < nnodes; i++)
        rate[i] = b_intra;
    rate[nnodes] = b_in;
    int64_t ng = 0, used = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && cmp_entry(&e[i], &e[i - 1], (void *)devs) == 0) {
            size[ng - 1] += e[i].bytes;
            continue;
        }
        off[ng] = used;
        for (int64_t j = 0; j < e[i].len; j++) {
            const int64_t *at =
                bsearch(&devs[e[i].off + j], nodes, (size_t)nnodes, sizeof *nodes, cmp_i64);
            list[used++] = at - nodes;
        }
        if (nic)
            list[used++] = nnodes;
        size[ng++] = e[i].bytes;
    }
    for (int64_t v = 0; lat && v <= nnodes; v++) /* each port's own latency */
        if (rate[v] * lat[v < nnodes ? 0 : 1] > 0) {
            off[ng] = used;
            list[used++] = v;
            size[ng++] = rate[v] * lat[v < nnodes ? 0 : 1];
        }
    off[ng] = used;
    s = mc_bound_closure(ng, size, off, list, nnodes + (nic ? 1 : 0), rate, best);
out:
    free(nodes);
    free(off);
    free(list);
    free(size);
    free(rate);
    return s;
}

/* The term over one host's entries (see the top of the file). */
static mc_status_t host_term(const entry_t *e, int64_t n, const int64_t *devs, double b_intra,
                             double a_intra, double b_in, double a_nic, double all, double *seconds)
{
    double lat[2] = {a_intra, a_nic}, r = 0;
    mc_status_t s = host_cut(e, n, devs, b_intra, b_in, lat, 1, &r);
    *seconds = r;
    /* above α_max, r is some D's paths (a set with no bytes has r = its latencies: not one);
     * with no NIC, r(D) = α_intra + U(D) / (|D|·B_intra) is paths(D) */
    if (s || b_in <= 0 || r > fmax(a_intra, a_nic) * (1 + 1e-9))
        return s;
    if (a_nic < a_intra) {
        *seconds = a_nic + all / b_in;
        return s;
    }
    s = host_cut(e, n, devs, b_intra, 0, NULL, 0, &r);
    *seconds = a_intra + r;
    return s;
}

mc_status_t mc_bound_device_cut(const mc_pieces_t *pieces, const mc_topology_t *topo,
                                double b_intra, double a_intra, double b_in, double a_nic,
                                double floor, double *best)
{
    int64_t total_needers = 0, total_holders = 0;
    for (int64_t i = 0; i < pieces->npieces; i++) {
        total_needers += pieces->pieces[i].nneeders;
        total_holders += pieces->pieces[i].nholders;
    }
    /* each (piece, needing host) lists the piece's holders in that host */
    int64_t nhost = mc_topology_hosts(topo);
    entry_t *e = NULL;
    int64_t *devs = NULL;
    double *all = mc_calloc((size_t)nhost + 1, sizeof *all);
    double *lacking = mc_calloc((size_t)nhost + 1, sizeof *lacking);
    char *open = mc_calloc((size_t)nhost + 1, 1);
    mc_status_t s = MC_OK;
    *best = 0;
    if (!all || !lacking || !open) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    /* two passes: sums per host first, then the entries of hosts that may beat floor */
    for (int pass = 0; pass < 2; pass++) {
        int64_t n = 0, used = 0;
        for (int64_t i = 0; i < pieces->npieces; i++) {
            const mc_piece_t *p = &pieces->pieces[i];
            for (int j = 0, k = 0; j < p->nneeders; j++) {
                int64_t h = mc_host_of(topo, p->needers[j]);
                if ((j > 0 && mc_host_of(topo, p->needers[j - 1]) == h) || (pass == 1 && !open[h]))
                    continue;
                /* holders ascend, so do their hosts: skip to h's */
                while (k < p->nholders && mc_host_of(topo, p->holders[k]) < h)
                    k++;
                int held = k < p->nholders && mc_host_of(topo, p->holders[k]) == h;
                if (pass == 0) {
                    all[h] += (double)p->bytes;
                    lacking[h] += held ? 0 : (double)p->bytes;
                    continue;
                }
                e[n] = (entry_t){h, used, 0, (double)p->bytes};
                for (; k < p->nholders && mc_host_of(topo, p->holders[k]) == h; k++)
                    devs[used + e[n].len++] = p->holders[k];
                used += e[n].len;
                n++;
            }
        }
        if (pass == 0) {
            int any = 0;
            /* no D beats all bytes over the NIC plus one port, or the lacking over the NIC,
             * plus the larger latency (b_in 0, one host: no NIC, the intra-host one) */
            double a_max = b_in > 0 ? fmax(a_intra, a_nic) : a_intra;
            for (int64_t h = 0; h < nhost; h++) {
                double most = all[h] / (b_in + b_intra);
                if (lacking[h] > 0) /* none without a NIC */
                    most = most > lacking[h] / b_in ? most : lacking[h] / b_in;
                any |= open[h] = all[h] > 0 && most + a_max > floor;
            }
            /* entries only now, for the hosts that may: most reshards have none */
            if (!any)
                break;
            e = mc_calloc((size_t)total_needers + 1, sizeof *e);
            devs = mc_calloc((size_t)total_holders + 1, sizeof *devs);
            if (!e || !devs) {
                s = MC_ERR_NOMEM;
                break;
            }
            continue;
        }
        qsort_r(e, (size_t)n, sizeof *e, cmp_entry, devs);
        for (int64_t i = 0, j; i < n && !s; i = j) {
            double t = 0;
            for (j = i; j < n && e[j].host == e[i].host; j++) {
            }
            s = host_term(e + i, j - i, devs, b_intra, a_intra, b_in, a_nic, all[e[i].host], &t);
            *best = t > *best ? t : *best;
        }
    }
out:
    free(e);
    free(devs);
    free(all);
    free(lacking);
    free(open);
    return s;
}
