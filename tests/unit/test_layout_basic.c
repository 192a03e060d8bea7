/* Dtypes, meshes, layouts, tiles and pieces on hand-checked cases; error statuses and
 * messages; pieces timing for 256 -> 256 devices. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/layout.h"
#include "layouts/layout_internal.h"
#include "layouts/pieces.h"
#include "util/util.h"

#define assert_error(call, status, text)                                                           \
    do {                                                                                           \
        mc_status_t st_ = (call);                                                                  \
        if (st_ != (status) || !strstr(mc_last_error(), (text)))                                   \
            fail_msg("%s: got %d '%s', want %d '%s'", #call, st_, mc_last_error(), (status),       \
                     (text));                                                                      \
    } while (0)

static mc_layout_t *make_layout(const char *mesh, const char *devices, int64_t first,
                                const char *spec, int ndim, const int64_t *shape, mc_dtype_t dt)
{
    mc_mesh_t *m = NULL;
    mc_spec_t *s = NULL;
    mc_layout_t *l = NULL;
    if (mc_mesh_parse(mesh, devices, first, &m) || mc_spec_parse(spec, m, ndim, &s) ||
        mc_layout_create(ndim, shape, dt, m, s, &l))
        fail_msg("layout %s %s: %s", mesh, spec, mc_last_error());
    mc_spec_destroy(s);
    mc_mesh_destroy(m);
    return l;
}

static void test_dtypes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        mc_dtype_t dt;
        size_t size;
    } cases[] = {
        {"f64", MC_DTYPE_F64, 8},     {"float64", MC_DTYPE_F64, 8},   {"f32", MC_DTYPE_F32, 4},
        {"float32", MC_DTYPE_F32, 4}, {"f16", MC_DTYPE_F16, 2},       {"float16", MC_DTYPE_F16, 2},
        {"bf16", MC_DTYPE_BF16, 2},   {"bfloat16", MC_DTYPE_BF16, 2}, {"i64", MC_DTYPE_I64, 8},
        {"int64", MC_DTYPE_I64, 8},   {"i32", MC_DTYPE_I32, 4},       {"int32", MC_DTYPE_I32, 4},
        {"i16", MC_DTYPE_I16, 2},     {"int16", MC_DTYPE_I16, 2},     {"i8", MC_DTYPE_I8, 1},
        {"int8", MC_DTYPE_I8, 1},     {"u8", MC_DTYPE_U8, 1},         {"uint8", MC_DTYPE_U8, 1},
        {"bool", MC_DTYPE_BOOL, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mc_dtype_t dt = MC_DTYPE_COUNT;
        assert_int_equal(mc_dtype_parse(cases[i].name, &dt), MC_OK);
        assert_int_equal(dt, cases[i].dt);
        assert_int_equal(mc_dtype_size(dt), cases[i].size);
    }
    for (int d = 0; d < MC_DTYPE_COUNT; d++) {
        mc_dtype_t back;
        assert_int_equal(mc_dtype_parse(mc_dtype_name((mc_dtype_t)d), &back), MC_OK);
        assert_int_equal(back, d);
    }
    mc_dtype_t dt = MC_DTYPE_I8;
    assert_error(mc_dtype_parse("f31", &dt), MC_ERR_INVALID, "dtype 'f31': unknown");
    assert_int_equal(dt, MC_DTYPE_I8);
    assert_null(mc_dtype_name(MC_DTYPE_COUNT));
    assert_int_equal(mc_dtype_size((mc_dtype_t)-1), 0);
}

static void test_meshes(void **state)
{
    (void)state;
    mc_mesh_t *m = NULL;
    assert_int_equal(mc_mesh_parse("2x4", "0-3,8-11", 0, &m), MC_OK);
    assert_int_equal(mc_mesh_ndim(m), 2);
    assert_int_equal(mc_mesh_size(m), 8);
    assert_int_equal(mc_mesh_axis_size(m, 1), 4);
    assert_int_equal(mc_mesh_device(m, 5), 9);
    assert_int_equal(mc_mesh_device(m, 8), -1);
    assert_int_equal(mc_mesh_find(m, 10), 6);
    assert_int_equal(mc_mesh_find(m, 4), -1);
    assert_string_equal(mc_mesh_axis_name(m, 0), "x");
    assert_null(mc_mesh_axis_name(m, 2));
    mc_mesh_t *c = NULL;
    assert_int_equal(mc_mesh_copy(m, &c), MC_OK);
    assert_int_equal(mc_mesh_device(c, 7), 11);
    mc_mesh_destroy(c);
    mc_mesh_destroy(m);
    assert_int_equal(mc_mesh_parse("8", NULL, 16, &m), MC_OK);
    assert_int_equal(mc_mesh_device(m, 0), 16);
    mc_mesh_destroy(m);
    assert_int_equal(mc_mesh_parse("2x2x2x2x2x2x2x2", NULL, 0, &m), MC_OK);
    assert_string_equal(mc_mesh_axis_name(m, 7), "s");
    mc_mesh_destroy(m);
    mc_mesh_destroy(NULL);

    m = (mc_mesh_t *)(uintptr_t)0x1;
    assert_error(mc_mesh_parse("2x4", "0-5", 0, &m), MC_ERR_INVALID,
                 "mesh '2x4': 6 device ids for 8 devices");
    assert_error(mc_mesh_parse("2x4", "0-3,3-6", 0, &m), MC_ERR_INVALID,
                 "mesh '2x4': device id 3 appears more than once");
    assert_error(mc_mesh_parse("2x4", "0-3,a", 0, &m), MC_ERR_INVALID, "mesh '2x4'");
    assert_error(mc_mesh_parse("2x0", NULL, 0, &m), MC_ERR_INVALID, "sizes must be positive");
    assert_error(mc_mesh_parse("2y4", NULL, 0, &m), MC_ERR_INVALID, "unexpected 'y'");
    assert_error(mc_mesh_parse("", NULL, 0, &m), MC_ERR_INVALID, "expected sizes like 2x4");
    assert_error(mc_mesh_parse("2x2x2x2x2x2x2x2x2", NULL, 0, &m), MC_ERR_INVALID,
                 "more than 8 axes");
    assert_error(mc_mesh_parse("4", NULL, -1, &m), MC_ERR_INVALID, "negative");
    assert_error(mc_mesh_parse("99999999999x99999999", NULL, 0, &m), MC_ERR_OVERFLOW,
                 "too many devices");
    int64_t shape[2] = {2, 2}, ids[4] = {0, 1, 2, -4}, dup[4] = {5, 6, 5, 7};
    assert_error(mc_mesh_create(2, shape, ids, NULL, &m), MC_ERR_INVALID,
                 "device id -4 at index 3 is negative");
    assert_error(mc_mesh_create(2, shape, dup, NULL, &m), MC_ERR_INVALID,
                 "device id 5 appears more than once");
    assert_error(mc_mesh_create(0, shape, NULL, NULL, &m), MC_ERR_INVALID, "0 axes");
    assert_error(mc_mesh_create(9, shape, NULL, NULL, &m), MC_ERR_INVALID, "9 axes");
    int64_t neg[2] = {2, -1};
    assert_error(mc_mesh_create(2, neg, NULL, NULL, &m), MC_ERR_INVALID, "axis 1 has size -1");
    const char *same[2] = {"dp", "dp"}, *bad[2] = {"dp", "1tp"}, *empty[2] = {"", "a"};
    assert_error(mc_mesh_create(2, shape, NULL, same, &m), MC_ERR_INVALID,
                 "axis name 'dp' used twice");
    assert_error(mc_mesh_create(2, shape, NULL, bad, &m), MC_ERR_INVALID,
                 "axis 1 name '1tp' is not an identifier");
    assert_error(mc_mesh_create(2, shape, NULL, empty, &m), MC_ERR_INVALID, "not an identifier");
    const char *longn[2] = {"a", "abcdefghijabcdefghijabcdefghijabcdefghij"};
    assert_error(mc_mesh_create(2, shape, NULL, longn, &m), MC_ERR_INVALID, "too long");
    assert_ptr_equal(m, (mc_mesh_t *)(uintptr_t)0x1);
}

static void test_chunk_range(void **state)
{
    (void)state;
    /* torch.chunk(arange(10), 4): sizes 3,3,3,1.  chunk(arange(5), 4): 2,2,1,0. */
    static const int64_t want10[4][2] = {{0, 3}, {3, 6}, {6, 9}, {9, 10}};
    static const int64_t want5[4][2] = {{0, 2}, {2, 4}, {4, 5}, {5, 5}};
    /* chunk(arange(2), 8): 1,1,0,...  and chunk(arange(6), 4): 2,2,2,0. */
    int64_t lo, hi;
    for (int i = 0; i < 4; i++) {
        mc_chunk_range(10, 4, i, &lo, &hi);
        assert_int_equal(lo, want10[i][0]);
        assert_int_equal(hi, want10[i][1]);
        mc_chunk_range(5, 4, i, &lo, &hi);
        assert_int_equal(lo, want5[i][0]);
        assert_int_equal(hi, want5[i][1]);
    }
    mc_chunk_range(6, 4, 3, &lo, &hi);
    assert_true(lo == 6 && hi == 6);
    mc_chunk_range(2, 8, 5, &lo, &hi);
    assert_true(lo == 2 && hi == 2);
    mc_chunk_range(INT64_MAX, 3, 2, &lo, &hi);
    assert_true(hi == INT64_MAX && lo == 2 * (INT64_MAX / 3 + 1));
    mc_chunk_range(10, 4, 4, &lo, &hi);
    assert_true(lo == 0 && hi == 0);
}

static void test_layout_tiles(void **state)
{
    (void)state;
    /* 10 x 6 on a 2x2 mesh (devices 2..5), dim 1 over (y, x): K = 4, c = 2. */
    int64_t shape[2] = {10, 6};
    mc_layout_t *l = make_layout("2x2", "2-5", 0, "P(None, ('y','x'))", 2, shape, MC_DTYPE_F32);
    assert_int_equal(mc_layout_ndim(l), 2);
    assert_int_equal(mc_layout_dim(l, 1), 6);
    assert_int_equal(mc_layout_dtype(l), MC_DTYPE_F32);
    assert_int_equal(mc_layout_bytes(l), 240);
    assert_int_equal(mc_layout_shards(l, 0), 1);
    assert_int_equal(mc_layout_shards(l, 1), 4);
    /* mesh index 1 = (x 0, y 1): index y*2 + x = 2. */
    assert_int_equal(mc_layout_shard_index(l, 1, 1), 2);
    assert_int_equal(mc_layout_shard_index(l, 1, 2), 1);
    static const int64_t want[4][2] = {{0, 2}, {4, 6}, {2, 4}, {6, 6}};
    for (int64_t i = 0; i < 4; i++) {
        mc_box_t b;
        assert_int_equal(mc_layout_tile(l, 2 + i, &b), MC_OK);
        assert_true(b.lo[0] == 0 && b.hi[0] == 10);
        assert_int_equal(b.lo[1], want[i][0]);
        assert_int_equal(b.hi[1], want[i][1]);
    }
    mc_box_t b = {{7}, {7}};
    assert_error(mc_layout_tile(l, 0, &b), MC_ERR_INVALID, "device 0 is not in the layout's mesh");
    assert_int_equal(b.lo[0], 7);
    mc_layout_t *c = NULL;
    assert_int_equal(mc_layout_copy(l, &c), MC_OK);
    assert_int_equal(mc_spec_dim_axis(mc_layout_spec(c), 1, 0), 1);
    assert_int_equal(mc_mesh_device(mc_layout_mesh(c), 3), 5);
    mc_layout_destroy(c);
    mc_layout_destroy(l);
    mc_layout_destroy(NULL);
}

static void test_layout_errors(void **state)
{
    (void)state;
    mc_mesh_t *m = NULL, *m3 = NULL;
    mc_spec_t *s = NULL, *s3 = NULL;
    assert_int_equal(mc_mesh_parse("2x4", NULL, 0, &m), MC_OK);
    assert_int_equal(mc_mesh_parse("2x2x2", NULL, 0, &m3), MC_OK);
    assert_int_equal(mc_spec_parse("S0S1", m, 2, &s), MC_OK);
    assert_int_equal(mc_spec_parse("S0S1R", m3, 3, &s3), MC_OK);
    mc_layout_t *l = (mc_layout_t *)(uintptr_t)0x1;
    int64_t zero[2] = {4, 0}, neg[2] = {-4, 4}, big[2] = {(int64_t)1 << 40, (int64_t)1 << 22};
    int64_t ok[3] = {4, 4, 4};
    assert_error(mc_layout_create(2, zero, MC_DTYPE_F32, m, s, &l), MC_ERR_INVALID,
                 "dim 1 has size 0");
    assert_error(mc_layout_create(2, neg, MC_DTYPE_F32, m, s, &l), MC_ERR_INVALID,
                 "dim 0 has size -4");
    assert_error(mc_layout_create(2, big, MC_DTYPE_F32, m, s, &l), MC_ERR_OVERFLOW, "does not fit");
    big[1] = (int64_t)1 << 21; /* 2^61 elements of 4 bytes: bytes overflow */
    assert_error(mc_layout_create(2, big, MC_DTYPE_F32, m, s, &l), MC_ERR_OVERFLOW, "does not fit");
    assert_error(mc_layout_create(3, ok, MC_DTYPE_F32, m, s, &l), MC_ERR_INVALID,
                 "spec is for a 2-d tensor, shape has 3 dims");
    assert_error(mc_layout_create(3, ok, MC_DTYPE_F32, m, s3, &l), MC_ERR_INVALID,
                 "spec is for a 3-axis mesh, mesh has 2 axes");
    assert_error(mc_layout_create(2, ok, MC_DTYPE_COUNT, m, s, &l), MC_ERR_INVALID,
                 "invalid dtype");
    assert_error(mc_layout_create(0, ok, MC_DTYPE_F32, m, s, &l), MC_ERR_INVALID, "0 dims");
    assert_ptr_equal(l, (mc_layout_t *)(uintptr_t)0x1);
    mc_spec_destroy(s);
    mc_spec_destroy(s3);
    mc_mesh_destroy(m);
    mc_mesh_destroy(m3);
}

static void test_pieces_small(void **state)
{
    (void)state;
    /* src: rows split over x on devices 0..3; dst: cols split over (y, x) on devices 2..5
     * (overlapping ids 2 and 3). */
    int64_t shape[2] = {10, 6};
    mc_layout_t *a = make_layout("2x2", NULL, 0, "S0R", 2, shape, MC_DTYPE_F32);
    mc_layout_t *b = make_layout("2x2", NULL, 2, "[Replicate(), Shard(1)]", 2, shape, MC_DTYPE_F32);
    mc_pieces_t *p = NULL;
    assert_int_equal(mc_pieces_compute(a, b, &p), MC_OK);
    /* dst dim 1 over y (K = 2, c = 3): dev 2,4 -> cols [0,3); dev 3,5 -> [3,6). */
    static const struct {
        int64_t lo0, hi0, lo1, hi1;
        const char *holders, *needers, *self;
    } want[] = {
        {0, 5, 0, 3, "0 1", "2 4", ""},
        {0, 5, 3, 6, "0 1", "3 5", ""},
        {5, 10, 0, 3, "2 3", "4", "2"},
        {5, 10, 3, 6, "2 3", "5", "3"},
    };
    assert_int_equal(p->npieces, 4);
    assert_int_equal(p->ndim, 2);
    assert_int_equal(p->elem_size, 4);
    for (int i = 0; i < 4; i++) {
        const mc_piece_t *q = &p->pieces[i];
        char h[64] = "", n[64] = "", s[64] = "";
        for (int k = 0; k < q->nholders; k++)
            sprintf(h + strlen(h), "%s%lld", k ? " " : "", (long long)q->holders[k]);
        for (int k = 0; k < q->nneeders; k++)
            sprintf(n + strlen(n), "%s%lld", k ? " " : "", (long long)q->needers[k]);
        for (int k = 0; k < q->nself; k++)
            sprintf(s + strlen(s), "%s%lld", k ? " " : "", (long long)q->self[k]);
        assert_int_equal(q->box.lo[0], want[i].lo0);
        assert_int_equal(q->box.hi[0], want[i].hi0);
        assert_int_equal(q->box.lo[1], want[i].lo1);
        assert_int_equal(q->box.hi[1], want[i].hi1);
        assert_int_equal(q->bytes, 5 * 3 * 4);
        assert_string_equal(h, want[i].holders);
        assert_string_equal(n, want[i].needers);
        assert_string_equal(s, want[i].self);
    }
    mc_pieces_destroy(p);
    /* Identical layouts: everything is a local copy. */
    assert_int_equal(mc_pieces_compute(a, a, &p), MC_OK);
    assert_int_equal(p->npieces, 2);
    for (int i = 0; i < 2; i++)
        assert_true(p->pieces[i].nneeders == 0 && p->pieces[i].nself == 2);
    mc_pieces_destroy(p);
    mc_pieces_destroy(NULL);
    mc_layout_destroy(a);
    mc_layout_destroy(b);
}

static void test_pieces_errors(void **state)
{
    (void)state;
    int64_t s1[2] = {4, 8}, s2[2] = {4, 6}, s3[3] = {4, 8, 1};
    mc_layout_t *a = make_layout("2", NULL, 0, "S0R", 2, s1, MC_DTYPE_F32);
    mc_layout_t *b = make_layout("2", NULL, 0, "RS0", 2, s2, MC_DTYPE_F32);
    mc_layout_t *c = make_layout("2", NULL, 0, "RS0", 2, s1, MC_DTYPE_BF16);
    mc_layout_t *d = make_layout("2", NULL, 0, "RS0R", 3, s3, MC_DTYPE_F32);
    mc_pieces_t *p = (mc_pieces_t *)(uintptr_t)0x1;
    assert_error(mc_pieces_compute(a, b, &p), MC_ERR_INVALID,
                 "src shape [4,8] differs from dst shape [4,6]");
    assert_error(mc_pieces_compute(a, d, &p), MC_ERR_INVALID,
                 "src shape [4,8] differs from dst shape [4,8,1]");
    assert_error(mc_pieces_compute(a, c, &p), MC_ERR_INVALID,
                 "src dtype f32 differs from dst dtype bf16");
    assert_ptr_equal(p, (mc_pieces_t *)(uintptr_t)0x1);
    mc_layout_destroy(a);
    mc_layout_destroy(b);
    mc_layout_destroy(c);
    mc_layout_destroy(d);
}

/* Fine shardings on 3-d tensors, 256 -> 256 and 1024 -> 1024 devices. */
static void test_pieces_timing(void **state)
{
    (void)state;
    static const struct {
        const char *smesh, *sspec, *dmesh, *dspec;
        int64_t dst_first;
        double limit_ms;
    } cases[] = {
        {"4x8x8", "S0S1S2", "8x4x8", "S21S0R", 256, 10},
        {"4x8x8", "S0S1S2", "8x4x8", "S2S0S1", 128, 10},
        {"16x16", "S0S1R", "16x16", "RS0S1", 0, 10},
        {"4x16x16", "S01S2R", "32x32", "S1S0R", 512, 50},
        {"32x32", "S0S1R", "32x32", "S1RS0", 1024, 200},
    };
    int64_t shape[3] = {1024, 1000, 777};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mc_layout_t *a =
            make_layout(cases[i].smesh, NULL, 0, cases[i].sspec, 3, shape, MC_DTYPE_BF16);
        mc_layout_t *b = make_layout(cases[i].dmesh, NULL, cases[i].dst_first, cases[i].dspec, 3,
                                     shape, MC_DTYPE_BF16);
        mc_pieces_t *p = NULL;
        double best = 1e9;
        for (int r = 0; r < 5; r++) {
            double t0 = mc_now();
            assert_int_equal(mc_pieces_compute(a, b, &p), MC_OK);
            double t = (mc_now() - t0) * 1e3;
            best = t < best ? t : best;
            int64_t total = 0;
            for (int64_t k = 0; k < p->npieces; k++)
                total += p->pieces[k].bytes;
            assert_int_equal(total, mc_layout_bytes(a));
            if (r == 4)
                print_message("%s %s -> %s %s: %lld pieces, %.3f ms\n", cases[i].smesh,
                              cases[i].sspec, cases[i].dmesh, cases[i].dspec, (long long)p->npieces,
                              best);
            mc_pieces_destroy(p);
        }
        /* Generous: sanitizer builds are several times slower. */
        assert_true(best < cases[i].limit_ms * 10);
        mc_layout_destroy(a);
        mc_layout_destroy(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtypes),        cmocka_unit_test(test_meshes),
        cmocka_unit_test(test_chunk_range),   cmocka_unit_test(test_layout_tiles),
        cmocka_unit_test(test_layout_errors), cmocka_unit_test(test_pieces_small),
        cmocka_unit_test(test_pieces_errors), cmocka_unit_test(test_pieces_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
