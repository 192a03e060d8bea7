/* The lower bound against exhaustive optimal schedules (issue 17): on seeded tiny clusters
 * (2-4 hosts of 1-2 devices, random link rates and latencies, latency-bound and
 * bandwidth-bound alike), one replicated tensor goes from 1-2 holders to 1-5 needers. Every
 * plan of the space below is built, validated and simulated; the fastest estimate must not
 * be below mc_bound_compute. The space: the piece whole or in 2 stripes, each stripe along
 * every forest rooted at the holders that reaches every needer (needers relay: a plan's
 * devices are its meshes'), in 1, 2 or 4 chunks. Then NSLOW more instances of one holder
 * whose needers are all on other hosts (3-4 hosts, latencies > 0), where the slow-start term
 * (bound_start.c) can exceed the others, and NPATHS of one needer whose host mate and a
 * device of another host hold the piece (latencies > 0), where the two-path term
 * (bound_paths.c: each port its own latency) exceeds the fluid device term. MC_TEST_SEED=N
 * runs one instance. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "plan/plan_internal.h"
#include "oracle_plan.h"
#include "random_case.h"

#define NINSTANCES 400
#define NSLOW 400  /* then instances of one holder host feeding the others */
#define NPATHS 200 /* then one needer fed by a host mate or over the NIC */
#define MAXDEV 8

typedef struct {
    int ndev;
    int64_t parent[2][MAXDEV]; /* per stripe: -1 unused, else the sender (a holder or node) */
    int holds[MAXDEV], needs[MAXDEV];
} space_t;

/* Appends one stripe's edges parent before child; 0 when the forest has a cycle or a node
 * hangs off an unused device. */
static int add_tree(mc_plan_t *plan, const space_t *sp, const int64_t *parent)
{
    int done[MAXDEV] = {0}, left = 0;
    for (int d = 0; d < sp->ndev; d++) {
        done[d] = sp->holds[d];
        left += !sp->holds[d] && parent[d] >= 0;
    }
    while (left > 0) {
        int progress = 0;
        for (int d = 0; d < sp->ndev; d++)
            if (!done[d] && parent[d] >= 0 && done[parent[d]]) {
                assert_int_equal(mc_plan_add_edge(plan, parent[d], d), MC_OK);
                done[d] = 1;
                left--;
                progress = 1;
            }
        if (!progress)
            return 0;
    }
    return 1;
}

/* Next parent assignment of the needers (odometer over every other holder or needer: a
 * plan's devices are its meshes'); 0 after the last. */
static int next_forest(const space_t *sp, int64_t *parent)
{
    for (int d = 0; d < sp->ndev; d++) {
        if (!sp->needs[d])
            continue;
        for (parent[d]++; parent[d] < sp->ndev &&
                          (parent[d] == d || !(sp->holds[parent[d]] || sp->needs[parent[d]]));
             parent[d]++) {
        }
        if (parent[d] < sp->ndev)
            return 1;
        parent[d] = -1;
    }
    return 0;
}

/* Simulates the plan made of nstripes stripes along sp's forests in nchunks chunks each;
 * returns its estimate, or INFINITY when that plan is not valid. */
static double try_plan(mc_plan_t *plan, const space_t *sp, int nstripes, int nchunks)
{
    const mc_piece_t *p = &plan->pieces->pieces[0];
    mc_box_t box[2];
    plan->nflows = plan->nedges = 0;
    int n = nstripes == 1 ? 1 : mc_box_split(&p->box, plan->pieces->ndim, 2, box);
    if (nstripes == 1)
        box[0] = p->box;
    for (int s = 0; s < n; s++) {
        assert_int_equal(mc_plan_add_flow(plan, 0, &box[s]), MC_OK);
        if (!add_tree(plan, sp, sp->parent[s]))
            return INFINITY;
        mc_flow_t *f = &plan->flows[plan->nflows - 1];
        int64_t elem = plan->pieces->elem_size, per = (f->bytes / elem + nchunks - 1) / nchunks;
        f->chunk_bytes = (per > 0 ? per : 1) * elem;
    }
    if (mc_plan_validate(plan) != MC_OK)
        return INFINITY;
    double t = -1;
    assert_int_equal(mc_plan_simulate(plan, &t), MC_OK);
    return t;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double pick(rc_rng_t *r, const double *v, int n)
{
    return v[rc_range(r, 0, n - 1)];
}

/* One instance; returns the fastest estimate / bound and adds the valid plans to *total;
 * counts in decided[0] / [1] the instances where the device-set / slow-start term gives the
 * bound, in decided[2] the slow-start instances where it exceeds the older terms, in
 * decided[3] the two-path instances where the two-path term gives the bound above the fluid
 * device term. */
static double run_instance(uint64_t seed, int64_t *total, int *decided)
{
    rc_rng_t r = {seed * 0x2545f4914f6cdd1dull + 17};
    static const double bw[] = {1e6, 4e6, 16e6, 64e6}, lat[] = {0, 1e-6, 4e-6, 16e-6};
    /* 1: slow start (one holder, needers on other hosts); 2: two paths */
    int family = seed > NINSTANCES + NSLOW ? 2 : seed > NINSTANCES;
    int hosts = (int)rc_range(&r, 2 + (family == 1), 4), dph = (int)rc_range(&r, 1, 2);
    int two_stripes = rc_range(&r, 0, 1), most = two_stripes ? 3 : 5; /* needers */
    if (family == 2) {
        dph = 2;
        two_stripes = 1;
    }
    space_t sp = {.ndev = hosts * dph};
    char text[512];
    snprintf(text, sizeof text,
             "hosts %d\ndevices_per_host %d\nlink copy bandwidth=1TB/s latency=0\n"
             "link intra bandwidth=%.0fB/s latency=%.9fs\n"
             "nic count=%d in=%.0fB/s out=%.0fB/s latency=%.9fs\n",
             hosts, dph, pick(&r, bw, 4), pick(&r, lat + !!family, 4 - !!family),
             (int)rc_range(&r, 1, 2), pick(&r, bw, 4), pick(&r, bw, 4),
             pick(&r, lat + !!family, 4 - !!family));
    mc_topology_t *topo = NULL;
    if (mc_topology_parse(text, "oracle.topo", &topo))
        fail_msg("seed %llu: %s", (unsigned long long)seed, mc_last_error());
    /* holders and needers: distinct random devices, a needer is never a holder */
    int64_t order[MAXDEV];
    for (int d = 0; d < sp.ndev; d++)
        order[d] = d;
    rc_shuffle(&r, order, sp.ndev);
    int nh = family == 1 ? 1 : family == 2 ? 2 : (int)rc_range(&r, 1, sp.ndev > 2 ? 2 : 1);
    if (family == 2) { /* holders order[0] and, on another host, order[1]; needer order[2],
                          order[0]'s host mate */
        int64_t a = order[0], mate = a ^ 1,
                other = (a / dph + 1) % hosts * dph + rc_range(&r, 0, 1);
        int64_t rest = 3;
        order[1] = other;
        order[2] = mate;
        for (int64_t d = 0; d < sp.ndev; d++)
            if (d != a && d != mate && d != other)
                order[rest++] = d;
    }
    if (family == 1) /* the holder's host mates last, so that needers are elsewhere */
        for (int i = 1, j = sp.ndev - 1; i < j; i++)
            if (order[i] / dph == order[0] / dph) {
                while (j > i && order[j] / dph == order[0] / dph)
                    j--;
                int64_t o = order[i];
                order[i] = order[j];
                order[j] = o;
            }
    int avail = sp.ndev - nh - (family == 1 ? dph - 1 : 0);
    int nn = family == 2 ? 1 : (int)rc_range(&r, 1, avail < most ? avail : most);
    int64_t src_ids[2], dst_ids[5];
    for (int i = 0; i < nh; i++)
        sp.holds[src_ids[i] = order[i]] = 1;
    for (int i = 0; i < nn; i++)
        sp.needs[dst_ids[i] = order[nh + i]] = 1;
    qsort(src_ids, (size_t)nh, sizeof *src_ids, cmp_i64); /* meshes list ids ascending */
    qsort(dst_ids, (size_t)nn, sizeof *dst_ids, cmp_i64);
    int64_t sm_shape[1] = {nh};
    oracle_plan_t op;
    oracle_plan_make(&op, topo, 16 * rc_range(&r, 1, 16), 1, sm_shape, src_ids, "R", nn, dst_ids,
                     "R");
    mc_plan_t *plan = op.plan;
    assert_int_equal(plan->pieces->npieces, 1);
    double bound = -1, best = INFINITY, cut = 0;
    assert_int_equal(mc_bound_compute(plan->pieces, topo, &bound), MC_OK);
    /* does the device-set term decide? (the NIC rate as the bound clamps it) */
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double b_in = fmin(mc_topology_nic_in(topo), (hosts - 1) * mc_topology_nic_out(topo));
    assert_int_equal(mc_bound_device_cut(plan->pieces, topo, intra.bandwidth, intra.latency, b_in,
                                         nic.latency, 0, &cut),
                     MC_OK);
    decided[0] += cut > 0 && cut >= bound * (1 - 1e-12);
    /* and the slow-start term: this instance's hosts that lack the piece */
    mc_relay_item_t items[4];
    int64_t off[5] = {0}, nlack = 0, senders = 0;
    for (int h = 0; h < hosts; h++) {
        int held = 0, k = 0;
        for (int d = h * dph; d < (h + 1) * dph; d++) {
            held |= sp.holds[d];
            k += sp.needs[d];
        }
        senders += held;
        if (!held && k > 0) {
            items[nlack] = (mc_relay_item_t){(double)plan->pieces->pieces[0].bytes, k};
            nlack++;
            off[nlack] = nlack;
        }
    }
    double start = 0,
           b_out = fmin(mc_topology_nic_out(topo), (hosts - 1) * mc_topology_nic_in(topo));
    assert_int_equal(
        mc_bound_start(items, off, nlack, senders, b_in, b_out, nic.latency, intra.latency, &start),
        MC_OK);
    decided[1] += start > 0 && start >= bound * (1 - 1e-12);
    if (family == 2) { /* the two-path term gives the bound, above the fluid device term? */
        double bytes = (double)plan->pieces->pieces[0].bytes;
        double paths = mc_bound_paths(bytes, intra.bandwidth, intra.latency, b_in, nic.latency);
        double fluid = bytes / (intra.bandwidth + b_in) + fmin(intra.latency, nic.latency);
        decided[3] += paths >= bound * (1 - 1e-12) && paths > fluid * (1 + 1e-9);
    }
    if (family == 1) { /* above the relay and fluid terms before it? */
        double bytes = (double)plan->pieces->pieces[0].bytes, old = 0, relay = 0;
        mc_relay_item_t x = {bytes, nlack};
        assert_int_equal(mc_bound_relay(&x, 1, b_out, nic.latency, nic.latency, &relay), MC_OK);
        old = fmax(old, relay);
        for (int64_t i = 0; i < nlack; i++) {
            mc_relay_item_t y = items[i];
            assert_int_equal(mc_bound_relay(&y, 1, b_in, nic.latency, intra.latency, &relay),
                             MC_OK);
            old = fmax(old, relay);
        }
        old = fmax(old, bytes / fmin(b_in, b_out) + nic.latency);
        old = fmax(old, bytes / (intra.bandwidth + b_in) + fmin(intra.latency, nic.latency));
        old = fmax(old, fmin(nic.latency, bytes / intra.bandwidth + intra.latency));
        decided[2] += start > old * (1 + 1e-9);
    }
    int nstripes = two_stripes ? 2 : 1;
    int64_t plans = 0;
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < MAXDEV; d++)
            sp.parent[s][d] = -1;
    do {
        do {
            for (int chunks = 1; chunks <= 4; chunks *= 2) {
                double t = try_plan(plan, &sp, nstripes, chunks);
                plans += isfinite(t);
                best = fmin(best, t);
            }
        } while (nstripes == 2 && next_forest(&sp, sp.parent[1]));
    } while (next_forest(&sp, sp.parent[0]));
    if (!(plans > 0 && best >= bound * (1 - 1e-9)))
        fail_msg("seed %llu: fastest of %lld plans %.9g s < bound %.9g s\n  %s holders %d "
                 "needers %d stripes %d",
                 (unsigned long long)seed, (long long)plans, best, bound, text, nh, nn, nstripes);
    *total += plans;
    oracle_plan_free(&op);
    return best / bound;
}

static void test_bound_below_optimum(void **state)
{
    (void)state;
    const char *one = getenv("MC_TEST_SEED");
    double worst = 1, sum = 0;
    int n = 0, decided[4] = {0};
    int64_t plans = 0;
    for (uint64_t seed = 1; seed <= NINSTANCES + NSLOW + NPATHS; seed++) {
        if (one && strtoull(one, NULL, 10) != seed)
            continue;
        double gap = run_instance(seed, &plans, decided);
        worst = fmax(worst, gap);
        sum += gap;
        n++;
    }
    printf("%d instances, %lld valid plans: optimum / bound mean %.3f, worst %.3f; the "
           "device-set term reaches the bound in %d, the slow-start term in %d (above the "
           "relay and fluid terms in %d of the %d slow-start instances); the two-path term "
           "gives the bound above the fluid device term in %d of the %d two-path instances\n",
           n, (long long)plans, sum / n, worst, decided[0], decided[1], decided[2], NSLOW,
           decided[3], NPATHS);
    assert_true(one || decided[2] >= 10);
    assert_true(one || decided[3] >= 10);
    assert_true(n == 1 || plans > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bound_below_optimum)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
