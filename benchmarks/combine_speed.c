/* Combine (reduction op) speed against memcpy: for every dtype and op, mc_combine_boxes of
 * 4 addends of total_MiB / 4 each into a fifth buffer (contiguous boxes, as a reducer's
 * staging chunks are), and a strided case (every row's first half of a tile twice as wide).
 * Reported: GB/s of bytes touched (4 reads + 1 write per element) and the ratio to memcpy's
 * GB/s of bytes touched (1 read + 1 write) over the same buffers, run interleaved, median of
 * repeats. Usage: combine_speed [total_MiB] [--repeats N] [--check] (defaults 256 and 5;
 * --check compares every result with mc_combine element by element, for the smoke test) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "exec/combine.h"
#define BENCH_NAME "combine_speed"
#include "bench_util.h"

#define NIN 4

static const mc_dtype_t dtypes[] = {MC_DTYPE_F64, MC_DTYPE_F32, MC_DTYPE_F16, MC_DTYPE_BF16,
                                    MC_DTYPE_I64, MC_DTYPE_I32, MC_DTYPE_I16, MC_DTYPE_I8,
                                    MC_DTYPE_U8,  MC_DTYPE_BOOL};

/* Finite, small values of every dtype (floats: multiples of 1/16, as the test pattern). */
static void fill(char *p, int64_t bytes, mc_dtype_t t, unsigned seed)
{
    size_t es = mc_dtype_size(t);
    for (int64_t i = 0; i < bytes / (int64_t)es; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = (double)((int)(seed >> 16 & 0x7ff) - 1024) / 16;
        char *o = p + (int64_t)es * i;
        if (t == MC_DTYPE_F64) {
            memcpy(o, &v, 8);
        } else if (t == MC_DTYPE_F32) {
            float f = (float)v;
            memcpy(o, &f, 4);
        } else if (t == MC_DTYPE_F16 || t == MC_DTYPE_BF16) {
            uint16_t h = t == MC_DTYPE_F16 ? mc_f32_to_f16((float)v) : mc_f32_to_bf16((float)v);
            memcpy(o, &h, 2);
        } else if (t == MC_DTYPE_BOOL) {
            *o = (char)(seed >> 20 & 1);
        } else {
            uint64_t u = seed >> 8;
            memcpy(o, &u, es);
        }
    }
}

int main(int argc, char **argv)
{
    int64_t mib = 256;
    int repeats = 5, check = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--check"))
            check = 1;
        else
            mib = atoll(argv[i]);
    }
    if (mib < 1 || repeats < 1) {
        fprintf(stderr, "usage: combine_speed [total_MiB] [--repeats N] [--check]\n");
        return 2;
    }
    int64_t bytes = (mib << 20) / NIN / 64 * 64; /* per addend */
    char *in[NIN], *out = malloc((size_t)bytes), *ref = malloc((size_t)bytes);
    char *wide = malloc((size_t)bytes * 2); /* strided source: rows twice as wide */
    for (int j = 0; j < NIN; j++)
        in[j] = malloc((size_t)bytes);
    if (!out || !ref || !wide)
        return 1;
    memset(out, 1, (size_t)bytes);
    memset(wide, 0, (size_t)bytes * 2);
    printf("# combine_speed: %d addends of %lld MiB each, median of %d; GB/s of bytes touched\n",
           NIN, (long long)(bytes >> 20), repeats);
    printf("%-5s %-4s %10s %10s %10s %8s %8s\n", "dtype", "op", "combine", "strided", "memcpy",
           "ratio", "str/mcp");
    int bad = 0;
    double *t = malloc(sizeof(double) * 3 * (size_t)repeats);
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        mc_dtype_t dt = dtypes[d];
        int64_t es = (int64_t)mc_dtype_size(dt), n = bytes / es, cols = 256;
        for (int j = 0; j < NIN; j++)
            fill(in[j], bytes, dt, (unsigned)(j + 7 * d));
        for (int op = MC_REDUCE_SUM; op <= MC_REDUCE_MIN; op++) {
            if (mc_combine_check(dt, (mc_reduce_t)op))
                continue;
            mc_box_t tile = {{0, 0}, {n / cols, cols}}, box = {{0, 0}, {n / cols, cols}};
            mc_box_t wtile = {{0, 0}, {n / cols, 2 * cols}};
            mc_strided_t sin[NIN], sout, swide[NIN];
            for (int j = 0; j < NIN; j++) {
                mc_strided_init(&sin[j], in[j], &tile, &box, 2, (size_t)es);
                /* the strided case reads addend 0 from the wide tile, the rest contiguous */
                swide[j] = sin[j];
            }
            mc_strided_init(&swide[0], wide, &wtile, &box, 2, (size_t)es);
            mc_strided_init(&sout, out, &tile, &box, 2, (size_t)es);
            int64_t len = n / cols * cols * es;
            for (int r = 0; r < repeats; r++) {
                double t0 = bench_wall_now();
                mc_combine_boxes(dt, (mc_reduce_t)op, NIN, sin, &sout, 0, len);
                double t1 = bench_wall_now();
                mc_combine_boxes(dt, (mc_reduce_t)op, NIN, swide, &sout, 0, len);
                double t2 = bench_wall_now();
                memcpy(out, in[r % NIN], (size_t)len);
                double t3 = bench_wall_now();
                t[r] = t1 - t0;
                t[repeats + r] = t2 - t1;
                t[2 * repeats + r] = t3 - t2;
            }
            for (int k = 0; k < 3; k++)
                qsort(t + k * repeats, (size_t)repeats, sizeof *t, bench_cmp_double);
            double c = (double)len * (NIN + 1) / t[repeats / 2] / 1e9;
            double s = (double)len * (NIN + 1) / t[repeats + repeats / 2] / 1e9;
            double m = (double)len * 2 / t[2 * repeats + repeats / 2] / 1e9;
            printf("%-5s %-4s %10.2f %10.2f %10.2f %8.3f %8.3f\n", mc_dtype_name(dt),
                   mc_reduce_name((mc_reduce_t)op), c, s, m, c / m, s / m);
            if (check) { /* the boxes' result against mc_combine, byte for byte */
                const void *ptrs[NIN];
                for (int j = 0; j < NIN; j++)
                    ptrs[j] = in[j];
                mc_combine_boxes(dt, (mc_reduce_t)op, NIN, sin, &sout, 0, len);
                mc_combine(dt, (mc_reduce_t)op, NIN, ptrs, ref, len / es);
                if (memcmp(out, ref, (size_t)len)) {
                    fprintf(stderr, "%s %s: boxes and mc_combine differ\n", mc_dtype_name(dt),
                            mc_reduce_name((mc_reduce_t)op));
                    bad = 1;
                }
            }
        }
    }
    free(t);
    for (int j = 0; j < NIN; j++)
        free(in[j]);
    free(out);
    free(ref);
    free(wide);
    return bad;
}
