/* The MPI side of the reduction comparison (issue 12): MPI_Allreduce and
 * MPI_Reduce_scatter_block of an f32 sum, every rank holding a full addend of BYTES bytes,
 * as meshcast's Partial -> Replicate and Partial -> Shard(0) with one device per rank.
 * Each iteration starts after a barrier and lasts until the slowest rank is done; prints
 * the median, min and max over the timed iterations, and checks one element of the result.
 * Usage: mpirun -np N mpi_reduce [BYTES] [--iters N] [--warmup N]   (defaults 32 MiB, 7, 1) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One collective per iteration; returns 0 when every rank's element 0 is right. */
static int run(const char *name, int scatter, float *in, float *out, long count, int iters,
               int warmup, int rank, int nranks, long bytes)
{
    double *t = malloc(sizeof(double) * (size_t)(iters > 0 ? iters : 1));
    if (!t)
        return 1;
    for (int i = -warmup; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (scatter)
            MPI_Reduce_scatter_block(in, out, (int)(count / nranks), MPI_FLOAT, MPI_SUM,
                                     MPI_COMM_WORLD);
        else
            MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t0, slowest;
        MPI_Reduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (i >= 0)
            t[i] = slowest;
    }
    /* rank r's addend is r + 1 everywhere: the sum is n(n+1)/2 */
    int ok = out[0] == (float)nranks * (float)(nranks + 1) / 2, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0 && iters > 0) {
        qsort(t, (size_t)iters, sizeof *t, cmp_double);
        printf("%-22s %12ld %11.6g %11.6g %11.6g %10.4g %s\n", name, bytes, t[iters / 2], t[0],
               t[iters - 1], (double)bytes / t[iters / 2] / 1e9, all ? "ok" : "WRONG");
    }
    free(t);
    return !all;
}

int main(int argc, char **argv)
{
    long bytes = 32L << 20;
    int iters = 7, warmup = 1, rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else
            bytes = atol(argv[i]);
    }
    long count = bytes / 4 / nranks * nranks; /* whole blocks for the scatter */
    float *in = malloc((size_t)count * 4), *out = malloc((size_t)count * 4);
    if (count < nranks || iters < 1 || warmup < 0 || !in || !out) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np N mpi_reduce [BYTES] [--iters N] [--warmup N]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < count; i++)
        in[i] = (float)(rank + 1);
    memset(out, 0, (size_t)count * 4);
    if (rank == 0)
        printf("# mpi_reduce: %d ranks, f32 sum, %d iterations after %d warm-up\n"
               "%-22s %12s %11s %11s %11s %10s %s\n",
               nranks, iters, warmup, "case", "bytes", "median_s", "min_s", "max_s", "algbw_GB/s",
               "check");
    int bad = run("MPI_Allreduce", 0, in, out, count, iters, warmup, rank, nranks, count * 4);
    bad |=
        run("MPI_Reduce_scatter_block", 1, in, out, count, iters, warmup, rank, nranks, count * 4);
    free(in);
    free(out);
    MPI_Finalize();
    return bad;
}
