/* Multi-trees over hosts (lib/plan/multitree.c):
 * - the tree shape, hand-worked: 27 needing hosts from one holder host in 4 stripes of degree
 *   4 (g0100 of seed 44 of the scale benchmark): stripe 0's forwarders are hosts 0-5 (4
 *   copies each) and 6 (2), stripe 1's 7-12 and 6 (its other 2), stripe 2's 13-18 and 19 (2),
 *   stripe 3's 20-25 and 19; host 26 hangs off host 6 in stripe 0, four NIC hops down. 5
 *   hosts from 2 holder hosts in 2 stripes of degree 2: two tops per stripe, one per holder;
 * - the shape, random (n, roots, k) and every n up to 70 and k up to 17, against its
 *   invariants: every needing host once per stripe, after its parent; only the first
 *   min(roots, n) positions hang off holder hosts (the holder hosts are only roots), each
 *   holder host the parent of one of them per stripe (fewer tops: in turn); each host forwards
 *   at most k copies in all (so at most the piece); with at least k copies per stripe to
 *   forward, every host forwards in at most two stripes' trees and at most k - 1 hosts in two
 *   (those where one stripe's forwarders end and the next's begin); depth at most
 *   ceil(log_k n) + 1 NIC hops for k >= 2 (at most 3 where a stripe has fewer than k copies to
 *   forward: two forwarders may share it);
 * - the plan (mc_strategy_multitree) of a piece from one host to every device of 8 more, with
 *   pooled NICs and with two NICs per host on rails: every stripe enters every needing host
 *   once over the NIC, no host sends more than the piece over its NIC, the holder host sends
 *   each stripe once, and the plan delivers every destination element (thread ranks). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "exec_harness.h"
#include "plan/plan_internal.h"

typedef struct {
    int64_t *order, *parent;
} shape_t;

static shape_t shape(int64_t n, int64_t roots, int k, int64_t start)
{
    shape_t s = {calloc((size_t)(k * n + 1), sizeof(int64_t)),
                 calloc((size_t)(k * n + 1), sizeof(int64_t))};
    assert_non_null(s.order);
    assert_non_null(s.parent);
    assert_int_equal(mc_multitree_shape(n, roots, k, start, s.order, s.parent), MC_OK);
    return s;
}

static void shape_free(shape_t *s)
{
    free(s->order);
    free(s->parent);
}

/* Position of host h in stripe j. */
static int64_t pos_of(const shape_t *s, int64_t n, int j, int64_t h)
{
    for (int64_t q = 0; q < n; q++)
        if (s->order[j * n + q] == h)
            return q;
    fail_msg("host %lld not in stripe %d", (long long)h, j);
    return -1;
}

/* Parent host of host h in stripe j (-1 - r: holder host r). */
static int64_t parent_of(const shape_t *s, int64_t n, int j, int64_t h)
{
    int64_t p = s->parent[j * n + pos_of(s, n, j, h)];
    return p < 0 ? p : s->order[j * n + p];
}

static void test_hand(void **state)
{
    (void)state;
    int64_t n = 27;
    shape_t s = shape(n, 1, 4, 0);
    /* forwarders in order of position, and their copies */
    const int64_t fw[4][7] = {{0, 1, 2, 3, 4, 5, 6},
                              {7, 8, 9, 10, 11, 12, 6},
                              {13, 14, 15, 16, 17, 18, 19},
                              {20, 21, 22, 23, 24, 25, 19}};
    for (int j = 0; j < 4; j++) {
        for (int q = 0; q < 7; q++)
            assert_int_equal(s.order[j * n + q], fw[j][q]);
        assert_int_equal(s.parent[j * n], -1); /* the top, off the holder host */
        for (int64_t q = 1; q < n; q++)        /* 4 children each, the last forwarder 2 */
            assert_int_equal(s.parent[j * n + q], (q - 1) / 4);
    }
    assert_int_equal(parent_of(&s, n, 0, 26), 6);
    assert_int_equal(parent_of(&s, n, 0, 6), 1);
    assert_int_equal(parent_of(&s, n, 0, 1), 0);
    assert_int_equal(parent_of(&s, n, 0, 0), -1);
    assert_int_equal(parent_of(&s, n, 1, 26), 11); /* position 20 (leaves from 13 on) */
    shape_free(&s);
    /* two holder hosts, 5 needing hosts, 2 stripes of degree 2 */
    n = 5;
    s = shape(n, 2, 2, 0);
    const int64_t order[2][5] = {{0, 1, 2, 3, 4}, {2, 1, 3, 4, 0}};
    const int64_t parent[2][5] = {{-1, -2, 0, 0, 1}, {-1, -2, 0, 0, 1}};
    for (int j = 0; j < 2; j++)
        for (int q = 0; q < 5; q++) {
            assert_int_equal(s.order[j * n + q], order[j][q]);
            assert_int_equal(s.parent[j * n + q], parent[j][q]);
        }
    shape_free(&s);
}

/* Checks one shape's invariants (the file's comment). */
static void check(int64_t n, int64_t roots, int k, int64_t start)
{
    shape_t s = shape(n, roots, k, start);
    int64_t tops = roots < n ? roots : n;
    int64_t *sent = calloc((size_t)n + 1, sizeof *sent), *trees = calloc((size_t)n + 1, 8);
    int64_t *kids = calloc((size_t)n + 1, sizeof *kids), *depth = calloc((size_t)n + 1, 8);
    int64_t *root_use = calloc((size_t)roots, sizeof *root_use);
    char *seen = calloc((size_t)n + 1, 1);
    int fails = 0;
    /* depth bound: ceil(log_k n) + 1 NIC hops (the tops at 1); where the stripes need fewer
     * copies than k each, at most two forwarders share a stripe: 3 */
    int64_t bound = 1;
    for (int64_t reach = 1; k >= 2 && reach < n; reach *= k)
        bound++;
    if (n - tops < k && bound < 3)
        bound = 3;
    for (int j = 0; j < k; j++) {
        const int64_t *ord = s.order + (int64_t)j * n, *par = s.parent + (int64_t)j * n;
        memset(seen, 0, (size_t)n);
        memset(kids, 0, (size_t)n * sizeof *kids);
        for (int64_t q = 0; q < n; q++) {
            int64_t h = ord[q];
            fails += h < 0 || h >= n || seen[h];
            if (h < 0 || h >= n)
                break;
            seen[h] = 1;
            if (q < tops) { /* a top: off a holder host, each once per stripe */
                fails += par[q] >= 0 || -1 - par[q] >= roots;
                if (par[q] < 0 && -1 - par[q] < roots)
                    root_use[-1 - par[q]]++;
                depth[q] = 1;
                continue;
            }
            fails += par[q] < 0 || par[q] >= q; /* holder hosts only roots; parents first */
            if (par[q] < 0 || par[q] >= q)
                continue;
            kids[ord[par[q]]]++;
            depth[q] = depth[par[q]] + 1;
            fails += k >= 2 && depth[q] > bound;
        }
        for (int64_t h = 0; h < n; h++) {
            sent[h] += kids[h];
            trees[h] += kids[h] > 0;
        }
    }
    int64_t shared = 0;
    for (int64_t h = 0; h < n; h++) {
        fails += sent[h] > k;
        shared += trees[h] > 1;
        if (n - tops >= k)
            fails += trees[h] > 2;
    }
    if (n - tops >= k)
        fails += shared > k - 1;
    /* holder hosts share the tops: per stripe one each, or fewer tops in turn */
    for (int64_t r = 0; r < roots; r++)
        fails += root_use[r] > (k * tops + roots - 1) / roots;
    if (fails)
        fail_msg("n %lld roots %lld k %d start %lld: %d invariants broken", (long long)n,
                 (long long)roots, k, (long long)start, fails);
    free(sent);
    free(trees);
    free(kids);
    free(depth);
    free(root_use);
    free(seen);
    shape_free(&s);
}

static void test_random(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t n = 1 + (int64_t)(x % 200), roots = 1 + (int64_t)((x >> 16) % 6);
        check(n, roots, 1 + (int)((x >> 24) % 32), (int64_t)((x >> 48) % 1000));
    }
    for (int64_t n = 1; n <= 70; n++) /* every size up to 70 */
        for (int k = 1; k <= 17; k++)
            check(n, 1 + n % 3, k, n);
}

/* The multi-tree plan of 2 MiB from one host to every device of 8 more on topology text
 * (in place of send_recv's flows): its invariants, then executed. */
static void check_plan(const char *topo_text)
{
    int64_t shape_[2] = {512, 256};
    mc_mesh_t *sm = NULL, *dm = NULL;
    mc_spec_t *ss = NULL, *ds = NULL;
    mc_layout_t *src = NULL, *dst = NULL;
    mc_topology_t *topo = NULL;
    assert_int_equal(mc_mesh_parse("1x8", "0-7", 0, &sm), MC_OK);
    assert_int_equal(mc_mesh_parse("8x8", "8-71", 0, &dm), MC_OK);
    assert_int_equal(mc_spec_parse("RR", sm, 2, &ss), MC_OK);
    assert_int_equal(mc_spec_parse("RR", dm, 2, &ds), MC_OK);
    assert_int_equal(mc_layout_create(2, shape_, MC_DTYPE_F32, sm, ss, &src), MC_OK);
    assert_int_equal(mc_layout_create(2, shape_, MC_DTYPE_F32, dm, ds, &dst), MC_OK);
    assert_int_equal(mc_topology_parse(topo_text, "tree.topo", &topo), MC_OK);
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                               .strategy = MC_STRATEGY_SEND_RECV};
    mc_plan_t *plan = NULL;
    if (mc_plan_create(src, dst, topo, &params, &plan))
        fail_msg("plan: %s", mc_last_error());
    assert_int_equal(plan->pieces->npieces, 1);
    int64_t piece = plan->pieces->pieces[0].bytes;
    free(plan->flows);
    free(plan->edges);
    plan->flows = NULL;
    plan->edges = NULL;
    plan->nflows = plan->flows_cap = plan->nedges = plan->edges_cap = 0;
    assert_int_equal(mc_strategy_multitree(plan, 4, 16 << 10), MC_OK);
    assert_int_equal(mc_plan_set_chunks(plan), MC_OK);
    assert_int_equal(plan->nflows, 4);
    int64_t out[9] = {0}, tops = 0;
    for (int64_t i = 0; i < plan->nflows; i++) {
        const mc_flow_t *fl = &plan->flows[i];
        int entered[9] = {0};
        for (int64_t e = 0; e < fl->nedges; e++) {
            int64_t a = plan->edges[fl->edge0 + e].from / 8, b = plan->edges[fl->edge0 + e].to / 8;
            if (a == b)
                continue;
            entered[b]++;
            out[a] += fl->bytes;
            tops += a == 0;
        }
        for (int h = 1; h < 9; h++)
            assert_int_equal(entered[h], 1);
    }
    assert_int_equal(tops, 4); /* the holder host sends each stripe once */
    for (int h = 0; h < 9; h++)
        assert_true(out[h] <= piece);
    assert_int_equal(mc_plan_validate(plan), MC_OK);
    char err[1024];
    int64_t wrong = eh_run_pattern(plan, src, dst, 4, 13, err, sizeof err);
    if (wrong < 0)
        fail_msg("multi-tree: %s", err);
    if (wrong)
        fail_msg("multi-tree: %lld wrong elements", (long long)wrong);
    mc_plan_destroy(plan);
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    mc_spec_destroy(ss);
    mc_spec_destroy(ds);
    mc_mesh_destroy(sm);
    mc_mesh_destroy(dm);
}

static void test_plan(void **state)
{
    (void)state;
    /* pooled NICs, and two NICs per host on rails (a relay's crossing from the device whose
     * NIC is free first) */
    check_plan("hosts 9\ndevices_per_host 8\nlink copy bandwidth=1600GB/s latency=2us\n"
               "link intra bandwidth=100GB/s latency=5us\nnic count=2 in=10Gbit/s "
               "out=10Gbit/s latency=100us\n");
    check_plan("hosts 9\ndevices_per_host 8\nlink copy bandwidth=1600GB/s latency=2us\n"
               "link intra bandwidth=100GB/s latency=5us\nnic count=2 in=10Gbit/s "
               "out=10Gbit/s latency=100us\nnic-affinity map=0,0,0,0,1,1,1,1 rails\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
