/* What the benchmarks share: clocks, medians, failing loudly, and building a layout from
 * the CLI's notations. Header-only: each benchmark is one C file and this header. A
 * benchmark defines BENCH_NAME (its program name, for messages) before including it. */
#ifndef MESHCAST_BENCH_UTIL_H
#define MESHCAST_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "meshcast/meshcast.h"

#ifndef BENCH_NAME
#error "define BENCH_NAME before including bench_util.h"
#endif

/* Wall time, for transfers (they wait on other threads and processes). */
static inline double bench_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread, for work done on it alone: on a busy machine it is far
 * less noisy than wall time. */
static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts t[0..n) and returns its median. */
static inline double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static inline void bench_die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", BENCH_NAME, what, mc_last_error());
    exit(1);
}

/* A layout of an ndims-d f32 tensor from mesh and spec text, the mesh's devices numbered
 * from first. */
static inline mc_layout_t *bench_layout(int ndims, const int64_t *shape, const char *mesh_text,
                                        int64_t first, const char *spec_text)
{
    mc_mesh_t *mesh;
    mc_spec_t *spec;
    mc_layout_t *l;
    if (mc_mesh_parse(mesh_text, NULL, first, &mesh) ||
        mc_spec_parse(spec_text, mesh, ndims, &spec) ||
        mc_layout_create(ndims, shape, MC_DTYPE_F32, mesh, spec, &l))
        bench_die("layout");
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    return l;
}

#endif
