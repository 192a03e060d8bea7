/* The MPI bootstrap under mpirun: allgathers of several sizes with rank-dependent bytes,
 * checked on every rank; a size mismatch fails cleanly on every rank.
 *   bootstrap_mpi lib   meshcast initializes MPI (and finalizes it at exit)
 *   bootstrap_mpi user  the program owns MPI: meshcast must neither init nor finalize it,
 *                       and must refuse to run after the program's MPI_Finalize.
 * Prints "ok" on rank 0 and exits 0 when all is well. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bootstrap/bootstrap.h"

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "bootstrap_mpi rank %d: ", rank);                                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " (%s)\n", mc_last_error());                                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static unsigned char pattern(int rank, int round, size_t i)
{
    return (unsigned char)(rank * 13 + round * 5 + (int)(i % 253));
}

int main(int argc, char **argv)
{
    int rank = -1, user = argc > 1 && !strcmp(argv[1], "user");
    int initialized = 0, finalized = 0;
    if (user)
        MPI_Init(&argc, &argv);
    CHECK(mc_bootstrap_under_mpirun(), "mpirun not detected");
    mc_bootstrap_t *b = NULL;
    CHECK(mc_bootstrap_mpi(&b) == MC_OK, "mc_bootstrap_mpi failed");
    rank = b->rank;
    const char *size_env = getenv("OMPI_COMM_WORLD_SIZE");
    CHECK(!size_env || atoi(size_env) == b->nranks, "nranks %d, mpirun says %s", b->nranks,
          size_env);
    CHECK(!strcmp(b->name, "mpi"), "name %s", b->name);

    static const size_t sizes[] = {8, 0, 1, 4096, 200000};
    for (int k = 0; k < 5; k++) {
        size_t size = sizes[k];
        unsigned char *send = malloc(size + 1), *recv = malloc((size_t)b->nranks * size + 1);
        CHECK(send && recv, "out of memory");
        for (size_t i = 0; i < size; i++)
            send[i] = pattern(rank, k, i);
        CHECK(b->allgather(b, send, recv, size, 30) == MC_OK, "allgather %d failed", k);
        for (int r = 0; r < b->nranks; r++)
            for (size_t i = 0; i < size; i++)
                CHECK(recv[(size_t)r * size + i] == pattern(r, k, i),
                      "allgather %d: byte %zu of rank %d wrong", k, i, r);
        free(send);
        free(recv);
    }
    /* Ranks that disagree on the size all fail, with the same message. */
    unsigned char buf[16] = {0}, all[16 * 64];
    CHECK(b->nranks <= 64, "too many ranks for this test");
    mc_status_t st = b->allgather(b, buf, all, rank == 1 ? 9 : 8, 30);
    CHECK(st == MC_ERR_MISMATCH && strstr(mc_last_error(), "rank 1 has 9 bytes"),
          "size mismatch gave %d", st);
    b->destroy(b);

    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    CHECK(initialized && !finalized, "MPI state after destroy: initialized %d finalized %d",
          initialized, finalized);
    if (user) {
        MPI_Finalize();
        CHECK(mc_bootstrap_mpi(&b) == MC_ERR_INVALID &&
                  strstr(mc_last_error(), "already finalized"),
              "bootstrap after MPI_Finalize did not fail clearly");
    }
    if (rank == 0)
        printf("ok (%s)\n", user ? "user" : "lib");
    return 0;
}
