/* Cost follows what is used: a plan on huge, sparse device ids and a cluster of 2^40 hosts
 * is the plan on small ids (same figures, ids moved), made in milliseconds; chunks per
 * plan stay within MC_PLAN_MAX_CHUNKS (meshcast's kept plan MC_PLAN_MAX_REFINED_CHUNKS) whatever
 * --chunk or the tensor size asks for. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"

static mc_layout_t *layout(int ndim, const int64_t *shape, const int64_t *ids, const char *spec)
{
    int64_t mshape[2] = {2, 2};
    mc_mesh_t *m = NULL;
    mc_spec_t *s = NULL;
    mc_layout_t *l = NULL;
    assert_int_equal(mc_mesh_create(2, mshape, ids, NULL, &m), MC_OK);
    assert_int_equal(mc_spec_parse(spec, m, ndim, &s), MC_OK);
    assert_int_equal(mc_layout_create(ndim, shape, MC_DTYPE_F32, m, s, &l), MC_OK);
    mc_spec_destroy(s);
    mc_mesh_destroy(m);
    return l;
}

static mc_plan_t *plan(const mc_layout_t *src, const mc_layout_t *dst, const mc_topology_t *topo,
                       mc_strategy_t strategy, mc_sender_choice_t sender, int64_t chunk)
{
    mc_plan_params_t p = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER |
                                        MC_PLAN_PARAM_CHUNK_BYTES,
                          .strategy = strategy,
                          .sender = sender,
                          .chunk_bytes = chunk};
    mc_plan_t *out = NULL;
    if (mc_plan_create(src, dst, topo, &p, &out) != MC_OK)
        fail_msg("plan: %s", mc_last_error());
    return out;
}

/* The plan's flow lines ("flow ... chunk C: a->b c=>d"), edge ids mapped from small[k] to
 * big[k] when big is not NULL. */
static char *flows(const mc_plan_t *p, const int64_t *small, const int64_t *big, int n)
{
    char *buf = NULL, *out = NULL;
    size_t len = 0, olen = 0;
    FILE *f = open_memstream(&buf, &len), *o = open_memstream(&out, &olen);
    assert_non_null(f);
    assert_non_null(o);
    assert_int_equal(mc_plan_write(p, MC_FORMAT_TEXT, f), MC_OK);
    fclose(f);
    for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "flow ", 5) || !(colon = strstr(line, "chunk ")) ||
            !(colon = strchr(colon, ':')))
            continue;
        fprintf(o, "%.*s", (int)(colon - line + 1), line);
        for (char *q = colon + 1; *q;) {
            if (*q < '0' || *q > '9') {
                fputc(*q++, o);
                continue;
            }
            long long v = strtoll(q, &q, 10);
            for (int k = 0; big && k < n; k++)
                if (small[k] == v) {
                    v = big[k];
                    break;
                }
            fprintf(o, "%lld", v);
        }
        fputc('\n', o);
    }
    fclose(o);
    free(buf);
    return out;
}

static void test_sparse_ids_plan_like_dense(void **state)
{
    (void)state;
    /* dgx-a100: 8 devices per host. Small ids on hosts 0, 1, 3; big ids keep the host
     * pattern (same offsets in a host, hosts in the same order and grouping). */
    const int64_t base = (int64_t)1 << 40; /* a multiple of 8 */
    int64_t s_small[4] = {0, 1, 8, 9}, d_small[4] = {2, 3, 24, 25};
    int64_t s_big[4] = {base, base + 1, 3 * base, 3 * base + 1};
    int64_t d_big[4] = {base + 2, base + 3, 5 * base, 5 * base + 1};
    int64_t all_small[8] = {0, 1, 8, 9, 2, 3, 24, 25};
    int64_t all_big[8] = {s_big[0], s_big[1], s_big[2], s_big[3],
                          d_big[0], d_big[1], d_big[2], d_big[3]};
    int64_t shape[2] = {64, 48};
    mc_topology_t *small_topo = NULL, *big_topo = NULL;
    assert_int_equal(mc_topology_load("dgx-a100", &small_topo), MC_OK);
    assert_int_equal(mc_topology_load("dgx-a100", &big_topo), MC_OK);
    /* the bound counts every host as a relay: give both clusters the same hosts */
    assert_int_equal(mc_topology_set_hosts(small_topo, base), MC_OK);
    assert_int_equal(mc_topology_set_hosts(big_topo, base), MC_OK);
    mc_layout_t *ss = layout(2, shape, s_small, "S0S1"), *ds = layout(2, shape, d_small, "S1R");
    mc_layout_t *sb = layout(2, shape, s_big, "S0S1"), *db = layout(2, shape, d_big, "S1R");
    const struct {
        mc_strategy_t st;
        mc_sender_choice_t se;
    } kinds[] = {{MC_STRATEGY_SEND_RECV, MC_SENDER_LB_SIZE},
                 {MC_STRATEGY_LOCAL_ALLGATHER, MC_SENDER_LB_SIZE},
                 {MC_STRATEGY_BROADCAST, MC_SENDER_FIRST},
                 {MC_STRATEGY_BROADCAST, MC_SENDER_LB_ORDER},
                 {MC_STRATEGY_MESHCAST, MC_SENDER_LB_SIZE}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        mc_plan_t *a = plan(ss, ds, small_topo, kinds[k].st, kinds[k].se, 0);
        mc_plan_t *b = plan(sb, db, big_topo, kinds[k].st, kinds[k].se, 0);
        mc_plan_stats_t sa, sb_;
        assert_int_equal(mc_plan_query(a, &sa), MC_OK);
        assert_int_equal(mc_plan_query(b, &sb_), MC_OK);
        if (sb_.plan_ms > 200)
            fail_msg("planning on ids near 2^42 took %.1f ms", sb_.plan_ms);
        assert_int_equal(sa.pieces, sb_.pieces);
        assert_int_equal(sa.messages, sb_.messages);
        assert_int_equal(sa.chunks, sb_.chunks);
        assert_int_equal(sa.nic_bytes, sb_.nic_bytes);
        assert_int_equal(sa.intra_host_bytes, sb_.intra_host_bytes);
        assert_int_equal(sa.peak_staging_bytes, sb_.peak_staging_bytes);
        assert_true(sa.estimate_s == sb_.estimate_s && sa.lower_bound_s == sb_.lower_bound_s);
        char *fa = flows(a, all_small, all_big, 8), *fb = flows(b, NULL, NULL, 0);
        assert_true(strlen(fa) > 0);
        assert_string_equal(fa, fb);
        assert_int_equal(mc_plan_validate(b), MC_OK);
        free(fa);
        free(fb);
        mc_plan_destroy(a);
        mc_plan_destroy(b);
    }
    double lb = 0;
    assert_int_equal(mc_lower_bound(sb, db, big_topo, &lb), MC_OK);
    assert_true(lb > 0);
    mc_layout_destroy(ss);
    mc_layout_destroy(ds);
    mc_layout_destroy(sb);
    mc_layout_destroy(db);
    mc_topology_destroy(small_topo);
    mc_topology_destroy(big_topo);
}

static void test_chunks_capped(void **state)
{
    (void)state;
    /* 2^40 x 2^8 f32 = 1 PiB, and a 256 KiB case with 1-byte chunks asked for */
    int64_t huge[2] = {(int64_t)1 << 40, 256}, small[2] = {256, 256};
    int64_t s_ids[4] = {0, 1, 2, 3}, d_ids[4] = {4, 5, 6, 7};
    mc_topology_t *topo = NULL;
    assert_int_equal(mc_topology_load("p3.8xlarge", &topo), MC_OK);
    assert_int_equal(mc_topology_set_hosts(topo, 2), MC_OK);
    for (int c = 0; c < 2; c++) {
        mc_layout_t *src = layout(2, c ? small : huge, s_ids, "S0S1");
        mc_layout_t *dst = layout(2, c ? small : huge, d_ids, "S1S0");
        mc_plan_t *p = plan(src, dst, topo, MC_STRATEGY_MESHCAST, MC_SENDER_LB_SIZE, c ? 1 : 0);
        mc_plan_stats_t st;
        assert_int_equal(mc_plan_query(p, &st), MC_OK);
        assert_true(st.chunks > 0);
        assert_true(st.chunks <= MC_PLAN_MAX_REFINED_CHUNKS);
        if (st.plan_ms > 2000)
            fail_msg("case %d planned in %.0f ms", c, st.plan_ms);
        mc_plan_destroy(p);
        mc_layout_destroy(src);
        mc_layout_destroy(dst);
    }
    mc_topology_destroy(topo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_ids_plan_like_dense),
        cmocka_unit_test(test_chunks_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
