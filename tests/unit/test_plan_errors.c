/* Bad input to the library along the planning path (issue 2, acceptance 4): every call
 * returns an error status, leaves its output untouched, and sets a message that names the
 * problem; nothing leaks (CI runs this under ASan/LSan). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"

#define SENTINEL ((void *)(uintptr_t)0x1)

/* The call returned `got`; want an error (a specific one unless want == 0) whose message
 * contains every substring given. */
static void expect(const char *what, mc_status_t got, mc_status_t want, const char *sub1,
                   const char *sub2)
{
    const char *msg = mc_last_error();
    if (got >= 0 || (want && got != want))
        fail_msg("%s: status %d (%s), want %d; message '%s'", what, got, mc_status_string(got),
                 want, msg);
    if ((sub1 && !strstr(msg, sub1)) || (sub2 && !strstr(msg, sub2)))
        fail_msg("%s: message '%s' does not name the problem ('%s'%s%s)", what, msg, sub1,
                 sub2 ? ", '" : "", sub2 ? sub2 : "");
}

static mc_mesh_t *mesh_2x4(int64_t first)
{
    mc_mesh_t *m = NULL;
    assert_int_equal(mc_mesh_parse("2x4", NULL, first, &m), MC_OK);
    return m;
}

static mc_layout_t *layout(const int64_t *shape, int ndim, mc_dtype_t dtype, const char *mesh,
                           int64_t first, const char *spec_text)
{
    mc_mesh_t *m = NULL;
    mc_spec_t *s = NULL;
    mc_layout_t *l = NULL;
    assert_int_equal(mc_mesh_parse(mesh, NULL, first, &m), MC_OK);
    assert_int_equal(mc_spec_parse(spec_text, m, ndim, &s), MC_OK);
    assert_int_equal(mc_layout_create(ndim, shape, dtype, m, s, &l), MC_OK);
    mc_spec_destroy(s);
    mc_mesh_destroy(m);
    return l;
}

static void bad_spec(const char *text, int tensor_ndim, const char *sub1, const char *sub2)
{
    mc_mesh_t *m = mesh_2x4(0);
    mc_spec_t *out = SENTINEL;
    char what[128];
    snprintf(what, sizeof what, "spec \"%s\" (%d-d tensor, 2x4 mesh)", text, tensor_ndim);
    expect(what, mc_spec_parse(text, m, tensor_ndim, &out), 0, sub1, sub2);
    assert_ptr_equal(out, SENTINEL);
    mc_mesh_destroy(m);
}

static void test_bad_specs(void **state)
{
    (void)state;
    /* malformed, in each notation */
    bad_spec("S0X", 2, "malformed", NULL);
    bad_spec("SR", 2, "malformed", NULL);
    bad_spec("", 2, "empty", NULL);
    bad_spec("[Shard(0), Replicate()", 2, "malformed", NULL);
    bad_spec("[Shard(0) Replicate()]", 2, "malformed", NULL);
    bad_spec("[Shard(x), Replicate()]", 2, "malformed", NULL);
    bad_spec("P('x', None", 2, "malformed", NULL);
    bad_spec("P(x, None)", 2, "malformed", NULL);
    /* mesh axis out of range */
    bad_spec("S2R", 2, "out of range", NULL);
    bad_spec("[Shard(2), Replicate()]", 2, "out of range", NULL);
    bad_spec("P('q', None)", 2, "unknown mesh axis 'q'", NULL);
    /* mesh axis used twice */
    bad_spec("S0S0", 2, "used twice", NULL);
    bad_spec("S00R", 2, "used twice", NULL);
    bad_spec("P(('y', 'y'), None)", 2, "used twice", NULL);
    bad_spec("P('x', 'x')", 2, "used twice", NULL);
    /* rank mismatch */
    bad_spec("S0R", 3, "for a 3-d tensor", NULL);
    bad_spec("S0RRR", 3, "for a 3-d tensor", NULL);
    bad_spec("P('x', None, None)", 2, "for a 2-d tensor", NULL);
    bad_spec("[Shard(0)]", 2, "placements for a 2-axis mesh", NULL);
    bad_spec("S0", 0, "tensor rank 0", NULL);
    /* mc_spec_create: axis out of range, used twice */
    mc_mesh_t *m = mesh_2x4(0);
    mc_spec_t *out = SENTINEL;
    int naxes[2] = {1, 0}, axes2[1] = {2};
    expect("mc_spec_create axis 2", mc_spec_create(2, naxes, axes2, m, &out), 0, "out of range",
           NULL);
    int naxes_b[2] = {1, 1}, axes_b[2] = {0, 0};
    expect("mc_spec_create axis twice", mc_spec_create(2, naxes_b, axes_b, m, &out), 0,
           "used twice", NULL);
    assert_ptr_equal(out, SENTINEL);
    mc_mesh_destroy(m);
}

static void test_bad_meshes_and_layouts(void **state)
{
    (void)state;
    mc_mesh_t *m = SENTINEL;
    int64_t zero[2] = {2, 0}, ids_neg[2] = {0, -3}, ids_dup[2] = {5, 5}, one2[1] = {2};
    expect("mesh 2x0", mc_mesh_create(2, zero, NULL, NULL, &m), MC_ERR_INVALID, "must be positive",
           NULL);
    expect("mesh negative id", mc_mesh_create(1, one2, ids_neg, NULL, &m), MC_ERR_INVALID,
           "negative", NULL);
    expect("mesh duplicate id", mc_mesh_create(1, one2, ids_dup, NULL, &m), MC_ERR_INVALID,
           "more than once", NULL);
    expect("mesh text 2x0", mc_mesh_parse("2x0", NULL, 0, &m), MC_ERR_INVALID, "positive", NULL);
    expect("mesh text -2x4", mc_mesh_parse("-2x4", NULL, 0, &m), MC_ERR_INVALID, "'-2x4'", NULL);
    expect("mesh text huge", mc_mesh_parse("99999999999999999999x4", NULL, 0, &m), 0, "too large",
           NULL);
    expect("mesh device count", mc_mesh_parse("2x4", "0-6", 0, &m), MC_ERR_INVALID,
           "7 device ids for 8 devices", NULL);
    expect("mesh NULL", mc_mesh_create(1, NULL, NULL, NULL, &m), MC_ERR_INVALID, "NULL", NULL);
    assert_ptr_equal(m, SENTINEL);

    mc_mesh_t *mesh = mesh_2x4(0);
    mc_spec_t *spec = NULL;
    assert_int_equal(mc_spec_parse("S0R", mesh, 2, &spec), MC_OK);
    mc_layout_t *l = SENTINEL;
    int64_t s_zero[2] = {0, 4}, s_neg[2] = {-4, 4}, s_big[2] = {INT64_MAX / 2, 4},
            s_ok[3] = {4, 4, 4}, s_f64[2] = {(int64_t)1 << 62, 1};
    expect("layout 0,4", mc_layout_create(2, s_zero, MC_DTYPE_F32, mesh, spec, &l), MC_ERR_INVALID,
           "dim 0 has size 0", NULL);
    expect("layout -4,4", mc_layout_create(2, s_neg, MC_DTYPE_F32, mesh, spec, &l), MC_ERR_INVALID,
           "dim 0 has size -4", NULL);
    expect("layout overflow", mc_layout_create(2, s_big, MC_DTYPE_U8, mesh, spec, &l),
           MC_ERR_OVERFLOW, "does not fit", NULL);
    expect("layout 2^62 f64 bytes", mc_layout_create(2, s_f64, MC_DTYPE_F64, mesh, spec, &l),
           MC_ERR_OVERFLOW, "does not fit", NULL);
    expect("layout rank mismatch", mc_layout_create(3, s_ok, MC_DTYPE_F32, mesh, spec, &l),
           MC_ERR_INVALID, "2-d tensor", "3 dims");
    expect("layout bad dtype", mc_layout_create(2, s_ok, (mc_dtype_t)99, mesh, spec, &l),
           MC_ERR_INVALID, "dtype", NULL);
    expect("layout NULL mesh", mc_layout_create(2, s_ok, MC_DTYPE_F32, NULL, spec, &l),
           MC_ERR_INVALID, "NULL", NULL);
    mc_mesh_t *mesh3 = NULL;
    assert_int_equal(mc_mesh_parse("2x2x2", NULL, 0, &mesh3), MC_OK);
    expect("layout mesh rank mismatch", mc_layout_create(2, s_ok, MC_DTYPE_F32, mesh3, spec, &l),
           MC_ERR_INVALID, "2-axis mesh", "3 axes");
    assert_ptr_equal(l, SENTINEL);
    mc_mesh_destroy(mesh3);
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);

    mc_dtype_t dt = MC_DTYPE_I8;
    expect("dtype f33", mc_dtype_parse("f33", &dt), MC_ERR_INVALID, "dtype 'f33': unknown", NULL);
    expect("dtype empty", mc_dtype_parse("", &dt), MC_ERR_INVALID, "unknown", NULL);
    expect("dtype NULL", mc_dtype_parse(NULL, &dt), MC_ERR_INVALID, "NULL", NULL);
    assert_int_equal(dt, MC_DTYPE_I8);
}

static void test_bad_strategy_and_topology(void **state)
{
    (void)state;
    mc_strategy_t st = MC_STRATEGY_SEND_RECV;
    mc_sender_choice_t se = MC_SENDER_FIRST;
    expect("strategy nosuch", mc_strategy_parse("nosuch", &st, &se), MC_ERR_INVALID,
           "unknown strategy 'nosuch'", NULL);
    expect("strategy empty", mc_strategy_parse("", &st, &se), MC_ERR_INVALID, "unknown strategy",
           NULL);
    expect("strategy NULL", mc_strategy_parse(NULL, &st, &se), MC_ERR_INVALID, "unknown strategy",
           NULL);
    assert_int_equal(st, MC_STRATEGY_SEND_RECV);
    assert_int_equal(se, MC_SENDER_FIRST);
    assert_null(mc_strategy_name((mc_strategy_t)42, MC_SENDER_FIRST));

    mc_topology_t *t = SENTINEL;
    expect("topology nosuch", mc_topology_load("nosuch", &t), MC_ERR_NOT_FOUND,
           "unknown topology 'nosuch'", NULL);
    expect("topology missing file", mc_topology_load("/nonexistent/x.topo", &t), 0,
           "/nonexistent/x.topo", NULL);
    expect("topology NULL", mc_topology_load(NULL, &t), MC_ERR_INVALID, "NULL", NULL);
    assert_ptr_equal(t, SENTINEL);
}

typedef struct {
    mc_layout_t *src, *dst;
    mc_topology_t *topo;
} fixture_t;

/* 8,8 f32 S0R on devices 0-7 -> RS0 on devices 8-15, p3.8xlarge with 4 hosts. */
static fixture_t fixture(void)
{
    fixture_t f;
    int64_t shape[2] = {8, 8};
    f.src = layout(shape, 2, MC_DTYPE_F32, "2x4", 0, "S0R");
    f.dst = layout(shape, 2, MC_DTYPE_F32, "2x4", 8, "RS0");
    assert_int_equal(mc_topology_load("p3.8xlarge", &f.topo), MC_OK);
    assert_int_equal(mc_topology_set_hosts(f.topo, 4), MC_OK);
    return f;
}

static void fixture_free(fixture_t *f)
{
    mc_layout_destroy(f->src);
    mc_layout_destroy(f->dst);
    mc_topology_destroy(f->topo);
}

static void test_bad_plans(void **state)
{
    (void)state;
    fixture_t f = fixture();
    mc_plan_t *p = SENTINEL;
    double bound = -7;
    /* the fixture itself plans */
    mc_plan_t *ok = NULL;
    assert_int_equal(mc_plan_create(f.src, f.dst, f.topo, NULL, &ok), MC_OK);

    /* meshes that do not fit: 3 hosts hold devices 0-11 only */
    mc_topology_t *small = NULL;
    assert_int_equal(mc_topology_copy(f.topo, &small), MC_OK);
    assert_int_equal(mc_topology_set_hosts(small, 3), MC_OK);
    expect("dst beyond topology", mc_plan_create(f.src, f.dst, small, NULL, &p), MC_ERR_INVALID,
           "do not fit", "dst device 12");
    expect("bound: dst beyond topology", mc_lower_bound(f.src, f.dst, small, &bound),
           MC_ERR_INVALID, "do not fit", NULL);
    assert_int_equal(mc_topology_set_hosts(small, 1), MC_OK);
    expect("src beyond topology", mc_plan_create(f.src, f.dst, small, NULL, &p), MC_ERR_INVALID,
           "do not fit", "src device 4");
    mc_topology_destroy(small);

    /* src/dst shape and dtype mismatch */
    int64_t other[2] = {8, 16};
    mc_layout_t *wide = layout(other, 2, MC_DTYPE_F32, "2x4", 8, "RS0");
    expect("shape mismatch", mc_plan_create(f.src, wide, f.topo, NULL, &p), MC_ERR_INVALID,
           "src shape", "differs from dst shape");
    expect("bound: shape mismatch", mc_lower_bound(f.src, wide, f.topo, &bound), MC_ERR_INVALID,
           "differs", NULL);
    mc_layout_destroy(wide);
    int64_t three[3] = {8, 8, 1};
    mc_layout_t *deep = layout(three, 3, MC_DTYPE_F32, "2x4", 8, "RS0R");
    expect("rank mismatch", mc_plan_create(f.src, deep, f.topo, NULL, &p), MC_ERR_INVALID,
           "differs from dst shape", NULL);
    mc_layout_destroy(deep);
    int64_t same[2] = {8, 8};
    mc_layout_t *ints = layout(same, 2, MC_DTYPE_I32, "2x4", 8, "RS0");
    expect("dtype mismatch", mc_plan_create(f.src, ints, f.topo, NULL, &p), MC_ERR_INVALID,
           "dtype f32 differs from dst dtype i32", NULL);
    mc_layout_destroy(ints);

    /* bad params */
    mc_plan_params_t bad = {MC_PLAN_PARAM_STRATEGY, (mc_strategy_t)17, 0, 0, 0};
    expect("strategy 17", mc_plan_create(f.src, f.dst, f.topo, &bad, &p), MC_ERR_INVALID,
           "unknown strategy 17", NULL);
    bad = (mc_plan_params_t){MC_PLAN_PARAM_STRATEGY, (mc_strategy_t)-1, 0, 0, 0};
    expect("strategy -1", mc_plan_create(f.src, f.dst, f.topo, &bad, &p), MC_ERR_INVALID,
           "unknown strategy", NULL);
    bad = (mc_plan_params_t){MC_PLAN_PARAM_SENDER, 0, (mc_sender_choice_t)9, 0, 0};
    expect("sender 9", mc_plan_create(f.src, f.dst, f.topo, &bad, &p), MC_ERR_INVALID,
           "unknown sender choice 9", NULL);
    bad = (mc_plan_params_t){MC_PLAN_PARAM_CHUNK_BYTES, 0, 0, -4096, 0};
    expect("chunk -4096", mc_plan_create(f.src, f.dst, f.topo, &bad, &p), MC_ERR_INVALID,
           "chunk_bytes -4096 is negative", NULL);

    /* NULL arguments */
    expect("plan NULL src", mc_plan_create(NULL, f.dst, f.topo, NULL, &p), MC_ERR_INVALID, "NULL",
           NULL);
    expect("plan NULL dst", mc_plan_create(f.src, NULL, f.topo, NULL, &p), MC_ERR_INVALID, "NULL",
           NULL);
    expect("plan NULL topo", mc_plan_create(f.src, f.dst, NULL, NULL, &p), MC_ERR_INVALID, "NULL",
           NULL);
    expect("plan NULL out", mc_plan_create(f.src, f.dst, f.topo, NULL, NULL), MC_ERR_INVALID,
           "NULL", NULL);
    assert_ptr_equal(p, SENTINEL);
    assert_true(bound == -7);
    mc_plan_stats_t stats;
    memset(&stats, 0x5a, sizeof stats);
    expect("query NULL plan", mc_plan_query(NULL, &stats), MC_ERR_INVALID, "NULL", NULL);
    expect("query NULL out", mc_plan_query(ok, NULL), MC_ERR_INVALID, "NULL", NULL);
    expect("validate NULL", mc_plan_validate(NULL), MC_ERR_INVALID, "NULL", NULL);
    expect("write NULL plan", mc_plan_write(NULL, MC_FORMAT_TEXT, stdout), MC_ERR_INVALID, "NULL",
           NULL);
    expect("write NULL file", mc_plan_write(ok, MC_FORMAT_JSON, NULL), MC_ERR_INVALID, "NULL",
           NULL);
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    expect("write format 9", mc_plan_write(ok, (mc_format_t)9, sink), MC_ERR_INVALID,
           "unknown plan format 9", NULL);
    fclose(sink);
    expect("bound NULL src", mc_lower_bound(NULL, f.dst, f.topo, &bound), MC_ERR_INVALID, "NULL",
           NULL);
    expect("bound NULL out", mc_lower_bound(f.src, f.dst, f.topo, NULL), MC_ERR_INVALID, "NULL",
           NULL);
    assert_true(bound == -7);
    mc_plan_destroy(NULL); /* accepted */
    mc_plan_destroy(ok);
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_bad_meshes_and_layouts),
        cmocka_unit_test(test_bad_strategy_and_topology),
        cmocka_unit_test(test_bad_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
