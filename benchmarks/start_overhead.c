/* Start overhead with the program cache: the time of mc_reshard_start for the first start
 * of a plan (which compiles its program) and the median of later starts of the same plan
 * (which find it cached), on one rank (local transport), in CPU time of the calling thread
 * (which does all of a start's work; wall time is noisy on a shared machine). Cases, on
 * dgx-h100 device ids: a 1 -> 256 broadcast (RR on one device to RR on 256), and S01RR -> RS01R
 * between two 32x8 meshes (65,536 pieces). Every destination is checked after each run.
 * Usage: start_overhead [repeats] [rows]   (defaults 9 and 32: meshes of rows x 8) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "meshcast/meshcast.h"
#define BENCH_NAME "start_overhead"
#include "bench_util.h"

#define SEED 0x73746172ULL

static mc_buffer_t *tiles(const mc_layout_t *l, int fill)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    int64_t n = mc_mesh_size(m);
    mc_buffer_t *t = calloc((size_t)n, sizeof *t);
    for (int64_t i = 0; t && i < n; i++) {
        mc_box_t b;
        if (mc_layout_tile(l, mc_mesh_device(m, i), &b))
            bench_die("tile");
        int64_t bytes = 4;
        for (int d = 0; d < 3; d++)
            bytes *= b.hi[d] - b.lo[d];
        if (!(t[i].ptr = calloc((size_t)bytes, 1)))
            exit(1);
        if (fill)
            mc_pattern_fill(l, mc_mesh_device(m, i), SEED, t[i].ptr);
    }
    if (!t)
        exit(1);
    return t;
}

static void run_case(const char *name, const int64_t *shape, const char *smesh, const char *sspec,
                     const char *dmesh, const char *dspec, int64_t dfirst, int64_t hosts,
                     int repeats)
{
    mc_layout_t *src = bench_layout(3, shape, smesh, 0, sspec);
    mc_layout_t *dst = bench_layout(3, shape, dmesh, dfirst, dspec);
    mc_topology_t *topo;
    mc_plan_t *plan;
    mc_comm_t *comm;
    if (mc_topology_load("dgx-h100", &topo) || mc_topology_set_hosts(topo, hosts) ||
        mc_plan_create(src, dst, topo, NULL, &plan) || mc_comm_create(NULL, &comm))
        bench_die(name);
    mc_plan_stats_t st;
    mc_plan_query(plan, &st);
    mc_buffer_t *s = tiles(src, 1), *d = tiles(dst, 0);
    double *t = calloc((size_t)repeats, sizeof *t);
    int64_t wrong = 0, nd = mc_mesh_size(mc_layout_mesh(dst));
    for (int r = 0; r < repeats; r++) {
        mc_request_t *req;
        double t0 = bench_cpu_now();
        if (mc_reshard_start(comm, plan, s, d, NULL, &req))
            bench_die("start");
        t[r] = bench_cpu_now() - t0;
        if (mc_request_wait(req))
            bench_die("wait");
        mc_request_free(req);
        for (int64_t i = 0; i < nd; i++) {
            int64_t w = 0;
            if (mc_pattern_check(dst, mc_mesh_device(mc_layout_mesh(dst), i), SEED, d[i].ptr, &w))
                bench_die("check");
            wrong += w;
        }
    }
    double first = t[0];
    double later = bench_median(t + 1, repeats - 1);
    printf("%-14s %8lld %8lld %12.3f %12.3f %8.2f%% %9lld %6lld\n", name, (long long)st.pieces,
           (long long)st.flows, 1e3 * first, 1e3 * later, 100 * later / first,
           (long long)mc_comm_programs_compiled(comm), (long long)wrong);
    int64_t compiled = mc_comm_programs_compiled(comm);
    for (int64_t i = 0; i < nd; i++)
        free(d[i].ptr);
    for (int64_t i = 0; i < mc_mesh_size(mc_layout_mesh(src)); i++)
        free(s[i].ptr);
    free(s);
    free(d);
    free(t);
    mc_comm_destroy(comm);
    mc_plan_destroy(plan);
    mc_topology_destroy(topo);
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    if (wrong || compiled != 1)
        exit(1);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 9;
    int64_t rows = argc > 2 ? atoll(argv[2]) : 32;
    if (repeats < 2 || rows < 1 || rows > 32) {
        fprintf(stderr, "start_overhead: repeats must be >= 2, rows in [1, 32]\n");
        return 2;
    }
    int64_t n = rows * 8;
    char mesh[32], name[32];
    snprintf(mesh, sizeof mesh, "%lldx8", (long long)rows);
    printf("%-14s %8s %8s %12s %12s %9s %9s %6s\n", "case", "pieces", "flows", "first_ms",
           "later_ms", "later/1st", "compiled", "wrong");
    const int64_t bshape[3] = {64, 64, 4}; /* 64 KiB to every device */
    snprintf(name, sizeof name, "bcast_1->%lld", (long long)n);
    run_case(name, bshape, "1x1", "RRR", mesh, "RRR", 8, rows + 1, repeats);
    const int64_t fshape[3] = {n, n, 16}; /* n^2 pieces of 16 elements */
    snprintf(name, sizeof name, "S01RR->RS01R");
    run_case(name, fshape, mesh, "S01RR", mesh, "RS01R", n, 2 * rows, repeats);
    return 0;
}
