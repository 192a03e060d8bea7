/* Strided pack/unpack/copy bandwidth against plain memcpy of the same bytes. For each
 * innermost run (64 B .. 1 MiB) the box is a 3-d sub-box of 4-byte elements: the second
 * half of every row of a tile twice as wide, and all but the last row of each plane, so
 * three dims stay strided after merging. pack: box -> contiguous; unpack: contiguous ->
 * box; copy: box -> a box of another tile (rows 1.25 runs apart, 16 B-shifted); memcpy:
 * contiguous -> contiguous; read: only reads the box (a checksum), the memory system's
 * bound for pack, since its strided reads cost more than contiguous ones. Each moves total_MiB per
 * call; buffers are touched before timing so page faults are not measured; the four run
 * interleaved, median of repeats. Usage: pack_speed [total_MiB] [--repeats N] [--json FILE]
 * (defaults 256 and 5) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "exec/strided.h"
#define BENCH_NAME "pack_speed"
#include "bench_util.h"

enum { OP_PACK, OP_UNPACK, OP_COPY, OP_MEMCPY, OP_READ, NOPS };

typedef struct {
    int64_t run;
    double gbs[NOPS];
} result_t;

/* Allocated and written once, so its pages exist before anything is timed. */
static char *touched(int64_t bytes, int value)
{
    char *p = malloc((size_t)bytes);
    if (!p) {
        fprintf(stderr, "pack_speed: out of memory (%lld bytes)\n", (long long)bytes);
        exit(1);
    }
    memset(p, value, (size_t)bytes);
    return p;
}

/* Sums the box's 8-byte words, walking the merged dims (at most 3 here). */
static uint64_t box_read(const mc_strided_t *s)
{
    int64_t c0 = s->ndim > 2 ? s->count[s->ndim - 3] : 1,
            s0 = s->ndim > 2 ? s->stride[s->ndim - 3] : 0;
    int64_t c1 = s->ndim > 1 ? s->count[s->ndim - 2] : 1,
            s1 = s->ndim > 1 ? s->stride[s->ndim - 2] : 0;
    uint64_t acc[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < c0; i++)
        for (int64_t j = 0; j < c1; j++) {
            const char *p = s->base + i * s0 + j * s1;
            for (int64_t k = 0; k + 32 <= s->run_bytes; k += 32)
                for (int w = 0; w < 4; w++) {
                    uint64_t v;
                    memcpy(&v, p + k + 8 * w, 8);
                    acc[w] += v;
                }
        }
    return acc[0] + acc[1] + acc[2] + acc[3];
}

static int measure(int64_t run, int64_t total, int repeats, result_t *res)
{
    const int64_t e = 4, xb = run / e;
    int64_t rows = total / run > 0 ? total / run : 1;
    int64_t y = rows >= 16 ? 16 : rows, z = rows / y;
    int64_t bytes = z * y * run;
    /* src tile [z, y+1, 2 xb], box [0,z) x [0,y) x [xb, 2 xb) */
    mc_box_t ta = {{0, 0, 0}, {z, y + 1, 2 * xb}}, ba = {{0, 0, xb}, {z, y, 2 * xb}};
    /* dst tile for copy [z+1, y, xb + xb/4], box [1,z+1) x [0,y) x [xb/4, xb/4 + xb) */
    mc_box_t tb = {{0, 0, 0}, {z + 1, y, xb + xb / 4}},
             bb = {{1, 0, xb / 4}, {z + 1, y, xb / 4 + xb}};
    int64_t abytes = z * (y + 1) * 2 * xb * e, bbytes = (z + 1) * y * (xb + xb / 4) * e;
    char *a = touched(abytes, 0), *b = touched(bbytes, 0);
    char *flat = touched(bytes, 0), *flat2 = touched(bytes, 0);
    for (int64_t i = 0; i < abytes; i += 4099) /* bytes for the check to find */
        a[i] = (char)(i * 7 + 1);
    mc_strided_t sa, sb;
    mc_strided_init(&sa, a, &ta, &ba, 3, (size_t)e);
    mc_strided_init(&sb, b, &tb, &bb, 3, (size_t)e);
    if (sa.bytes != bytes || sb.bytes != bytes || sa.run_bytes != run || sb.run_bytes != run) {
        fprintf(stderr, "pack_speed: unexpected layout for run %lld\n", (long long)run);
        return 1;
    }
    double *t = calloc((size_t)(NOPS * (repeats + 1)), sizeof *t);
    if (!t)
        return 1;
    volatile uint64_t sink = 0;
    /* Repeat 0 warms up and is not counted. */
    for (int r = 0; r <= repeats; r++) {
        for (int op = 0; op < NOPS; op++) {
            double t0 = bench_wall_now();
            switch (op) {
            case OP_PACK:
                mc_strided_pack(&sa, 0, bytes, flat);
                break;
            case OP_UNPACK:
                mc_strided_unpack(&sa, 0, bytes, flat);
                break;
            case OP_COPY:
                mc_strided_copy(&sb, &sa, 0, bytes);
                break;
            case OP_MEMCPY:
                memcpy(flat2, flat, (size_t)bytes);
                break;
            default:
                sink += box_read(&sa);
            }
            t[op * (repeats + 1) + r] = bench_wall_now() - t0;
        }
    }
    /* The last op of every kind must have moved the box: flat2 (memcpy of pack's output),
     * and b (copy) hold the box bytes. */
    int bad = 0;
    for (int64_t r = 0; r < bytes / run; r += 1 + r / 3) {
        char *pa = mc_strided_range(&sa, r * run, run), *pb = mc_strided_range(&sb, r * run, run);
        bad |= !pa || !pb || memcmp(pa, flat2 + r * run, (size_t)run) != 0 ||
               memcmp(pb, pa, (size_t)run) != 0;
    }
    if (bad) {
        fprintf(stderr, "pack_speed: wrong bytes for run %lld\n", (long long)run);
        return 1;
    }
    res->run = run;
    for (int op = 0; op < NOPS; op++) {
        double *v = t + op * (repeats + 1) + 1;
        double med = bench_median(v, repeats);
        res->gbs[op] = (double)bytes / med / 1e9;
    }
    free(t);
    free(a);
    free(b);
    free(flat);
    free(flat2);
    return 0;
}

int main(int argc, char **argv)
{
    int64_t total_mib = 256;
    int repeats = 5;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (argv[i][0] != '-')
            total_mib = atoll(argv[i]);
        else {
            fprintf(stderr, "usage: pack_speed [total_MiB] [--repeats N] [--json FILE]\n");
            return 2;
        }
    }
    if (repeats < 1)
        repeats = 1;
    if (total_mib < 1)
        total_mib = 1;
    static const int64_t runs[] = {64, 256, 1024, 4096, 16384, 65536, 1 << 20};
    enum { NRUNS = sizeof runs / sizeof runs[0] };
    result_t res[NRUNS];
    printf("total %lld MiB per call, median of %d repeats\n", (long long)total_mib, repeats);
    printf("%10s %10s %11s %10s %11s %12s %14s %10s\n", "run_bytes", "pack_GB/s", "unpack_GB/s",
           "copy_GB/s", "memcpy_GB/s", "pack/memcpy", "unpack/memcpy", "read_GB/s");
    for (int k = 0; k < NRUNS; k++) {
        if (measure(runs[k], total_mib << 20, repeats, &res[k]))
            return 1;
        const double *g = res[k].gbs;
        printf("%10lld %10.2f %11.2f %10.2f %11.2f %12.2f %14.2f %10.2f\n", (long long)runs[k],
               g[OP_PACK], g[OP_UNPACK], g[OP_COPY], g[OP_MEMCPY], g[OP_PACK] / g[OP_MEMCPY],
               g[OP_UNPACK] / g[OP_MEMCPY], g[OP_READ]);
        fflush(stdout);
    }
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f, "{\"total_bytes\": %lld, \"repeats\": %d, \"results\": [",
                (long long)(total_mib << 20), repeats);
        for (int k = 0; k < NRUNS; k++) {
            const double *g = res[k].gbs;
            fprintf(f,
                    "%s\n  {\"run_bytes\": %lld, \"pack_gbs\": %.3f, \"unpack_gbs\": %.3f, "
                    "\"copy_gbs\": %.3f, \"memcpy_gbs\": %.3f, \"read_gbs\": %.3f}",
                    k ? "," : "", (long long)res[k].run, g[OP_PACK], g[OP_UNPACK], g[OP_COPY],
                    g[OP_MEMCPY], g[OP_READ]);
        }
        fprintf(f, "\n]}\n");
        fclose(f);
    }
    return 0;
}
