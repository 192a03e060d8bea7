/* Hand-worked planner cases (issue 2, acceptance 3) on p3.8xlarge (4 devices per host, one
 * 10 Gbit/s NIC = 1.25e9 B/s each way, 25 us NIC latency):
 * - 1 GiB int32 from device 0 to 4 hosts x 2 devices, RRR -> RRR: every destination host
 *   needs 2^30 bytes it does not hold, so the bound is 2^30 / 1.25e9 + 25 us;
 * - 2 GiB S0RR -> S0RR 2x4 -> 2x4 on disjoint hosts: each destination host needs its half,
 *   2^30 bytes: same bound; send_recv sends it to each of 4 devices per host, meshcast
 *   crosses each host once, so send_recv's nic_bytes are 4x meshcast's;
 * - every case of benchmarks/suites/alpa-{n-to-m,1-to-m}.cases (parsed here, with the CLI's
 *   defaults for device ids and hosts): meshcast's estimate <= 1.05 x the bound, and no
 *   strategy's estimate is below meshcast's by more than 1e-9 relative. */
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

static const char *const strategies[] = {"send_recv",          "local_allgather",
                                         "broadcast_first",    "broadcast_lb_size",
                                         "broadcast_lb_order", "meshcast"};
#define NSTRAT 6
#define MESHCAST 5

typedef struct {
    char name[64];
    const char *shape, *dtype, *src_mesh, *src_devices, *src_spec, *dst_mesh, *dst_devices,
        *dst_spec;
} case_t;

typedef struct {
    mc_layout_t *src, *dst;
    mc_topology_t *topo;
} built_t;

static void built_free(built_t *b)
{
    mc_layout_destroy(b->src);
    mc_layout_destroy(b->dst);
    mc_topology_destroy(b->topo);
}

static mc_layout_t *make_layout(int ndim, const int64_t *shape, mc_dtype_t dtype,
                                const char *mesh_text, const char *devices, int64_t first,
                                const char *spec_text)
{
    mc_mesh_t *mesh = NULL;
    mc_spec_t *spec = NULL;
    mc_layout_t *layout = NULL;
    if (mc_mesh_parse(mesh_text, devices, first, &mesh))
        fail_msg("mesh %s: %s", mesh_text, mc_last_error());
    if (mc_spec_parse(spec_text, mesh, ndim, &spec))
        fail_msg("spec %s: %s", spec_text, mc_last_error());
    if (mc_layout_create(ndim, shape, dtype, mesh, spec, &layout))
        fail_msg("layout: %s", mc_last_error());
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    return layout;
}

static int64_t max_device(const mc_layout_t *l)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    int64_t top = -1;
    for (int64_t i = 0; i < mc_mesh_size(m); i++)
        if (mc_mesh_device(m, i) > top)
            top = mc_mesh_device(m, i);
    return top;
}

/* As `meshcast plan` builds a case: dst ids follow the source's, p3.8xlarge with as many
 * hosts as the devices need. */
static built_t build(const case_t *c)
{
    built_t b = {0};
    int64_t shape[MC_MAX_NDIM];
    int ndim = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", c->shape);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        shape[ndim++] = strtoll(t, NULL, 10);
    mc_dtype_t dtype;
    assert_int_equal(mc_dtype_parse(c->dtype ? c->dtype : "f32", &dtype), MC_OK);
    b.src = make_layout(ndim, shape, dtype, c->src_mesh, c->src_devices, 0, c->src_spec);
    b.dst = make_layout(ndim, shape, dtype, c->dst_mesh, c->dst_devices, max_device(b.src) + 1,
                        c->dst_spec);
    assert_int_equal(mc_topology_load("p3.8xlarge", &b.topo), MC_OK);
    int64_t top = max_device(b.src) > max_device(b.dst) ? max_device(b.src) : max_device(b.dst);
    assert_int_equal(mc_topology_set_hosts(b.topo, top / mc_topology_devices_per_host(b.topo) + 1),
                     MC_OK);
    return b;
}

static mc_plan_stats_t plan_stats(const built_t *b, const char *strategy)
{
    mc_plan_params_t p = {MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER, 0, 0, 0, 0};
    mc_plan_t *plan = NULL;
    mc_plan_stats_t st;
    assert_int_equal(mc_strategy_parse(strategy, &p.strategy, &p.sender), MC_OK);
    if (mc_plan_create(b->src, b->dst, b->topo, &p, &plan))
        fail_msg("%s: mc_plan_create: %s", strategy, mc_last_error());
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    assert_int_equal(st.valid, 1);
    mc_plan_destroy(plan);
    return st;
}

static int close_rel(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

static void test_one_to_many(void **state)
{
    (void)state;
    const case_t c = {"1to4x2", "1024,1024,256",       "i32", "1x1", "0", "RRR",
                      "4x2",    "4-5,8-9,12-13,16-17", "RRR"};
    built_t b = build(&c);
    /* the slow-start term: 4 hosts need the GiB the one holder host sends. Their NICs must
     * pass all but the 1.25e9 B/s x 5 us / 2 bytes that can go straight to both devices of
     * a host in the last intra-host latency, by 25 + 5 us before the end, and in the first
     * 25 us only the holder's NIC sends (1.25e9 B/s x 25 us for the 4 together), so
     * T >= 2 x 25 us + 5 us + (4·c - 1.25e9 x 25e-6) / (4 x 1.25e9) (docs/planning.md).
     * The relay term alone says 2.5 us less. */
    const double c_h = ldexp(1, 30) - 1.25e9 * 5e-6 / 2;
    const double want = (4 * c_h - 1.25e9 * 25e-6) / (4 * 1.25e9) + 2 * 25e-6 + 5e-6;
    double bound = 0;
    assert_int_equal(mc_lower_bound(b.src, b.dst, b.topo, &bound), MC_OK);
    if (!close_rel(bound, want, 1e-12))
        fail_msg("1to4x2: bound %.17g, want %.17g", bound, want);
    mc_plan_stats_t m = plan_stats(&b, "meshcast");
    assert_true(close_rel(m.lower_bound_s, want, 1e-12));
    /* each destination host is crossed into once; each needs 2^30 bytes */
    assert_int_equal(m.nic_bytes, 4 * ((int64_t)1 << 30));
    mc_plan_stats_t s = plan_stats(&b, "send_recv");
    assert_int_equal(s.nic_bytes, 8 * ((int64_t)1 << 30));
    assert_true(m.estimate_s <= 1.05 * want);
    built_free(&b);
}

static void test_s0_to_s0_disjoint(void **state)
{
    (void)state;
    const case_t c = {"case1", "1024,1024,512", "i32", "2x4", NULL, "S0RR", "2x4", NULL, "S0RR"};
    built_t b = build(&c);
    /* devices 0-7 on hosts 0-1, 8-15 on hosts 2-3 */
    assert_int_equal(mc_topology_hosts(b.topo), 4);
    /* the relay term inside a destination host: its 4 devices need the GiB, which enters
     * through the NIC (25 us); straight to each device, or to one and on (5 us more) */
    const double want = (ldexp(1, 30) - 1.25e9 * 5e-6 / 4) / 1.25e9 + 25e-6 + 5e-6;
    mc_plan_stats_t m = plan_stats(&b, "meshcast"), s = plan_stats(&b, "send_recv");
    if (!close_rel(m.lower_bound_s, want, 1e-12))
        fail_msg("case1: bound %.17g, want %.17g", m.lower_bound_s, want);
    assert_true(close_rel(s.lower_bound_s, want, 1e-12));
    assert_int_equal(m.nic_bytes, 2 * ((int64_t)1 << 30));
    if (s.nic_bytes != 4 * m.nic_bytes)
        fail_msg("send_recv nic_bytes %lld, meshcast %lld: want 4x", (long long)s.nic_bytes,
                 (long long)m.nic_bytes);
    assert_int_equal(s.messages, 8);
    assert_true(m.estimate_s <= 1.05 * want);
    built_free(&b);
}

/* ---- the Alpa suites ---- */

static char *read_suite(const char *name)
{
    const char *dir = getenv("MESHCAST_SOURCE_DIR");
    char path[1024];
    if (dir)
        snprintf(path, sizeof path, "%s/benchmarks/suites/%s", dir, name);
    else /* __FILE__ is .../tests/unit/test_plan_hand.c */
        snprintf(path, sizeof path, "%.*s/benchmarks/suites/%s",
                 (int)(strlen(__FILE__) - strlen("/tests/unit/test_plan_hand.c")), __FILE__, name);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s (set MESHCAST_SOURCE_DIR)", path);
    char *text = calloc(1, 1 << 16);
    assert_non_null(text);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* Parses "name --opt value ..." in place into c; returns 0 for a comment or blank line. */
static int parse_line(char *line, case_t *c)
{
    memset(c, 0, sizeof *c);
    char *save = NULL, *tok = strtok_r(line, " \t", &save);
    if (!tok || tok[0] == '#')
        return 0;
    snprintf(c->name, sizeof c->name, "%s", tok);
    while ((tok = strtok_r(NULL, " \t", &save))) {
        char *val = strtok_r(NULL, " \t", &save);
        if (!val)
            fail_msg("case %s: option %s has no value", c->name, tok);
        const char **slot = !strcmp(tok, "--shape")         ? &c->shape
                            : !strcmp(tok, "--dtype")       ? &c->dtype
                            : !strcmp(tok, "--src-mesh")    ? &c->src_mesh
                            : !strcmp(tok, "--src-devices") ? &c->src_devices
                            : !strcmp(tok, "--src-spec")    ? &c->src_spec
                            : !strcmp(tok, "--dst-mesh")    ? &c->dst_mesh
                            : !strcmp(tok, "--dst-devices") ? &c->dst_devices
                            : !strcmp(tok, "--dst-spec")    ? &c->dst_spec
                                                            : NULL;
        if (!slot)
            fail_msg("case %s: unexpected option %s", c->name, tok);
        *slot = val;
    }
    return 1;
}

static int run_suite(const char *file, int *ncases)
{
    char *text = read_suite(file);
    int bad = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        case_t c;
        if (!parse_line(line, &c))
            continue;
        (*ncases)++;
        built_t b = build(&c);
        mc_plan_stats_t st[NSTRAT];
        for (int k = 0; k < NSTRAT; k++)
            st[k] = plan_stats(&b, strategies[k]);
        const mc_plan_stats_t *m = &st[MESHCAST];
        if (!(m->estimate_s <= 1.05 * m->lower_bound_s)) {
            fprintf(stderr, "FAIL %s %s: meshcast estimate %.9g s = %.4f x bound %.9g s (> 1.05)\n",
                    file, c.name, m->estimate_s, m->estimate_s / m->lower_bound_s,
                    m->lower_bound_s);
            bad++;
        }
        for (int k = 0; k < MESHCAST; k++) {
            if (st[k].estimate_s < m->estimate_s * (1 - 1e-9)) {
                fprintf(stderr,
                        "FAIL %s %s: %s estimate %.9g s is below meshcast's %.9g s (%.3f%% "
                        "lower)\n",
                        file, c.name, strategies[k], st[k].estimate_s, m->estimate_s,
                        100 * (1 - st[k].estimate_s / m->estimate_s));
                bad++;
            }
            if (!(st[k].estimate_s >= st[k].lower_bound_s * (1 - 1e-9)))
                fail_msg("%s %s: %s estimate %.17g below bound %.17g", file, c.name, strategies[k],
                         st[k].estimate_s, st[k].lower_bound_s);
        }
        built_free(&b);
    }
    free(text);
    return bad;
}

static void test_alpa_suites(void **state)
{
    (void)state;
    int n1 = 0, n2 = 0;
    int bad = run_suite("alpa-n-to-m.cases", &n1) + run_suite("alpa-1-to-m.cases", &n2);
    assert_int_equal(n1, 9);
    assert_int_equal(n2, 7);
    if (bad)
        fail_msg("%d suite checks failed (listed above)", bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_to_many),
        cmocka_unit_test(test_s0_to_s0_disjoint),
        cmocka_unit_test(test_alpa_suites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
