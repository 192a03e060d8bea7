/* Planning-speed benchmark: a 3-D tensor between two fine-sharded N x 8 meshes on disjoint
 * hosts of a dgx-h100 cluster, for 64, 256 and 1024 devices per mesh; every strategy; the
 * median of repeated mc_plan_create calls (plan_ms covers pieces + strategy + chunking).
 * The finest pattern (S01RR > RS01R: every source tile meets every destination tile, N^2
 * pieces) runs up to 256 devices; broadcast_lb_order (Alpa's randomized rounds, quadratic)
 * only up to 256 devices.
 * Usage: plan_speed [repeats [max_devices]]   (defaults 7 and 1024) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meshcast/meshcast.h"
#define BENCH_NAME "plan_speed"
#include "bench_util.h"

static int check(mc_status_t s, const char *what)
{
    if (s != MC_OK)
        fprintf(stderr, "plan_speed: %s: %s\n", what, mc_last_error());
    return s != MC_OK;
}

static mc_layout_t *layout(int64_t rows, const int64_t *shape, int64_t first, const char *spec)
{
    char mesh_text[32];
    mc_mesh_t *mesh = NULL;
    mc_spec_t *sp = NULL;
    mc_layout_t *l = NULL;
    snprintf(mesh_text, sizeof mesh_text, "%lldx8", (long long)rows);
    if (!check(mc_mesh_parse(mesh_text, NULL, first, &mesh), "mesh") &&
        !check(mc_spec_parse(spec, mesh, 3, &sp), "spec"))
        check(mc_layout_create(3, shape, MC_DTYPE_F32, mesh, sp, &l), "layout");
    mc_spec_destroy(sp);
    mc_mesh_destroy(mesh);
    return l;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 7;
    int64_t max_devices = argc > 2 ? atoll(argv[2]) : 1024;
    const char *strategies[] = {"send_recv",         "local_allgather",    "broadcast_first",
                                "broadcast_lb_size", "broadcast_lb_order", "meshcast"};
    const struct {
        const char *src, *dst;
    } patterns[] = {{"S0S1R", "S1S0R"}, {"S01RR", "RS01R"}};
    const int64_t shape[3] = {8192, 8192, 16};
    if (repeats < 1)
        repeats = 1;
    printf("%-8s %-14s %-18s %8s %8s %10s %10s\n", "devices", "specs", "strategy", "pieces",
           "flows", "plan_ms", "est/bound");
    for (int64_t rows = 8; rows * 8 <= max_devices; rows *= 4) {
        mc_topology_t *topo = NULL;
        if (check(mc_topology_load("dgx-h100", &topo), "topology") ||
            check(mc_topology_set_hosts(topo, 2 * rows), "hosts"))
            return 1;
        for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
            if (p == 1 && rows * 8 > 256)
                continue;
            mc_layout_t *src = layout(rows, shape, 0, patterns[p].src);
            mc_layout_t *dst = layout(rows, shape, rows * 8, patterns[p].dst);
            if (!src || !dst)
                return 1;
            for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++) {
                if (!strcmp(strategies[k], "broadcast_lb_order") && rows * 8 > 256)
                    continue;
                mc_plan_params_t params = {.field_mask =
                                               MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER};
                double *ms = calloc((size_t)repeats, sizeof *ms);
                mc_plan_stats_t st = {0};
                if (!ms || check(mc_strategy_parse(strategies[k], &params.strategy, &params.sender),
                                 "strategy"))
                    return 1;
                for (int r = 0; r < repeats; r++) {
                    mc_plan_t *plan = NULL;
                    if (check(mc_plan_create(src, dst, topo, &params, &plan), strategies[k]))
                        return 1;
                    mc_plan_query(plan, &st);
                    ms[r] = st.plan_ms;
                    mc_plan_destroy(plan);
                }
                qsort(ms, (size_t)repeats, sizeof *ms, bench_cmp_double);
                char specs[32];
                snprintf(specs, sizeof specs, "%s>%s", patterns[p].src, patterns[p].dst);
                fflush(stdout);
                printf("%-8lld %-14s %-18s %8lld %8lld %10.3f %10.4f\n", (long long)(rows * 8),
                       specs, strategies[k], (long long)st.pieces, (long long)st.flows,
                       ms[repeats / 2], st.estimate_s / st.lower_bound_s);
                free(ms);
            }
            mc_layout_destroy(src);
            mc_layout_destroy(dst);
        }
        mc_topology_destroy(topo);
    }
    return 0;
}
