/* The optional dependencies this build uses, with their versions where they are cheap to ask
 * (a string or a number from the library, no initialisation). */
#include <stdio.h>
#include <string.h>
#include "meshcast/build.h"
#if MESHCAST_HAVE_UCX
#include <ucp/api/ucp.h>
#endif
#if MESHCAST_HAVE_MPI
#include <mpi.h>
#endif
#if MESHCAST_HAVE_HWLOC
#include <hwloc.h>
#endif
#if MESHCAST_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static void ucx_version(char *buf, size_t len)
{
#if MESHCAST_HAVE_UCX
    snprintf(buf, len, "%s", ucp_get_version_string());
#else
    (void)buf, (void)len;
#endif
}

/* The library's own version string up to its first comma ("Open MPI v4.1.4"). */
static void mpi_version(char *buf, size_t len)
{
#if MESHCAST_HAVE_MPI
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(text, &n) == MPI_SUCCESS) {
        text[strcspn(text, ",\n")] = '\0';
        snprintf(buf, len, "%s", text);
    }
#else
    (void)buf, (void)len;
#endif
}

static void hwloc_version(char *buf, size_t len)
{
#if MESHCAST_HAVE_HWLOC
    unsigned v = hwloc_get_api_version();
    snprintf(buf, len, "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
#else
    (void)buf, (void)len;
#endif
}

/* The CUDA runtime this build was compiled against (no driver call: none may be there). */
static void cuda_version(char *buf, size_t len)
{
#if MESHCAST_HAVE_CUDA
    snprintf(buf, len, "%d.%d", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
#else
    (void)buf, (void)len;
#endif
}

static const struct {
    const char *name;
    int built;
    void (*version)(char *, size_t);
} deps[] = {
    {"UCX", MESHCAST_HAVE_UCX, ucx_version},
    {"MPI", MESHCAST_HAVE_MPI, mpi_version},
    {"hwloc", MESHCAST_HAVE_HWLOC, hwloc_version},
    {"CUDA", MESHCAST_HAVE_CUDA, cuda_version},
    {"NCCL", 0, NULL}, /* found or not, nothing uses it yet (docs/gpu.md) */
};

size_t mc_build_dep_count(void)
{
    return sizeof deps / sizeof deps[0];
}

int mc_build_dep(size_t i, mc_build_dep_t *out)
{
    if (i >= mc_build_dep_count() || !out)
        return -1;
    memset(out, 0, sizeof *out);
    out->name = deps[i].name;
    out->built = deps[i].built;
    if (deps[i].built && deps[i].version)
        deps[i].version(out->version, sizeof out->version);
    return 0;
}
