/* Exhaustive optimal schedules of two-slab reshards on tiny clusters, for the bound terms'
 * oracle tests (test_bound_ports_oracle, test_bound_senders_oracle, test_bound_cut_oracle): on
 * seeded clusters of 2 hosts of 4 devices (random link rates and latencies), a 1-D tensor of
 * two slabs held by a 2 x 2 source mesh and needed by a destination mesh (S1 -> R, or as the
 * case's specs say). Every plan of the space
 * below is built, validated and simulated; the fastest estimate must not be below
 * mc_lower_bound. The space: each piece whole, along every forest rooted at its holders
 * that reaches its needers (any device of a piece may relay it), the pieces in either order,
 * in 1, 2 or 4 chunks; with relays, also through any device of the meshes that neither holds
 * nor needs the piece, fed straight by a holder. MC_TEST_SEED=N runs one instance. Include
 * after cmocka.h. */
#ifndef MESHCAST_TEST_SLAB_ORACLE_H
#define MESHCAST_TEST_SLAB_ORACLE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/plan_internal.h"
#include "oracle_plan.h"
#include "random_case.h"

#define SO_NDEV 8

/* The instance's layout and what the test checks in it. */
typedef struct {
    int64_t src_ids[4]; /* the 2 x 2 source mesh, ascending */
    int64_t dst_ids[SO_NDEV];
    int ndst;
    /* 1 when the term under test gives the bound (above the terms it tightens); may assert */
    int (*decides)(const mc_plan_t *plan, double bound);
    const char *src_spec, *dst_spec; /* the source (2 x 2 mesh) and destination specs */
    int rails;  /* 1: two NICs per host, devices 0 and 2 of a host on rail 0, 1 and 3 on rail 1 */
    int relays; /* 1: the meshes' other devices may relay a piece (a holder feeds them) */
} so_case_t;

/* Whether d is a device of either mesh that neither holds nor needs p: a relay when c allows. */
static int so_relay(const so_case_t *c, const mc_piece_t *p, int64_t d)
{
    int in = 0;
    for (int i = 0; i < 4; i++)
        in |= c->src_ids[i] == d;
    for (int i = 0; i < c->ndst; i++)
        in |= c->dst_ids[i] == d;
    return c->relays && in && !mc_piece_holds(p, d) && !mc_piece_needs(p, d);
}

/* Next parent of relay r (-1: unused, then each holder); 0 when it wrapped round. */
static int so_next_relay(const mc_piece_t *p, int64_t *parent)
{
    for (parent[0]++; parent[0] < SO_NDEV && !mc_piece_holds(p, parent[0]); parent[0]++) {
    }
    if (parent[0] < SO_NDEV)
        return 1;
    parent[0] = -1;
    return 0;
}

/* Next parent assignment of piece p's needers (odometer over its other holders, needers and
 * relays) and relays; 0 after the last. */
static int so_next_forest(const so_case_t *c, const mc_piece_t *p, int64_t *parent)
{
    for (int j = 0; j < p->nneeders; j++) {
        int64_t d = p->needers[j];
        for (parent[d]++;
             parent[d] < SO_NDEV &&
             (parent[d] == d || !(mc_piece_holds(p, parent[d]) || mc_piece_needs(p, parent[d]) ||
                                  so_relay(c, p, parent[d])));
             parent[d]++) {
        }
        if (parent[d] < SO_NDEV)
            return 1;
        parent[d] = -1;
    }
    for (int64_t r = 0; r < SO_NDEV; r++)
        if (so_relay(c, p, r) && so_next_relay(p, &parent[r]))
            return 1;
    return 0;
}

/* Appends piece i's flow along parent, edges parent before child (a relay's from its holder
 * first); 0 when a needer is not reached (no parent, or a cycle). */
static int so_add_flow(const so_case_t *c, mc_plan_t *plan, int64_t i, const int64_t *parent,
                       int nchunks)
{
    const mc_piece_t *p = &plan->pieces->pieces[i];
    int done[SO_NDEV] = {0}, left = p->nneeders;
    for (int j = 0; j < p->nholders; j++)
        done[p->holders[j]] = 1;
    assert_int_equal(mc_plan_add_flow(plan, i, &p->box), MC_OK);
    for (int64_t r = 0; r < SO_NDEV; r++)
        if (so_relay(c, p, r) && parent[r] >= 0) {
            assert_int_equal(mc_plan_add_edge(plan, parent[r], r), MC_OK);
            done[r] = 1;
        }
    while (left > 0) {
        int progress = 0;
        for (int j = 0; j < p->nneeders; j++) {
            int64_t d = p->needers[j];
            if (!done[d] && parent[d] >= 0 && done[parent[d]]) {
                assert_int_equal(mc_plan_add_edge(plan, parent[d], d), MC_OK);
                done[d] = 1;
                left--;
                progress = 1;
            }
        }
        if (!progress)
            return 0;
    }
    mc_flow_t *f = &plan->flows[plan->nflows - 1];
    int64_t elem = plan->pieces->elem_size, per = (f->bytes / elem + nchunks - 1) / nchunks;
    f->chunk_bytes = (per > 0 ? per : 1) * elem;
    return 1;
}

static double so_try_plan(const so_case_t *c, mc_plan_t *plan, int64_t (*parent)[SO_NDEV],
                          int first, int nchunks)
{
    plan->nflows = plan->nedges = 0;
    for (int k = 0; k < 2; k++)
        if (!so_add_flow(c, plan, (first + k) % 2, parent[(first + k) % 2], nchunks))
            return INFINITY;
    if (mc_plan_validate(plan) != MC_OK)
        return INFINITY;
    double t = -1;
    assert_int_equal(mc_plan_simulate(plan, &t), MC_OK);
    return t;
}

static double so_pick(rc_rng_t *r, const double *v, int n)
{
    return v[rc_range(r, 0, n - 1)];
}

/* The least T with bytes <= Σ_i rate[i]·(T − start[i])⁺, by bisection (a term's formula written
 * again, independently of the bound's code). */
static inline double so_staggered(double bytes, const double *rate, const double *start, int n)
{
    double lo = 0, hi = 1;
    for (;;) {
        double got = 0;
        for (int i = 0; i < n; i++)
            got += rate[i] * fmax(hi - start[i], 0);
        if (got >= bytes)
            break;
        hi *= 2;
    }
    for (int it = 0; it < 200; it++) {
        double mid = (lo + hi) / 2, got = 0;
        for (int i = 0; i < n; i++)
            got += rate[i] * fmax(mid - start[i], 0);
        *(got >= bytes ? &hi : &lo) = mid;
    }
    return hi;
}

/* One instance: returns the fastest estimate / bound, adds the valid plans to *total and
 * counts in *decided whether c's term gives the bound. */
static double so_run_instance(const so_case_t *c, uint64_t seed, int64_t *total, int *decided)
{
    rc_rng_t r = {seed * 0x9e3779b97f4a7c15ull + 5};
    static const double bw[] = {1e6, 4e6, 16e6, 64e6}, lat[] = {0, 1e-6, 4e-6, 16e-6};
    char text[512];
    double intra_bw = so_pick(&r, bw, 4), intra_lat = so_pick(&r, lat, 4);
    int nics = (int)rc_range(&r, 1, 2);
    double in = so_pick(&r, bw, 4), out = so_pick(&r, bw, 4), nic_lat = so_pick(&r, lat, 4);
    snprintf(text, sizeof text,
             "hosts 2\ndevices_per_host 4\nlink copy bandwidth=1TB/s latency=0\n"
             "link intra bandwidth=%.0fB/s latency=%.9fs\n"
             "nic count=%d in=%.0fB/s out=%.0fB/s latency=%.9fs\n%s",
             intra_bw, intra_lat, c->rails ? 2 : nics, in, out, nic_lat,
             c->rails ? "nic-affinity map=0,1,0,1 rails\n" : "");
    mc_topology_t *topo = NULL;
    if (mc_topology_parse(text, "oracle.topo", &topo))
        fail_msg("seed %llu: %s", (unsigned long long)seed, mc_last_error());
    int64_t sm_shape[2] = {2, 2};
    oracle_plan_t op;
    oracle_plan_make(&op, topo, 32 * rc_range(&r, 1, 16), 2, sm_shape, c->src_ids, c->src_spec,
                     c->ndst, c->dst_ids, c->dst_spec);
    mc_plan_t *plan = op.plan;
    assert_int_equal(plan->pieces->npieces, 2);
    double bound = -1, best = INFINITY;
    /* as the planner computes it: on the hosts of the two meshes */
    assert_int_equal(mc_lower_bound(plan->src, plan->dst, topo, &bound), MC_OK);
    *decided += c->decides(plan, bound);
    int64_t parent[2][SO_NDEV], plans = 0;
    for (int k = 0; k < 2; k++)
        for (int d = 0; d < SO_NDEV; d++)
            parent[k][d] = -1;
    do {
        do {
            for (int first = 0; first < 2; first++)
                for (int chunks = 1; chunks <= 4; chunks *= 2) {
                    double t = so_try_plan(c, plan, parent, first, chunks);
                    plans += isfinite(t);
                    best = fmin(best, t);
                }
        } while (so_next_forest(c, &plan->pieces->pieces[1], parent[1]));
    } while (so_next_forest(c, &plan->pieces->pieces[0], parent[0]));
    if (!(plans > 0 && best >= bound * (1 - 1e-9)))
        fail_msg("seed %llu: fastest of %lld plans %.9g s < bound %.9g s\n  %s",
                 (unsigned long long)seed, (long long)plans, best, bound, text);
    *total += plans;
    oracle_plan_free(&op);
    return best / bound;
}

/* Runs instances 1..n (or MC_TEST_SEED's alone), prints the figures with what (the term's
 * name) and requires the term to decide at least min_decided of them. */
static void so_check(const so_case_t *c, uint64_t n, int min_decided, const char *what)
{
    const char *one = getenv("MC_TEST_SEED");
    double worst = 1, sum = 0, least = INFINITY;
    int runs = 0, decided = 0;
    int64_t plans = 0;
    for (uint64_t seed = 1; seed <= n; seed++) {
        if (one && strtoull(one, NULL, 10) != seed)
            continue;
        int before = decided;
        double gap = so_run_instance(c, seed, &plans, &decided);
        if (decided > before)
            least = fmin(least, gap);
        worst = fmax(worst, gap);
        sum += gap;
        runs++;
    }
    printf("%d instances, %lld valid plans: optimum / bound mean %.3f, worst %.3f; %s gives the "
           "bound in %d (there the optimum is at least %.3f x the bound)\n",
           runs, (long long)plans, sum / runs, worst, what, decided, least);
    assert_true(one || decided >= min_decided);
    assert_true(runs == 1 || plans > 10000);
}

#endif
