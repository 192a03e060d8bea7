/* broadcast (Alpa): one broadcast per piece from one holder to all its needers, modeled as
 * NCCL's pipelined ring: a chain from the sender through the needers of its own host, then
 * host by host (each host boundary crossed once). Sender choice as Alpa defines it:
 *   first    - the first holder;
 *   lb_size  - hosts as single NICs: the holder host with the fewest bytes sent so far;
 *   lb_order - randomized greedy rounds of host-disjoint broadcasts (best of 100 shuffles
 *              per round), each round's senders picked on the least-loaded free host; the
 *              plan lists broadcasts round by round. */
#include <stdlib.h>
#include <string.h>
#include "strategy_common.h"
#include "util/util.h"
#include "topology/topology_internal.h"

#define LB_ORDER_TRIALS 100

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Adds piece i's chain from sender; needers of the sender's host first, then by host. */
static mc_status_t add_chain(mc_plan_t *plan, int64_t i, int64_t sender, mc_loads_t *loads)
{
    const mc_piece_t *p = &plan->pieces->pieces[i];
    int64_t sh = mc_host_of(plan->topo, sender), prev = sender;
    mc_status_t s = mc_plan_add_flow(plan, i, &p->box);
    for (int pass = 0; pass < 2 && !s; pass++)
        for (int j = 0; j < p->nneeders && !s; j++) {
            int64_t n = p->needers[j];
            if ((mc_host_of(plan->topo, n) == sh) != (pass == 0))
                continue;
            mc_loads_add(loads, plan->topo, prev, n, (double)p->bytes);
            s = mc_plan_add_edge(plan, prev, n);
            prev = n;
        }
    return s;
}

/* Least-loaded holder host (by bytes sent), optionally skipping hosts marked busy; then its
 * least-loaded holder device. Returns -1 if every holder host is busy. */
static int64_t pick_sender(const mc_plan_t *plan, const mc_piece_t *p, const mc_loads_t *loads,
                           const char *busy)
{
    int64_t best = -1;
    double best_load = 0;
    for (int j = 0; j < p->nholders; j++) {
        int64_t h = mc_host_of(plan->topo, p->holders[j]);
        if (busy && busy[h])
            continue;
        double l = loads->host_send[h];
        if (best < 0 || l < best_load ||
            (l == best_load && loads->dev_send[p->holders[j]] < loads->dev_send[best])) {
            best = p->holders[j];
            best_load = l;
        }
    }
    return best;
}

/* lb_order's trials pick senders many times per round while the loads stay fixed: each
 * piece's holder and needer hosts are looked up once, and its first holder in pick_sender's
 * order (host bytes sent, then device bytes sent, then list order) is found again only when
 * a round changed the send loads on one of its holders' hosts; a trial takes it if its host
 * is free, else the first on a free host (unless the piece's holders share one host: then
 * none is free), by a scan of its holders, or once it has scanned about log2(holders) times in
 * a round, from its holders sorted in that order (first_free: a scan of every holder per miss
 * was 90% of lb_order's time on pieces with hundreds of holders: 608 on g0156 of seed 2,
 * --max-hosts 128). Pieces with the same holders share that work (a group). What a trial
 * reads of a piece is in one 64-byte entry, with the one host of pieces whose holders (or
 * needers) share one: trials draw the pieces at random, so each array read would be a miss. */
typedef struct {
    const int64_t *holders; /* the piece's */
    int64_t bytes;
    int32_t host, nhost; /* where its holders' and needers' hosts start in ranks_t's arrays */
    int32_t host0;       /* its first holder's host (every holder's, if one) */
    int32_t nhost0;      /* its first needer's host (every needer's, if nhost_one) */
    int32_t pos;         /* its place in todo */
    /* the piece whose stamp, first and sorted holders it shares, itself unless its holders
     * are an earlier piece's exactly (a mesh axis replicating the source: every piece of a
     * host, or of a whole mesh, has the same holders, so one of them ranks them for all) */
    int32_t group;
    int32_t stamp;  /* as a group: the round its first holder is known for, -1 for none */
    int32_t first;  /* as a group: the index of its first holder this round */
    int32_t sorted; /* as a group: the round its sorted holders are known for, -1 for none */
    int32_t nholders, nneeders;
    char one;       /* its holders share one host */
    char nhost_one; /* its needers share one host */
    char single;    /* one holder's host holds every needer (one_host) */
} lb_piece_t;

typedef struct {
    lb_piece_t *pc;   /* per piece */
    int64_t *host;    /* holder hosts, in holder order, piece after piece */
    int32_t *order;   /* per group, at its host offset: its holders' indices, ranked */
    int32_t *scans;   /* per group: the round of its scans, and how many it made then */
    int64_t *nhost;   /* needer hosts, in needer order, piece after piece */
    int64_t *changed; /* per host: the last round that added to its devices' sends, or -1 */
    int32_t round;
} ranks_t;

/* Whether a round since stamp changed the send loads on a host of the piece's holders. */
static int stale(const ranks_t *r, const lb_piece_t *q, int32_t stamp)
{
    if (stamp < 0)
        return 1;
    if (q->one)
        return r->changed[q->host0] >= stamp;
    for (int j = 0; j < q->nholders; j++)
        if (r->changed[r->host[q->host + j]] >= stamp)
            return 1;
    return 0;
}

static int rank_before(const mc_loads_t *loads, const int64_t *host, const lb_piece_t *q, int64_t a,
                       int64_t b)
{
    double ha = loads->host_send[host[a]], hb = loads->host_send[host[b]];
    return ha < hb || (ha == hb && loads->dev_send[q->holders[a]] < loads->dev_send[q->holders[b]]);
}

typedef struct {
    const mc_loads_t *loads;
    const int64_t *host;
    const lb_piece_t *q;
} rank_ctx_t;

/* rank_before as a total order (list order breaks ties) */
static int cmp_rank(const void *a, const void *b, void *ctx)
{
    const rank_ctx_t *c = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (rank_before(c->loads, c->host, c->q, x, y))
        return -1;
    if (rank_before(c->loads, c->host, c->q, y, x))
        return 1;
    return (x > y) - (x < y);
}

/* The piece's holder on a free host that ranks first, by a scan of its holders. */
static int64_t scan_free(const lb_piece_t *q, const int64_t *host, const mc_loads_t *loads,
                         const char *busy)
{
    int64_t best = -1;
    for (int j = 0; j < q->nholders; j++)
        if (!busy[host[j]] && (best < 0 || rank_before(loads, host, q, j, best)))
            best = j;
    return best < 0 ? -1 : q->holders[best];
}

/* The same from its group's holders sorted for this round's loads. A sort costs about
 * log2(holders) scans, so a group is scanned that often in a round before it is sorted
 * (sorted in every round, the 56 holders of each piece of g0197 of seed 3 at --max-hosts 128
 * made lb_order 3x slower than scans), and sorted again only when the loads on one of its
 * holders' hosts changed. */
static int64_t first_free(const lb_piece_t *q, lb_piece_t *g, const mc_loads_t *loads,
                          const char *busy, ranks_t *r)
{
    const int64_t *host = r->host + q->host;
    int32_t *order = r->order + g->host;
    if (g->sorted >= 0 && g->sorted != r->round)
        g->sorted = stale(r, q, g->sorted) ? -1 : r->round;
    if (g->sorted < 0) {
        int32_t *scans = &r->scans[2 * q->group]; /* this round's: round, count */
        if (scans[0] != r->round) {
            scans[0] = r->round;
            scans[1] = 0;
        }
        int32_t enough = 1;
        while (enough < 31 && (1 << enough) < q->nholders)
            enough++;
        if (++scans[1] <= enough)
            return scan_free(q, host, loads, busy);
        for (int32_t j = 0; j < q->nholders; j++)
            order[j] = j;
        rank_ctx_t c = {loads, host, q};
        qsort_r(order, (size_t)q->nholders, sizeof *order, cmp_rank, &c);
        g->sorted = r->round;
    }
    for (int32_t k = 0; k < q->nholders; k++)
        if (!busy[host[order[k]]])
            return q->holders[order[k]];
    return -1;
}

static int64_t ranked_sender(int64_t piece, const mc_loads_t *loads, const char *busy, ranks_t *r)
{
    const lb_piece_t *q = &r->pc[piece];
    lb_piece_t *g = &r->pc[q->group];
    const int64_t *host = r->host + q->host;
    /* loads change only between rounds: a group checked this round is current */
    if (g->stamp != r->round && stale(r, q, g->stamp)) {
        int first = 0;
        if (q->one) { /* one host's bytes sent: the devices' decide */
            double least = loads->dev_send[q->holders[0]];
            for (int j = 1; j < q->nholders; j++)
                if (loads->dev_send[q->holders[j]] < least) {
                    least = loads->dev_send[q->holders[j]];
                    first = j;
                }
        } else {
            for (int j = 1; j < q->nholders; j++)
                if (rank_before(loads, host, q, j, first))
                    first = j;
        }
        g->first = first;
    }
    g->stamp = r->round;
    if (q->one)
        return busy[q->host0] ? -1 : q->holders[g->first];
    if (!busy[host[g->first]])
        return q->holders[g->first];
    return first_free(q, g, loads, busy, r);
}

/* Free hosts in a trial, by role: holding some piece, needing some piece, either. */
typedef struct {
    int64_t holder, needer, any;
} free_hosts_t;

enum { ROLE_HOLDER = 1, ROLE_NEEDER = 2 };

static void take_host(char *busy, int64_t h, const char *role, free_hosts_t *fr)
{
    if (busy[h])
        return;
    busy[h] = 1;
    if (fr) {
        fr->holder -= (role[h] & ROLE_HOLDER) != 0;
        fr->needer -= (role[h] & ROLE_NEEDER) != 0;
        fr->any -= role[h] != 0;
    }
}

/* Whether the sender's host sh or a needer's host (nh[0..n)) is busy. */
static int hosts_busy(const int64_t *nh, int n, int64_t sh, const char *busy)
{
    for (int j = 0; j < n; j++)
        if (busy[nh[j]])
            return 1;
    return busy[sh];
}

/* Marks the sender's host sh and every needer's host busy (counting them off fr, if given). */
static void hosts_take(const int64_t *nh, int n, int64_t sh, char *busy, const char *role,
                       free_hosts_t *fr)
{
    for (int j = 0; j < n; j++)
        take_host(busy, nh[j], role, fr);
    take_host(busy, sh, role, fr);
}

/* Whether some remaining broadcast could still join the trial: each needs a free holder
 * host, and unless it stays on one host (nsingle of them remain), a free needer host too. */
static int room_left(const free_hosts_t *fr, int64_t nsingle)
{
    if (fr->holder == 0)
        return 0;
    return nsingle > 0 || (fr->needer > 0 && fr->any > 1);
}

/* Whether one holder's host holds every needer: the piece's broadcast can run on one host. */
static int one_host(const mc_plan_t *plan, const mc_piece_t *p)
{
    for (int j = 0; j < p->nholders; j++) {
        int64_t h = mc_host_of(plan->topo, p->holders[j]), k = 0;
        while (k < p->nneeders && mc_host_of(plan->topo, p->needers[k]) == h)
            k++;
        if (k == p->nneeders)
            return 1;
    }
    return 0;
}

/* Each trial draws the remaining pieces in random order (a Fisher–Yates shuffle of todo in
 * place, drawn only as far as the trial looks) and stops once no host is free for another
 * broadcast, so a trial costs the pieces it looks at, not all remaining ones; each piece's
 * place in todo lets a round's pieces leave it in O(1) each. */
static mc_status_t lb_order(mc_plan_t *plan, mc_loads_t *loads, int64_t *todo, int64_t n)
{
    int64_t nhost = mc_topology_hosts(plan->topo), npieces = plan->pieces->npieces, nsingle = 0;
    uint64_t rng = plan->params.seed;
    mc_status_t s = MC_OK;
    char *busy = mc_calloc((size_t)nhost, 1), *role = mc_calloc((size_t)nhost, 1);
    int64_t *trial = mc_calloc((size_t)n + 1, sizeof *trial);
    int64_t *round = mc_calloc((size_t)n + 1, sizeof *round);
    int64_t nranked = 0, nneeded = 0;
    for (int64_t k = 0; k < n; k++) {
        nranked += plan->pieces->pieces[todo[k]].nholders;
        nneeded += plan->pieces->pieces[todo[k]].nneeders;
    }
    ranks_t rk = {.pc = aligned_alloc(64, (((size_t)npieces + 1) * sizeof *rk.pc + 63) / 64 * 64),
                  .host = mc_calloc((size_t)nranked + 1, sizeof *rk.host),
                  .order = mc_calloc((size_t)nranked + 1, sizeof *rk.order),
                  .scans = mc_calloc(2 * ((size_t)npieces + 1), sizeof *rk.scans),
                  .nhost = mc_calloc((size_t)nneeded + 1, sizeof *rk.nhost),
                  .changed = mc_calloc((size_t)nhost + 1, sizeof *rk.changed)};
    int64_t *rep = mc_calloc((size_t)nhost + 1, sizeof *rep); /* per host: its last group */
    if (!busy || !role || !trial || !round || !rk.pc || !rk.host || !rk.order || !rk.scans ||
        !rk.nhost || !rk.changed || !rep) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    for (int64_t h = 0; h < nhost; h++)
        rep[h] = -1;
    int64_t last_spread = -1;
    nranked = nneeded = 0;
    for (int64_t k = 0; k < n; k++) {
        const mc_piece_t *p = &plan->pieces->pieces[todo[k]];
        lb_piece_t *q = &rk.pc[todo[k]];
        int64_t *hh = rk.host + nranked, *nh = rk.nhost + nneeded;
        *q = (lb_piece_t){.holders = p->holders,
                          .bytes = p->bytes,
                          .host = (int32_t)nranked,
                          .nhost = (int32_t)nneeded,
                          .pos = (int32_t)k,
                          .stamp = -1,
                          .sorted = -1,
                          .nholders = p->nholders,
                          .nneeders = p->nneeders,
                          .one = 1,
                          .nhost_one = 1,
                          .single = (char)one_host(plan, p)};
        nranked += p->nholders;
        nneeded += p->nneeders;
        nsingle += q->single;
        for (int j = 0; j < p->nholders; j++) {
            role[hh[j] = mc_host_of(plan->topo, p->holders[j])] |= ROLE_HOLDER;
            q->one &= (char)(hh[j] == hh[0]);
        }
        for (int j = 0; j < p->nneeders; j++) {
            role[nh[j] = mc_host_of(plan->topo, p->needers[j])] |= ROLE_NEEDER;
            q->nhost_one &= (char)(nh[j] == nh[0]);
        }
        q->host0 = (int32_t)hh[0];
        q->nhost0 = (int32_t)nh[0];
        /* the last group of the piece's one holder host, or of pieces on several */
        int64_t *last = q->one ? &rep[hh[0]] : &last_spread, g = *last;
        const mc_piece_t *o = g >= 0 ? &plan->pieces->pieces[g] : NULL;
        if (!o || o->nholders != p->nholders ||
            memcmp(o->holders, p->holders, (size_t)p->nholders * sizeof *p->holders))
            g = *last = todo[k];
        q->group = (int32_t)g;
    }
    free_hosts_t all = {0, 0, 0};
    for (int64_t h = 0; h < nhost; h++) {
        rk.changed[h] = -1;
        all.holder += (role[h] & ROLE_HOLDER) != 0;
        all.needer += (role[h] & ROLE_NEEDER) != 0;
        all.any += role[h] != 0;
    }
    while (n > 0 && !s) {
        int64_t best_count = 0;
        double best_bytes = -1;
        /* Alpa's 100 shuffles per round grow quadratically; past 200 broadcasts keep the
         * work per round near 100 x 200 placements */
        int trials = n <= 200 ? LB_ORDER_TRIALS : (int)(LB_ORDER_TRIALS * 200 / n) + 4;
        for (int t = 0; t < trials; t++) {
            memset(busy, 0, (size_t)nhost);
            int64_t count = 0;
            free_hosts_t fr = all;
            double bytes = 0;
            for (int64_t k = 0, misses = 0; k < n && misses < nhost && room_left(&fr, nsingle);
                 k++) {
                int64_t j = k + (int64_t)(next_random(&rng) % (uint64_t)(n - k)), x = todo[k];
                todo[k] = todo[j];
                todo[j] = x;
                rk.pc[todo[k]].pos = k;
                rk.pc[todo[j]].pos = j;
                const lb_piece_t *q = &rk.pc[todo[k]];
                int64_t snd = ranked_sender(todo[k], loads, busy, &rk), sh;
                /* needers sharing one host: that host alone (taking it again changes nothing) */
                const int64_t nh0 = q->nhost0, *nh = q->nhost_one ? &nh0 : rk.nhost + q->nhost;
                int nn = q->nhost_one ? 1 : q->nneeders;
                if (snd < 0 || hosts_busy(nh, nn, sh = mc_host_of(plan->topo, snd), busy)) {
                    misses++;
                    continue;
                }
                misses = 0;
                hosts_take(nh, nn, sh, busy, role, &fr);
                trial[count++] = todo[k];
                bytes += (double)q->bytes;
            }
            if (bytes > best_bytes) {
                best_bytes = bytes;
                best_count = count;
                memcpy(round, trial, (size_t)count * sizeof *round);
            }
        }
        if (best_count == 0) /* a broadcast that conflicts with itself runs alone */
            round[best_count++] = todo[0];
        memset(busy, 0, (size_t)nhost);
        for (int64_t k = 0; k < best_count && !s; k++) {
            const mc_piece_t *p = &plan->pieces->pieces[round[k]];
            const lb_piece_t *q = &rk.pc[round[k]];
            int64_t snd = pick_sender(plan, p, loads, busy);
            if (snd < 0)
                snd = pick_sender(plan, p, loads, NULL);
            const int64_t *nh = rk.nhost + q->nhost;
            hosts_take(nh, p->nneeders, mc_host_of(plan->topo, snd), busy, role, NULL);
            s = add_chain(plan, round[k], snd, loads);
            /* the chain's sender and needers (which forward) sent more */
            rk.changed[mc_host_of(plan->topo, snd)] = rk.round;
            for (int j = 0; j < p->nneeders; j++)
                rk.changed[nh[j]] = rk.round;
            /* the piece leaves todo: the last one takes its place */
            int64_t at = q->pos;
            todo[at] = todo[--n];
            rk.pc[todo[at]].pos = at;
            nsingle -= q->single;
        }
        rk.round++; /* the loads changed */
    }
out:
    free(busy);
    free(role);
    free(trial);
    free(round);
    free(rk.pc);
    free(rk.changed);
    free(rep);
    free(rk.host);
    free(rk.order);
    free(rk.scans);
    free(rk.nhost);
    return s;
}

mc_status_t mc_strategy_broadcast(mc_plan_t *plan)
{
    const mc_pieces_t *ps = plan->pieces;
    mc_loads_t loads;
    int64_t *todo = mc_calloc((size_t)ps->npieces + 1, sizeof *todo), n = 0;
    mc_status_t s = todo ? mc_loads_create(plan->topo, &loads) : MC_ERR_NOMEM;
    if (s) {
        free(todo);
        return s;
    }
    for (int64_t i = 0; i < ps->npieces; i++)
        if (ps->pieces[i].nneeders > 0)
            todo[n++] = i;
    if (plan->params.sender == MC_SENDER_LB_ORDER) {
        s = lb_order(plan, &loads, todo, n);
    } else {
        for (int64_t k = 0; k < n && !s; k++) {
            const mc_piece_t *p = &ps->pieces[todo[k]];
            int64_t snd = plan->params.sender == MC_SENDER_FIRST
                              ? p->holders[0]
                              : pick_sender(plan, p, &loads, NULL);
            s = add_chain(plan, todo[k], snd, &loads);
        }
    }
    free(todo);
    mc_loads_destroy(&loads);
    return s;
}
