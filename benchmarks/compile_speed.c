/* Program compile time against plan size: mc_program_compile for rank 0 of one rank (every
 * op of the plan lands on it), median CPU time of a few compiles, per plan edge. A linear
 * compiler keeps ns/edge flat as plans grow. Cases, on dgx-h100 device ids: a 1 -> n
 * broadcast as one chain (broadcast_first: one flow of n edges, the worst case for a
 * compiler that scans a flow's ops per edge), the same broadcast as local_allgather (n
 * flows of 8 edges), and S01RR -> RS01R between two (n/8)x8 meshes (n^2 one-edge flows).
 * Usage: compile_speed [repeats] [max_devices]   (defaults 5 and 16384) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "exec/program.h"
#include "meshcast/meshcast.h"
#include "plan/plan_internal.h"
#define BENCH_NAME "compile_speed"
#include "bench_util.h"

static void run_case(const char *name, const int64_t *shape, const char *smesh, const char *sspec,
                     const char *dmesh, const char *dspec, int64_t dfirst, int64_t hosts,
                     const char *strategy, int repeats)
{
    mc_layout_t *src = bench_layout(3, shape, smesh, 0, sspec);
    mc_layout_t *dst = bench_layout(3, shape, dmesh, dfirst, dspec);
    mc_topology_t *topo;
    mc_plan_t *plan;
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER};
    if (mc_strategy_parse(strategy, &params.strategy, &params.sender) ||
        mc_topology_load("dgx-h100", &topo) || mc_topology_set_hosts(topo, hosts) ||
        mc_plan_create(src, dst, topo, &params, &plan))
        bench_die(name);
    double *t = calloc((size_t)repeats, sizeof *t);
    int64_t nops = 0;
    for (int r = 0; t && r < repeats; r++) {
        mc_program_t *p;
        double t0 = bench_cpu_now();
        if (mc_program_compile(plan, 0, 1, 0, &p))
            bench_die("compile");
        t[r] = bench_cpu_now() - t0;
        nops = p->nops;
        mc_program_destroy(p);
    }
    if (!t)
        exit(1);
    double med = bench_median(t, repeats);
    printf("%-22s %8lld %8lld %8lld %12.3f %10.1f\n", name, (long long)plan->nflows,
           (long long)plan->nedges, (long long)nops, 1e3 * med, 1e9 * med / (double)plan->nedges);
    free(t);
    mc_plan_destroy(plan);
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 5;
    int64_t max = argc > 2 ? atoll(argv[2]) : 16384;
    if (repeats < 1 || max < 8 || max > 65536) {
        fprintf(stderr, "compile_speed: repeats must be >= 1, max_devices in [8, 65536]\n");
        return 2;
    }
    printf("%-22s %8s %8s %8s %12s %10s\n", "case", "flows", "edges", "ops", "compile_ms",
           "ns/edge");
    const int64_t bshape[3] = {16, 16, 1}; /* 1 KiB to every device */
    for (int64_t n = 256 < max ? 256 : max; n <= max; n *= 4) {
        char mesh[32], name[32];
        snprintf(mesh, sizeof mesh, "%lldx8", (long long)(n / 8));
        snprintf(name, sizeof name, "chain_1->%lld", (long long)n);
        run_case(name, bshape, "1x1", "RRR", mesh, "RRR", 8, n / 8 + 1, "broadcast_first", repeats);
        snprintf(name, sizeof name, "allgather_1->%lld", (long long)n);
        run_case(name, bshape, "1x1", "RRR", mesh, "RRR", 8, n / 8 + 1, "local_allgather", repeats);
    }
    for (int64_t n = 32; n <= 256 && n <= max; n *= 2) {
        char mesh[32], name[32];
        const int64_t fshape[3] = {n, n, 16}; /* n^2 pieces of 16 elements */
        snprintf(mesh, sizeof mesh, "%lldx8", (long long)(n / 8));
        snprintf(name, sizeof name, "S01RR->RS01R_%lld", (long long)n);
        run_case(name, fshape, mesh, "S01RR", mesh, "RS01R", n, n / 4, "meshcast", repeats);
    }
    return 0;
}
