/* Runs a plan on real bytes: every rank allocates the tiles of its own devices, fills the
 * sources with the test pattern, and times iterations between barriers (time = slowest rank);
 * after the last one every destination element is checked and the wrong ones summed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exec_run.h"
#include "util/util.h"

#define PATTERN_SEED 0x6d657368ULL

typedef struct {
    int64_t n;
    mc_buffer_t *bufs;
    size_t *bytes;
} tiles_t;

static void tiles_free(tiles_t *t)
{
    for (int64_t i = 0; i < t->n; i++)
        free(t->bufs[i].ptr);
    free(t->bufs);
    free(t->bytes);
}

/* Tiles of the mesh's devices that this rank owns (others stay NULL). */
static mc_status_t tiles_make(const mc_layout_t *l, const mc_topology_t *topo, int rank, int nranks,
                              int fill, tiles_t *t)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    memset(t, 0, sizeof *t);
    t->n = mc_mesh_size(m);
    t->bufs = mc_calloc((size_t)t->n, sizeof *t->bufs);
    t->bytes = mc_calloc((size_t)t->n, sizeof *t->bytes);
    if (!t->bufs || !t->bytes)
        return MC_ERR_NOMEM;
    size_t es = mc_dtype_size(mc_layout_dtype(l));
    for (int64_t i = 0; i < t->n; i++) {
        int64_t dev = mc_mesh_device(m, i);
        if (mc_device_owner(topo, nranks, dev) != rank)
            continue;
        mc_box_t box;
        mc_status_t s = mc_layout_tile(l, dev, &box);
        if (s)
            return s;
        size_t bytes = es;
        for (int d = 0; d < mc_layout_ndim(l); d++)
            bytes *= (size_t)(box.hi[d] - box.lo[d]);
        t->bytes[i] = bytes;
        if (!(t->bufs[i].ptr = malloc(bytes ? bytes : 1)))
            return mc_error(MC_ERR_NOMEM, "out of memory for a %zu-byte tile", bytes);
        if (fill && (s = mc_pattern_fill(l, dev, PATTERN_SEED, t->bufs[i].ptr)))
            return s;
        if (!fill)
            memset(t->bufs[i].ptr, 0, bytes);
    }
    return MC_OK;
}

/* Bytes of the tiles of the mesh's devices that this rank owns (saturates at INT64_MAX). */
static int64_t tiles_bytes(const mc_layout_t *l, const mc_topology_t *topo, int rank, int nranks)
{
    const mc_mesh_t *m = mc_layout_mesh(l);
    int64_t total = 0;
    for (int64_t i = 0; i < mc_mesh_size(m); i++) {
        mc_box_t box;
        int64_t dev = mc_mesh_device(m, i), bytes = (int64_t)mc_dtype_size(mc_layout_dtype(l));
        if (mc_device_owner(topo, nranks, dev) != rank || mc_layout_tile(l, dev, &box))
            continue;
        for (int d = 0; d < mc_layout_ndim(l); d++)
            bytes *= box.hi[d] - box.lo[d]; /* at most the tensor's bytes */
        if (mc_add_i64(total, bytes, &total))
            return INT64_MAX;
    }
    return total;
}

int exec_check_memory(const cli_built_t *b, const mc_plan_t *plan, int rank, int nranks)
{
    mc_plan_stats_t st = {0};
    int64_t need = tiles_bytes(b->src, b->topo, rank, nranks), total;
    double ram = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (mc_add_i64(need, tiles_bytes(b->dst, b->topo, rank, nranks), &total) ||
        (plan && mc_plan_query(plan, &st)) || mc_add_i64(total, st.peak_staging_bytes, &total))
        total = INT64_MAX;
    if (ram > 0 && (double)total > ram)
        return cli_usage_error("run: rank %d needs %lld bytes of tiles and staging, more than "
                               "this machine's %.0f bytes of memory",
                               rank, (long long)total, ram);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int exec_case(mc_comm_t *comm, const cli_built_t *b, const mc_plan_t *plan, const exec_opts_t *o,
              exec_result_t *out)
{
    int rank = mc_comm_rank(comm), nranks = mc_comm_nranks(comm), rc = 0;
    int64_t compiled0 = mc_comm_programs_compiled(comm);
    tiles_t src, dst;
    double *times = mc_calloc((size_t)o->iters + 1, sizeof *times);
    double *all = mc_calloc((size_t)nranks, sizeof *all);
    mc_status_t s;
    memset(&src, 0, sizeof src);
    memset(&dst, 0, sizeof dst);
    if (!times || !all) {
        rc = cli_fail(MC_ERR_NOMEM, "run");
        goto out;
    }
    if ((rc = exec_check_memory(b, plan, rank, nranks)))
        goto out;
    if ((s = tiles_make(b->src, b->topo, rank, nranks, 1, &src)) ||
        (s = tiles_make(b->dst, b->topo, rank, nranks, 0, &dst))) {
        rc = cli_fail(s, "run: tiles");
        goto out;
    }
    for (int it = 0; it < o->warmup + o->iters; it++) {
        for (int64_t i = 0; i < dst.n; i++)
            if (dst.bufs[i].ptr)
                memset(dst.bufs[i].ptr, 0, dst.bytes[i]);
        if ((s = mc_comm_allgather(comm, NULL, NULL, 0))) {
            rc = cli_fail(s, "run: barrier");
            goto out;
        }
        double t0 = mc_now();
        if ((s = mc_reshard(comm, plan, src.bufs, dst.bufs, NULL))) {
            rc = cli_fail(s, "run: reshard");
            goto out;
        }
        double t = mc_now() - t0;
        if ((s = mc_comm_allgather(comm, &t, all, sizeof t))) {
            rc = cli_fail(s, "run: gathering times");
            goto out;
        }
        for (int r = 0; r < nranks; r++)
            if (all[r] > t)
                t = all[r];
        if (it >= o->warmup)
            times[it - o->warmup] = t;
    }
    out->programs_compiled = mc_comm_programs_compiled(comm) - compiled0;
    qsort(times, (size_t)o->iters, sizeof *times, cmp_double);
    out->min = times[0];
    out->max = times[o->iters - 1];
    out->median =
        o->iters % 2 ? times[o->iters / 2] : (times[o->iters / 2 - 1] + times[o->iters / 2]) / 2;
    out->wrong = -1;
    if (o->verify) {
        int64_t wrong = 0;
        double diff = 0;
        const mc_mesh_t *m = mc_layout_mesh(b->dst);
        int reduced = mc_spec_reduce(mc_layout_spec(b->src)) != MC_REDUCE_NONE;
        for (int64_t i = 0; i < dst.n; i++) {
            int64_t w = 0, dev = mc_mesh_device(m, i);
            double d = 0;
            /* reductions: bit-exact against the addends combined in the plan's order */
            s = !dst.bufs[i].ptr ? MC_OK
                : reduced
                    ? mc_pattern_check_reduced(plan, dev, PATTERN_SEED, dst.bufs[i].ptr, &w, &d)
                    : mc_pattern_check(b->dst, dev, PATTERN_SEED, dst.bufs[i].ptr, &w);
            if (s) {
                rc = cli_fail(s, "run: verify");
                goto out;
            }
            wrong += w;
            diff = d > diff ? d : diff;
        }
        if ((s = mc_comm_allgather(comm, &diff, all, sizeof diff))) {
            rc = cli_fail(s, "run: gathering differences");
            goto out;
        }
        out->max_diff = 0;
        for (int r = 0; r < nranks; r++)
            out->max_diff = all[r] > out->max_diff ? all[r] : out->max_diff;
        int64_t *wall = (int64_t *)all; /* same size as double */
        if ((s = mc_comm_allgather(comm, &wrong, wall, sizeof wrong))) {
            rc = cli_fail(s, "run: gathering wrong counts");
            goto out;
        }
        out->wrong = 0;
        for (int r = 0; r < nranks; r++)
            out->wrong += wall[r];
    }
out:
    tiles_free(&src);
    tiles_free(&dst);
    free(times);
    free(all);
    return rc;
}

int exec_comm_create(const char *transport, mc_comm_t **out)
{
    mc_comm_params_t p = {.field_mask = MC_COMM_PARAM_TRANSPORT};
    if (!strcmp(transport, "local"))
        p.transport = MC_TRANSPORT_LOCAL;
    else if (!strcmp(transport, "ucx"))
        p.transport = MC_TRANSPORT_UCX;
    else
        return cli_usage_error("unknown --transport '%s' (local, ucx)", transport);
    mc_status_t s = mc_comm_create(&p, out);
    return s ? cli_fail(s, "communicator") : 0;
}
