/* Planner on random cases (issue 2, acceptance 1): for thousands of seeded random cases
 * (random_case.h) and every strategy, mc_plan_create succeeds, the plan is valid, the
 * estimate is not below the lower bound, and an independent checker, written from the
 * layouts' tiles alone (not from pieces, not from mc_plan_validate), walks the flows and
 * edges: every (destination device, element) that is wanted and not held is delivered
 * exactly once, every sender holds the box (a source tile that contains it, or an earlier
 * receive in the same flow), relays forward, and the byte counts match the edges. Every NIC
 * must carry into each host at least the bytes that host needs and holds nowhere, and
 * mc_plan_floor (by which meshcast skips candidates) never exceeds the estimate, nor does
 * mc_plan_simulate_within's floor (by which it stops a candidate's simulation early), which
 * must exceed its limit, while within the limit it returns the estimate itself, the same
 * with the arrays of the simulations before it (mc_plan_simulate_reusing).
 * Failures print the seed, the case and the strategy; MC_TEST_SEED=N runs one case. */
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
#include "random_case.h"

#define NCASES 2000
#define MAX_REPORTS 20

static const char *const strategies[] = {"send_recv",          "local_allgather",
                                         "broadcast_first",    "broadcast_lb_size",
                                         "broadcast_lb_order", "meshcast"};
#define NSTRAT 6

typedef struct {
    int ndim;
    const int64_t *shape;
    int64_t nelems;
    int64_t ndev, nhosts;
    char *in_src, *in_dst;
    mc_box_t *src_tile, *dst_tile;
    unsigned char *cnt;      /* [ndev][nelems] deliveries to needers */
    unsigned char *host_has; /* [nhosts][nelems] some source device of the host holds it */
    unsigned char *host_req; /* [nhosts][nelems] some destination device of the host needs it */
    int64_t *r_host;         /* elements each host needs and holds nowhere */
    int64_t local_elems;     /* Σ_d |src tile(d) ∩ dst tile(d)| */
    int64_t needed_elems;    /* Σ_d elements d needs and does not hold */
} oracle_t;

static int failures, quiet;
/* the simulator's arrays, shared by every simulation of every case */
static mc_sim_scratch_t *scratch;

static void report(const rc_case_t *c, const char *strategy, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(const rc_case_t *c, const char *strategy, const char *fmt, ...)
{
    if (failures++ >= MAX_REPORTS || quiet)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL seed=%llu strategy=%s: %s\n  case: %s\n", (unsigned long long)c->seed,
            strategy, msg, c->desc);
}

static void coords(const oracle_t *o, int64_t flat, int64_t *x)
{
    for (int d = o->ndim - 1; d >= 0; d--) {
        x[d] = flat % o->shape[d];
        flat /= o->shape[d];
    }
}

/* Does destination device dev need element x (wants it and does not hold it)? */
static int needs(const oracle_t *o, int64_t dev, const int64_t *x)
{
    return o->in_dst[dev] && rc_in_box(o->ndim, &o->dst_tile[dev], x) &&
           !(o->in_src[dev] && rc_in_box(o->ndim, &o->src_tile[dev], x));
}

static int64_t overlap_volume(int ndim, const mc_box_t *a, const mc_box_t *b)
{
    int64_t v = 1;
    for (int d = 0; d < ndim; d++) {
        int64_t lo = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        int64_t hi = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (hi <= lo)
            return 0;
        v *= hi - lo;
    }
    return v;
}

static void oracle_free(oracle_t *o)
{
    free(o->in_src);
    free(o->in_dst);
    free(o->src_tile);
    free(o->dst_tile);
    free(o->cnt);
    free(o->host_has);
    free(o->host_req);
    free(o->r_host);
}

static void oracle_init(const rc_case_t *c, oracle_t *o)
{
    memset(o, 0, sizeof *o);
    o->ndim = c->ndim;
    o->shape = c->shape;
    o->nelems = c->nelems;
    o->ndev = mc_topology_devices(c->topo);
    o->nhosts = mc_topology_hosts(c->topo);
    o->in_src = calloc((size_t)o->ndev, 1);
    o->in_dst = calloc((size_t)o->ndev, 1);
    o->src_tile = calloc((size_t)o->ndev, sizeof *o->src_tile);
    o->dst_tile = calloc((size_t)o->ndev, sizeof *o->dst_tile);
    o->cnt = calloc((size_t)(o->ndev * o->nelems), 1);
    o->host_has = calloc((size_t)(o->nhosts * o->nelems), 1);
    o->host_req = calloc((size_t)(o->nhosts * o->nelems), 1);
    o->r_host = calloc((size_t)o->nhosts, sizeof *o->r_host);
    assert_non_null(o->in_src && o->in_dst && o->src_tile && o->dst_tile && o->cnt && o->host_has &&
                    o->host_req && o->r_host);
    const mc_mesh_t *sm = mc_layout_mesh(c->src), *dm = mc_layout_mesh(c->dst);
    for (int64_t i = 0; i < mc_mesh_size(sm); i++) {
        int64_t d = mc_mesh_device(sm, i);
        o->in_src[d] = 1;
        assert_int_equal(mc_layout_tile(c->src, d, &o->src_tile[d]), MC_OK);
    }
    for (int64_t i = 0; i < mc_mesh_size(dm); i++) {
        int64_t d = mc_mesh_device(dm, i);
        o->in_dst[d] = 1;
        assert_int_equal(mc_layout_tile(c->dst, d, &o->dst_tile[d]), MC_OK);
    }
    int64_t x[MC_MAX_NDIM];
    for (int64_t e = 0; e < o->nelems; e++) {
        coords(o, e, x);
        for (int64_t d = 0; d < o->ndev; d++) {
            int64_t h = mc_topology_host_of(c->topo, d);
            if (o->in_src[d] && rc_in_box(o->ndim, &o->src_tile[d], x)) {
                o->host_has[h * o->nelems + e] = 1;
                if (o->in_dst[d] && rc_in_box(o->ndim, &o->dst_tile[d], x))
                    o->local_elems++;
            }
            if (needs(o, d, x)) {
                o->host_req[h * o->nelems + e] = 1;
                o->needed_elems++;
            }
        }
        for (int64_t h = 0; h < o->nhosts; h++)
            if (o->host_req[h * o->nelems + e] && !o->host_has[h * o->nelems + e])
                o->r_host[h]++;
    }
}

typedef struct {
    unsigned char *row;
} inc_ctx_t;

static void inc_elem(void *ctx, int64_t e)
{
    inc_ctx_t *c = ctx;
    if (c->row[e] < 255)
        c->row[e]++;
}

/* Walks the plan's flows and edges against the oracle. Returns the number of problems. */
static int check_plan(const rc_case_t *c, const char *strategy, const mc_plan_t *plan, oracle_t *o)
{
    int bad = 0;
    int64_t elem = (int64_t)mc_dtype_size(c->dtype);
    int64_t nic = 0, intra = 0, messages = 0;
    int64_t *stamp = calloc((size_t)o->ndev, sizeof *stamp);
    int64_t *nic_in = calloc((size_t)o->nhosts, sizeof *nic_in);
    assert_non_null(stamp && nic_in);
    memset(o->cnt, 0, (size_t)(o->ndev * o->nelems));
    mc_box_t whole;
    for (int d = 0; d < o->ndim; d++) {
        whole.lo[d] = 0;
        whole.hi[d] = o->shape[d];
    }
    for (int64_t fi = 0; fi < plan->nflows && !bad; fi++) {
        const mc_flow_t *f = &plan->flows[fi];
        int64_t vol = mc_box_volume(&f->box, o->ndim);
        if (f->piece < 0 || f->piece >= plan->pieces->npieces) {
            report(c, strategy, "flow %lld: piece %lld out of range", (long long)fi,
                   (long long)f->piece);
            bad++;
            break;
        }
        if (!rc_box_contains(o->ndim, &whole, &f->box) || vol <= 0 ||
            !rc_box_contains(o->ndim, &plan->pieces->pieces[f->piece].box, &f->box)) {
            report(c, strategy, "flow %lld: box empty or outside its piece", (long long)fi);
            bad++;
            break;
        }
        if (f->bytes != vol * elem || f->chunk_bytes <= 0 || f->chunk_bytes % elem) {
            report(c, strategy, "flow %lld: bytes %lld (volume %lld) chunk %lld", (long long)fi,
                   (long long)f->bytes, (long long)vol, (long long)f->chunk_bytes);
            bad++;
            break;
        }
        if (f->edge0 < 0 || f->nedges < 0 || f->edge0 + f->nedges > plan->nedges) {
            report(c, strategy, "flow %lld: edges out of range", (long long)fi);
            bad++;
            break;
        }
        for (int64_t j = 0; j < f->nedges && !bad; j++) {
            const mc_edge_t *e = &plan->edges[f->edge0 + j];
            int64_t from = e->from, to = e->to;
            messages++;
            if (from < 0 || from >= o->ndev || to < 0 || to >= o->ndev || from == to) {
                report(c, strategy, "flow %lld: bad edge %lld -> %lld", (long long)fi,
                       (long long)from, (long long)to);
                bad++;
                break;
            }
            int holds = o->in_src[from] && rc_box_contains(o->ndim, &o->src_tile[from], &f->box);
            if (!holds && stamp[from] != fi + 1) {
                report(c, strategy, "flow %lld: device %lld sends a box it does not have",
                       (long long)fi, (long long)from);
                bad++;
            }
            if (stamp[to] == fi + 1) {
                report(c, strategy, "flow %lld: device %lld receives twice", (long long)fi,
                       (long long)to);
                bad++;
            }
            if (o->in_src[to] && overlap_volume(o->ndim, &o->src_tile[to], &f->box) > 0) {
                report(c, strategy, "flow %lld: device %lld receives elements it holds",
                       (long long)fi, (long long)to);
                bad++;
            }
            stamp[to] = fi + 1;
            int64_t wanted = o->in_dst[to] ? overlap_volume(o->ndim, &o->dst_tile[to], &f->box) : 0;
            int forwards = 0;
            for (int64_t k = j + 1; k < f->nedges && !forwards; k++)
                forwards = plan->edges[f->edge0 + k].from == to;
            if (wanted == vol) {
                inc_ctx_t ctx = {o->cnt + to * o->nelems};
                rc_box_each(o->ndim, o->shape, &f->box, inc_elem, &ctx);
            } else if (wanted != 0 || !forwards) {
                report(c, strategy,
                       "flow %lld: device %lld gets a box it wants %lld of %lld elements of "
                       "and %s",
                       (long long)fi, (long long)to, (long long)wanted, (long long)vol,
                       forwards ? "forwards" : "does not forward");
                bad++;
            }
            int64_t hf = mc_topology_host_of(c->topo, from), ht = mc_topology_host_of(c->topo, to);
            if (hf != ht) {
                nic += f->bytes;
                nic_in[ht] += f->bytes;
            } else {
                intra += f->bytes;
            }
        }
    }
    int64_t x[MC_MAX_NDIM];
    for (int64_t d = 0; d < o->ndev && !bad; d++) {
        if (!o->in_dst[d])
            continue;
        for (int64_t e = 0; e < o->nelems && !bad; e++) {
            coords(o, e, x);
            int want = needs(o, d, x);
            int got = o->cnt[d * o->nelems + e];
            if (got != want) {
                char where[128] = "";
                for (int k = 0; k < o->ndim; k++) {
                    size_t n = strlen(where);
                    snprintf(where + n, sizeof where - n, "%s%lld", k ? "," : "", (long long)x[k]);
                }
                report(c, strategy, "device %lld gets element (%s) %d times, needs it %d times",
                       (long long)d, where, got, want);
                bad++;
            }
        }
    }
    const mc_plan_stats_t *st = &plan->stats;
    if (!bad &&
        (st->nic_bytes != nic || st->intra_host_bytes != intra || st->messages != messages ||
         st->flows != plan->nflows || st->local_bytes != o->local_elems * elem)) {
        report(c, strategy,
               "stats nic %lld intra %lld messages %lld local %lld; edges say nic %lld intra "
               "%lld messages %lld local %lld",
               (long long)st->nic_bytes, (long long)st->intra_host_bytes, (long long)st->messages,
               (long long)st->local_bytes, (long long)nic, (long long)intra, (long long)messages,
               (long long)(o->local_elems * elem));
        bad++;
    }
    int64_t must_cross = 0;
    for (int64_t h = 0; h < o->nhosts && !bad; h++) {
        must_cross += o->r_host[h] * elem;
        if (nic_in[h] < o->r_host[h] * elem) {
            report(c, strategy, "host %lld receives %lld NIC bytes but needs %lld it holds nowhere",
                   (long long)h, (long long)nic_in[h], (long long)(o->r_host[h] * elem));
            bad++;
        }
    }
    if (!bad && st->nic_bytes < must_cross) {
        report(c, strategy, "nic_bytes %lld < %lld bytes that must cross hosts",
               (long long)st->nic_bytes, (long long)must_cross);
        bad++;
    }
    free(stamp);
    free(nic_in);
    return bad;
}

static void run_case(uint64_t seed, int64_t *nplans)
{
    rc_case_t c;
    char err[2048];
    if (rc_case_make(seed, RC_MAX_MESH, &c, err, sizeof err)) {
        failures++;
        fprintf(stderr, "FAIL seed=%llu: generator: %s\n", (unsigned long long)seed, err);
        return;
    }
    if (rc_case_affinity(&c, err, sizeof err)) {
        failures++;
        fprintf(stderr, "FAIL seed=%llu: generator: %s\n", (unsigned long long)seed, err);
        rc_case_free(&c);
        return;
    }
    oracle_t o;
    oracle_init(&c, &o);
    double bound = -1;
    if (mc_lower_bound(c.src, c.dst, c.topo, &bound) != MC_OK)
        report(&c, "-", "mc_lower_bound failed: %s", mc_last_error());
    rc_rng_t rng = {seed ^ 0xabcdef};
    for (int k = 0; k < NSTRAT; k++) {
        mc_plan_params_t params = {0};
        params.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER;
        assert_int_equal(mc_strategy_parse(strategies[k], &params.strategy, &params.sender), MC_OK);
        if (rc_range(&rng, 0, 3) == 0) {
            params.field_mask |= MC_PLAN_PARAM_SEED;
            params.seed = rc_next(&rng);
        }
        if (rc_range(&rng, 0, 3) == 0) {
            params.field_mask |= MC_PLAN_PARAM_CHUNK_BYTES;
            params.chunk_bytes = rc_range(&rng, 1, 300);
        }
        mc_plan_t *plan = NULL;
        mc_status_t s = mc_plan_create(c.src, c.dst, c.topo, &params, &plan);
        if (s != MC_OK) {
            report(&c, strategies[k], "mc_plan_create = %d: %s", s, mc_last_error());
            continue;
        }
        (*nplans)++;
        mc_plan_stats_t st;
        assert_int_equal(mc_plan_query(plan, &st), MC_OK);
        if (st.valid != 1)
            report(&c, strategies[k], "stats.valid = %d", st.valid);
        if ((s = mc_plan_validate(plan)) != MC_OK)
            report(&c, strategies[k], "mc_plan_validate = %d: %s", s, mc_last_error());
        if (!(st.estimate_s >= st.lower_bound_s * (1 - 1e-9)) || !isfinite(st.estimate_s))
            report(&c, strategies[k], "estimate %.17g s below lower bound %.17g s", st.estimate_s,
                   st.lower_bound_s);
        double floor = -1; /* meshcast skips candidates by it: it must never pass the estimate */
        if (mc_plan_floor(plan, &floor) != MC_OK || !(floor <= st.estimate_s * (1 + 1e-12)))
            report(&c, strategies[k], "floor %.17g s above the estimate %.17g s", floor,
                   st.estimate_s);
        /* meshcast stops a candidate's simulation at the estimate it must beat: within a limit
         * the estimate is exact, past it a floor above the limit */
        double full = -1, part = -1;
        static const double limits[] = {0.5, 0.9, 0.999, 1, 1.1};
        assert_int_equal(mc_plan_simulate(plan, &full), MC_OK);
        for (int l = 0; l < (int)(sizeof limits / sizeof *limits); l++) {
            double limit = limits[l] * full;
            assert_int_equal(mc_plan_simulate_within(plan, limit, &part), MC_OK);
            if (full <= limit ? part != full : !(part > limit && part <= full * (1 + 1e-12)))
                report(&c, strategies[k], "within %.17g s: %.17g s, the estimate %.17g s", limit,
                       part, full);
            /* with the arrays of every earlier simulation (other sizes, other topologies),
             * as meshcast's candidates are simulated: the same result */
            double reused = -1;
            assert_int_equal(mc_plan_simulate_reusing(plan, limit, scratch, &reused), MC_OK);
            if (reused != part)
                report(&c, strategies[k], "within %.17g s reusing arrays: %.17g s, not %.17g s",
                       limit, reused, part);
        }
        /* meshcast skips local_allgather's plan where this size passes the most deliveries a
         * plan may have: it must never be below the plan's */
        double most = -1;
        if (!strcmp(strategies[k], "local_allgather") &&
            (mc_local_allgather_most(plan->pieces, c.topo, &most) != MC_OK ||
             most < (double)(st.flows + st.messages)))
            report(&c, strategies[k], "at most %.0f flows and edges, the plan has %lld + %lld",
                   most, (long long)st.flows, (long long)st.messages);
        if (st.lower_bound_s != bound)
            report(&c, strategies[k], "plan's lower bound %.17g != mc_lower_bound %.17g",
                   st.lower_bound_s, bound);
        int moves = o.needed_elems > 0 || o.local_elems > 0;
        if (moves != (st.lower_bound_s > 0))
            report(&c, strategies[k], "lower bound %.17g with %lld needed, %lld local elements",
                   st.lower_bound_s, (long long)o.needed_elems, (long long)o.local_elems);
        check_plan(&c, strategies[k], plan, &o);
        mc_plan_destroy(plan);
    }
    oracle_free(&o);
    rc_case_free(&c);
}

static void test_random_cases(void **state)
{
    (void)state;
    int64_t nplans = 0, ncases = NCASES;
    uint64_t first = 1;
    const char *one = getenv("MC_TEST_SEED");
    if (one) {
        first = strtoull(one, NULL, 10);
        ncases = 1;
    }
    failures = 0;
    assert_non_null(scratch = mc_sim_scratch_new());
    for (int64_t i = 0; i < ncases; i++)
        run_case(first + (uint64_t)i, &nplans);
    mc_sim_scratch_free(scratch);
    scratch = NULL;
    if (failures)
        fail_msg("%d failures over %lld cases (first %d printed; rerun one with MC_TEST_SEED=N)",
                 failures, (long long)ncases, MAX_REPORTS);
    printf("%lld cases, %lld plans checked\n", (long long)ncases, (long long)nplans);
}

/* The independent checker is not vacuous: it rejects plans with one edge corrupted. */
static void test_checker_catches_corruption(void **state)
{
    (void)state;
    int tried = 0;
    for (uint64_t seed = 1; seed <= 200 && tried < 50; seed++) {
        rc_case_t c;
        char err[2048];
        if (rc_case_make(seed, RC_MAX_MESH, &c, err, sizeof err))
            fail_msg("seed %llu: %s", (unsigned long long)seed, err);
        oracle_t o;
        oracle_init(&c, &o);
        mc_plan_t *plan = NULL;
        assert_int_equal(mc_plan_create(c.src, c.dst, c.topo, NULL, &plan), MC_OK);
        quiet = 1;
        failures = 0;
        assert_int_equal(check_plan(&c, "meshcast", plan, &o), 0);
        if (plan->nedges > 0) {
            int64_t last = plan->nedges - 1;
            mc_edge_t saved = plan->edges[last];
            /* 1: the last edge delivers to a device that is not a destination at all */
            for (int64_t d = 0; d < o.ndev; d++)
                if (!o.in_dst[d] && d != saved.from) {
                    plan->edges[last].to = d;
                    assert_true(check_plan(&c, "meshcast", plan, &o) > 0);
                    break;
                }
            plan->edges[last] = saved;
            /* 2: the last edge is dropped (its receiver misses the box) */
            plan->flows[plan->nflows - 1].nedges--;
            assert_true(check_plan(&c, "meshcast", plan, &o) > 0);
            plan->flows[plan->nflows - 1].nedges++;
            /* 3: the first edge of the last flow is sent by its receiver's receiver */
            const mc_flow_t *f = &plan->flows[plan->nflows - 1];
            if (f->nedges > 0) {
                mc_edge_t *e = &plan->edges[f->edge0];
                mc_edge_t keep = *e;
                int64_t other = -1;
                for (int64_t d = 0; d < o.ndev && other < 0; d++)
                    if (d != keep.to &&
                        !(o.in_src[d] && rc_box_contains(o.ndim, &o.src_tile[d], &f->box)))
                        other = d;
                if (other >= 0) {
                    e->from = other;
                    assert_true(check_plan(&c, "meshcast", plan, &o) > 0);
                }
                *e = keep;
            }
            assert_int_equal(check_plan(&c, "meshcast", plan, &o), 0);
            tried++;
        }
        quiet = 0;
        failures = 0;
        mc_plan_destroy(plan);
        oracle_free(&o);
        rc_case_free(&c);
    }
    assert_true(tried >= 50);
}

/* The generator itself: covers every device mode, notation-printable specs, empty shards. */
static void test_generator_coverage(void **state)
{
    (void)state;
    int modes[3] = {0, 0, 0}, empty = 0, big_mesh = 0, three_axis = 0, four_d = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        rc_case_t c;
        char err[2048];
        if (rc_case_make(seed, RC_MAX_MESH, &c, err, sizeof err))
            fail_msg("seed %llu: %s", (unsigned long long)seed, err);
        modes[c.mode]++;
        four_d += c.ndim == 4;
        const mc_mesh_t *m = mc_layout_mesh(c.src);
        big_mesh += mc_mesh_size(m) > 16;
        three_axis += mc_mesh_ndim(m) == 3;
        for (int64_t i = 0; i < mc_mesh_size(m); i++) {
            mc_box_t b;
            assert_int_equal(mc_layout_tile(c.src, mc_mesh_device(m, i), &b), MC_OK);
            if (mc_box_volume(&b, c.ndim) == 0) {
                empty++;
                break;
            }
        }
        rc_case_free(&c);
    }
    assert_true(modes[0] > 30 && modes[1] > 30 && modes[2] > 30);
    assert_true(empty > 10);
    assert_true(big_mesh > 5);
    assert_true(three_axis > 30);
    assert_true(four_d > 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generator_coverage),
        cmocka_unit_test(test_checker_catches_corruption),
        cmocka_unit_test(test_random_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
