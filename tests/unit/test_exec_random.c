/* Executing plans, checked element by element: for random cases (random_case.h) and every
 * strategy, source tiles get the test pattern, the plan runs, and every destination element
 * must equal the pattern. Runs with one in-process rank (the worker pool) and with several
 * ranks as threads (the chunk engine over the in-process transport), with chunk sizes from
 * tiny (many chunks, pack/unpack of partial rows) to whole flows. MC_TEST_SEED=N reruns one
 * case. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"
#include "random_case.h"

#define NCASES 500
#define MAX_REPORTS 10

static const char *const strategies[] = {"send_recv",          "local_allgather",
                                         "broadcast_first",    "broadcast_lb_size",
                                         "broadcast_lb_order", "meshcast"};
#define NSTRAT 6

static int failures;

static void report(const rc_case_t *c, const char *what, const char *fmt, ...)
{
    if (failures++ >= MAX_REPORTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "seed %llu, %s: ", (unsigned long long)c->seed, what);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n  case: %s\n", c->desc);
    va_end(ap);
}

typedef struct {
    const mc_layout_t *layout;
    int64_t n;
    mc_buffer_t *bufs;
} tiles_t;

static void tiles_make(tiles_t *t, const mc_layout_t *l, int fill, uint64_t seed)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    t->layout = l;
    t->n = mc_mesh_size(m);
    t->bufs = calloc((size_t)t->n, sizeof *t->bufs);
    size_t es = mc_dtype_size(mc_layout_dtype(l));
    for (int64_t i = 0; i < t->n; i++) {
        mc_box_t b;
        assert_int_equal(mc_layout_tile(l, mc_mesh_device(m, i), &b), MC_OK);
        size_t bytes = es;
        for (int d = 0; d < mc_layout_ndim(l); d++)
            bytes *= (size_t)(b.hi[d] - b.lo[d]);
        t->bufs[i].ptr = malloc(bytes ? bytes : 1);
        t->bufs[i].memory = MC_MEMORY_HOST;
        if (fill)
            assert_int_equal(mc_pattern_fill(l, mc_mesh_device(m, i), seed, t->bufs[i].ptr), MC_OK);
        else
            memset(t->bufs[i].ptr, 0xA5, bytes);
    }
}

static int64_t tiles_wrong(const tiles_t *t, uint64_t seed)
{
    int64_t total = 0;
    const mc_mesh_t *m = mc_layout_mesh(t->layout);
    for (int64_t i = 0; i < t->n; i++) {
        int64_t w = 0;
        assert_int_equal(
            mc_pattern_check(t->layout, mc_mesh_device(m, i), seed, t->bufs[i].ptr, &w), MC_OK);
        total += w;
    }
    return total;
}

static void tiles_free(tiles_t *t)
{
    for (int64_t i = 0; i < t->n; i++)
        free(t->bufs[i].ptr);
    free(t->bufs);
}

typedef struct {
    mc_world_t *world;
    int rank;
    const mc_plan_t *plan;
    const mc_buffer_t *src, *dst;
    int64_t chunk;
    mc_status_t status;
    char error[512];
} rank_arg_t;

static void *rank_main(void *arg)
{
    rank_arg_t *a = arg;
    mc_comm_params_t p = {.field_mask = MC_COMM_PARAM_WORLD | MC_COMM_PARAM_TIMEOUT,
                          .world = a->world,
                          .world_rank = a->rank,
                          .timeout_s = 20};
    mc_comm_t *comm = NULL;
    mc_reshard_params_t rp = {.field_mask = a->chunk ? MC_RESHARD_PARAM_CHUNK_BYTES : 0,
                              .chunk_bytes = a->chunk};
    a->status = mc_comm_create(&p, &comm);
    if (!a->status)
        a->status = mc_reshard(comm, a->plan, a->src, a->dst, &rp);
    if (a->status)
        snprintf(a->error, sizeof a->error, "%s", mc_last_error());
    mc_comm_destroy(comm);
    return NULL;
}

/* Runs plan on nranks ranks (threads when nranks > 1). */
static mc_status_t execute(const mc_plan_t *plan, int nranks, const tiles_t *src,
                           const tiles_t *dst, int64_t chunk, char *err, size_t err_len)
{
    mc_world_t *world = NULL;
    rank_arg_t args[8];
    pthread_t th[8];
    mc_status_t s = MC_OK;
    if (nranks == 1) {
        mc_comm_t *comm;
        mc_reshard_params_t rp = {.field_mask = chunk ? MC_RESHARD_PARAM_CHUNK_BYTES : 0,
                                  .chunk_bytes = chunk};
        if ((s = mc_comm_create(NULL, &comm)) == MC_OK)
            s = mc_reshard(comm, plan, src->bufs, dst->bufs, &rp);
        if (s)
            snprintf(err, err_len, "%s", mc_last_error());
        mc_comm_destroy(comm);
        return s;
    }
    if ((s = mc_world_create(nranks, &world)))
        return s;
    for (int r = 0; r < nranks; r++) {
        args[r] = (rank_arg_t){world, r, plan, src->bufs, dst->bufs, chunk, MC_OK, ""};
        pthread_create(&th[r], NULL, rank_main, &args[r]);
    }
    for (int r = 0; r < nranks; r++) {
        pthread_join(th[r], NULL);
        if (args[r].status && !s) {
            s = args[r].status;
            snprintf(err, err_len, "rank %d: %s", r, args[r].error);
        }
    }
    mc_world_destroy(world);
    return s;
}

static void run_case(uint64_t seed, int64_t *nruns)
{
    rc_case_t c;
    char err[1024];
    if (rc_case_make(seed, RC_MAX_MESH, &c, err, sizeof err)) {
        report(&c, "generator", "%s", err);
        return;
    }
    rc_rng_t rng = {seed ^ 0x5eed};
    uint64_t pat = seed;
    tiles_t src;
    tiles_make(&src, c.src, 1, pat);
    for (int k = 0; k < NSTRAT; k++) {
        mc_plan_params_t params = {0};
        params.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER;
        mc_strategy_parse(strategies[k], &params.strategy, &params.sender);
        mc_plan_t *plan = NULL;
        if (mc_plan_create(c.src, c.dst, c.topo, &params, &plan)) {
            report(&c, strategies[k], "mc_plan_create: %s", mc_last_error());
            continue;
        }
        /* one rank, or 2..8 ranks as threads; chunks of the plan's size or tiny */
        int nranks = (int)(seed % 3 == 0 ? 1 : rc_range(&rng, 1, 8));
        int64_t chunk = rc_range(&rng, 0, 2) == 0 ? rc_range(&rng, 1, 64) : 0;
        tiles_t dst;
        tiles_make(&dst, c.dst, 0, pat);
        mc_status_t s = execute(plan, nranks, &src, &dst, chunk, err, sizeof err);
        (*nruns)++;
        if (s) {
            report(&c, strategies[k], "%d ranks, chunk %lld: status %d: %s", nranks,
                   (long long)chunk, s, err);
        } else {
            int64_t wrong = tiles_wrong(&dst, pat);
            if (wrong)
                report(&c, strategies[k], "%d ranks, chunk %lld: %lld wrong elements", nranks,
                       (long long)chunk, (long long)wrong);
        }
        tiles_free(&dst);
        mc_plan_destroy(plan);
    }
    tiles_free(&src);
    rc_case_free(&c);
}

static void test_random_cases(void **state)
{
    (void)state;
    int64_t nruns = 0, ncases = NCASES;
    uint64_t first = 1;
    const char *one = getenv("MC_TEST_SEED");
    if (one) {
        first = strtoull(one, NULL, 10);
        ncases = 1;
    }
    failures = 0;
    for (int64_t i = 0; i < ncases; i++)
        run_case(first + (uint64_t)i, &nruns);
    if (failures)
        fail_msg("%d failures over %lld cases (first %d printed; rerun one with MC_TEST_SEED=N)",
                 failures, (long long)ncases, MAX_REPORTS);
    printf("%lld cases, %lld executions verified element by element\n", (long long)ncases,
           (long long)nruns);
}

/* Cluster-scale shapes (issue 17) on small tensors: meshcast's straight sends and in-host
 * stars (dgx-h100: the tensors fit in one NIC latency), trees over hosts (a 100 us NIC
 * latency), relay chains (a slow NIC, no latency), each executed by 4 threads ranks and
 * checked element by element. */
static void test_scale_shapes(void **state)
{
    (void)state;
    static const char *const cases[][8] = {
        /* shape, src mesh, src spec, src devices, dst mesh, dst spec, dst devices, and
         * "m" where every host holds what it needs and the other host holds it too: on the
         * last topology (NICs as fast as a device port) the plan feeds part over the NIC */
        {"256,512", "1x8", "S10R", "0-7", "8x8", "RS1", "8-71", ""},
        {"512,256", "2x8", "RR", "0-15", "4x8", "RR", "16-47", ""},
        {"64,16,32", "8x8", "RRS1", "0-63", "8x8", "S10RR", "0-63", ""},
        {"512,256", "4x8", "RS1", "0-31", "4x8", "RS0", "32-63", ""},
        {"512,1024", "2x8", "RS1", "0-15", "2x8", "S1S0", "0-15", "m"},
        {"1024,512", "3x8", "RS1", "0-23", "3x8", "RS0", "0-23", "m"},
    };
    static const char *const topos[] = {
        "hosts 9\ndevices_per_host 8\nlink copy bandwidth=1600GB/s latency=2us\n"
        "link intra bandwidth=450GB/s latency=3us\nnic count=8 in=400Gbit/s out=400Gbit/s "
        "latency=10us\n",
        "hosts 9\ndevices_per_host 8\nlink copy bandwidth=1600GB/s latency=2us\n"
        "link intra bandwidth=100GB/s latency=5us\nnic count=2 in=10Gbit/s out=10Gbit/s "
        "latency=100us\n",
        "hosts 9\ndevices_per_host 8\nlink copy bandwidth=1600GB/s latency=0\n"
        "link intra bandwidth=450GB/s latency=0\nnic count=1 in=1Gbit/s out=1Gbit/s latency=0\n",
        "hosts 9\ndevices_per_host 8\nlink copy bandwidth=1600GB/s latency=0\n"
        "link intra bandwidth=50GB/s latency=0\nnic count=8 in=400Gbit/s out=400Gbit/s latency=0\n",
    };
    size_t last_topo = sizeof topos / sizeof topos[0] - 1;
    char err[1024];
    for (size_t t = 0; t < sizeof topos / sizeof topos[0]; t++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const char *const *c = cases[i];
            int64_t shape[3];
            int ndim = sscanf(c[0], "%lld,%lld,%lld", (long long *)&shape[0],
                              (long long *)&shape[1], (long long *)&shape[2]);
            mc_mesh_t *sm = NULL, *dm = NULL;
            mc_spec_t *ss = NULL, *ds = NULL;
            mc_layout_t *src = NULL, *dst = NULL;
            mc_topology_t *topo = NULL;
            mc_plan_t *plan = NULL;
            assert_int_equal(mc_mesh_parse(c[1], c[3], 0, &sm), MC_OK);
            assert_int_equal(mc_mesh_parse(c[4], c[6], 0, &dm), MC_OK);
            assert_int_equal(mc_spec_parse(c[2], sm, ndim, &ss), MC_OK);
            assert_int_equal(mc_spec_parse(c[5], dm, ndim, &ds), MC_OK);
            assert_int_equal(mc_layout_create(ndim, shape, MC_DTYPE_F32, sm, ss, &src), MC_OK);
            assert_int_equal(mc_layout_create(ndim, shape, MC_DTYPE_F32, dm, ds, &dst), MC_OK);
            assert_int_equal(mc_topology_parse(topos[t], "scale.topo", &topo), MC_OK);
            mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                                       .strategy = MC_STRATEGY_MESHCAST};
            if (mc_plan_create(src, dst, topo, &params, &plan))
                fail_msg("%s %s>%s: %s", c[0], c[2], c[5], mc_last_error());
            mc_plan_stats_t st;
            assert_int_equal(mc_plan_query(plan, &st), MC_OK);
            if (c[7][0] == 'm' && t == last_topo && st.nic_bytes == 0)
                fail_msg("%s %s>%s: no multi-path feeding (nothing crossed a NIC)", c[0], c[2],
                         c[5]);
            tiles_t in, out;
            tiles_make(&in, src, 1, 7 + i);
            tiles_make(&out, dst, 0, 7 + i);
            if (execute(plan, 4, &in, &out, 0, err, sizeof err))
                fail_msg("%s %s>%s on topology %zu: %s", c[0], c[2], c[5], t, err);
            int64_t wrong = tiles_wrong(&out, 7 + i);
            if (wrong)
                fail_msg("%s %s>%s on topology %zu: %lld wrong elements", c[0], c[2], c[5], t,
                         (long long)wrong);
            tiles_free(&in);
            tiles_free(&out);
            mc_plan_destroy(plan);
            mc_topology_destroy(topo);
            mc_layout_destroy(src);
            mc_layout_destroy(dst);
            mc_spec_destroy(ss);
            mc_spec_destroy(ds);
            mc_mesh_destroy(sm);
            mc_mesh_destroy(dm);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_cases),
        cmocka_unit_test(test_scale_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
