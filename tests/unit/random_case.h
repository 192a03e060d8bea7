/* Seeded random resharding cases for the planner's tests (header-only: only test_*.c files
 * are compiled). A case is a topology parsed from random .topo text, and a source and a
 * destination layout of one small tensor (at most RC_MAX_ELEMS elements, up to 4-d, uneven
 * sizes, dims smaller than shard counts) on meshes of up to 3 axes and 64 devices whose
 * device ids are disjoint, overlapping or identical. Specs are generated as objects,
 * printed in a random notation that can express them, parsed back and compared.
 * Everything derives from one 64-bit seed; rc_case_t.desc describes the case for failure
 * messages. */
#ifndef MC_TEST_RANDOM_CASE_H
#define MC_TEST_RANDOM_CASE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "meshcast/layout.h"
#include "meshcast/topology.h"

#define RC_MAX_ELEMS 4096
#define RC_MAX_MESH 64

typedef struct {
    uint64_t s;
} rc_rng_t;

static inline uint64_t rc_next(rc_rng_t *r)
{
    /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline int64_t rc_range(rc_rng_t *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rc_next(r) % (uint64_t)(hi - lo + 1));
}

static inline double rc_unit(rc_rng_t *r)
{
    return (double)(rc_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

typedef enum { RC_DISJOINT, RC_OVERLAP, RC_IDENTICAL } rc_devmode_t;

typedef struct {
    uint64_t seed;
    int ndim;
    int64_t shape[4];
    int64_t nelems;
    mc_dtype_t dtype;
    rc_devmode_t mode;
    mc_topology_t *topo;
    mc_layout_t *src, *dst;
    char desc[1024];
} rc_case_t;

static inline void rc_case_free(rc_case_t *c)
{
    mc_layout_destroy(c->src);
    mc_layout_destroy(c->dst);
    mc_topology_destroy(c->topo);
    c->src = c->dst = NULL;
    c->topo = NULL;
}

/* Random mesh shape of 1 to 3 axes and at most max_size devices. */
static inline int rc_mesh_shape(rc_rng_t *r, int64_t max_size, int64_t *shape)
{
    int ndim = (int)rc_range(r, 1, 3);
    int64_t size = 1;
    for (int a = 0; a < ndim; a++) {
        int64_t cap = max_size / size, hi = rc_range(r, 0, 5) == 0 ? 8 : 4;
        if (hi > cap)
            hi = cap;
        shape[a] = hi >= 1 ? rc_range(r, 1, hi) : 1;
        size *= shape[a];
    }
    return ndim;
}

static inline void rc_shuffle(rc_rng_t *r, int64_t *v, int64_t n)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = rc_range(r, 0, i), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* Random spec for a tensor of tensor_ndim dims on a mesh of mesh_ndim axes: each axis is
 * unused or shards one random tensor dim, in random order (outer first). */
static inline void rc_spec_axes(rc_rng_t *r, int tensor_ndim, int mesh_ndim, int *naxes, int *axes)
{
    int owner[MC_MAX_NDIM]; /* tensor dim sharded by order[k], or -1 */
    int64_t order[MC_MAX_NDIM];
    for (int a = 0; a < mesh_ndim; a++)
        order[a] = a;
    rc_shuffle(r, order, mesh_ndim);
    for (int k = 0; k < mesh_ndim; k++)
        owner[k] = rc_range(r, 0, 2) == 0 ? -1 : (int)rc_range(r, 0, tensor_ndim - 1);
    /* Grouped by tensor dim, each dim's axes in draw order (no per-dim arrays whose
     * bounds GCC cannot prove at -O3). */
    int n = 0;
    for (int d = 0; d < tensor_ndim; d++) {
        naxes[d] = 0;
        for (int k = 0; k < mesh_ndim; k++)
            if (owner[k] == d) {
                axes[n++] = (int)order[k];
                naxes[d]++;
            }
    }
}

static const char *const rc_notation_names[] = {"alpa", "dtensor", "jax"};

/* Makes the spec object, prints it in a random notation that can express it, parses the text
 * back and checks both agree. Appends "spec-text" to desc. Returns 0 or -1 (message in err). */
static inline int rc_make_spec(rc_rng_t *r, int tensor_ndim, const mc_mesh_t *mesh, char *desc,
                               size_t desc_len, mc_spec_t **out, char *err, size_t err_len)
{
    int naxes[4], axes[MC_MAX_NDIM];
    int mesh_ndim = mc_mesh_ndim(mesh);
    mc_spec_t *spec = NULL, *back = NULL;
    char text[512];
    rc_spec_axes(r, tensor_ndim, mesh_ndim, naxes, axes);
    if (mc_spec_create(tensor_ndim, naxes, axes, mesh, &spec)) {
        snprintf(err, err_len, "mc_spec_create: %s", mc_last_error());
        return -1;
    }
    /* Half the specs whose axes increase per dim are cut the DTensor way (nested). */
    int increasing = 1;
    for (int d = 0, n = 0; d < tensor_ndim; n += naxes[d++])
        for (int k = 1; k < naxes[d]; k++)
            increasing &= axes[n + k] > axes[n + k - 1];
    if (increasing && rc_range(r, 0, 1) && mc_spec_set_cut(spec, MC_CUT_NESTED)) {
        snprintf(err, err_len, "mc_spec_set_cut: %s", mc_last_error());
        mc_spec_destroy(spec);
        return -1;
    }
    int first = (int)rc_range(r, 0, 2), used = -1;
    for (int k = 0; k < 3 && used < 0; k++) {
        int n = (first + k) % 3;
        mc_status_t s = mc_spec_format(spec, mesh, (mc_notation_t)n, text, sizeof text);
        if (s == MC_OK)
            used = n;
        else if (s != MC_ERR_UNSUPPORTED) {
            snprintf(err, err_len, "mc_spec_format(%s) = %d: %s", rc_notation_names[n], s,
                     mc_last_error());
            mc_spec_destroy(spec);
            return -1;
        }
    }
    if (used < 0) {
        snprintf(err, err_len, "no notation can print the spec");
        mc_spec_destroy(spec);
        return -1;
    }
    if (mc_spec_parse(text, mesh, tensor_ndim, &back)) {
        snprintf(err, err_len, "mc_spec_parse(\"%s\") failed: %s", text, mc_last_error());
        mc_spec_destroy(spec);
        return -1;
    }
    int same = mc_spec_tensor_ndim(back) == tensor_ndim && mc_spec_mesh_ndim(back) == mesh_ndim;
    for (int d = 0, n = 0; d < tensor_ndim && same; d++) {
        same = mc_spec_dim_naxes(back, d) == naxes[d] &&
               (naxes[d] < 2 || mc_spec_cut(back) == mc_spec_cut(spec));
        for (int k = 0; k < naxes[d] && same; k++)
            same = mc_spec_dim_axis(back, d, k) == axes[n + k];
        n += naxes[d];
    }
    mc_spec_destroy(spec);
    if (!same) {
        snprintf(err, err_len, "spec \"%s\" (%s) parses back to a different spec", text,
                 rc_notation_names[used]);
        mc_spec_destroy(back);
        return -1;
    }
    size_t used_len = strlen(desc);
    snprintf(desc + used_len, desc_len - used_len, " spec=\"%s\"", text);
    *out = back;
    return 0;
}

static inline int rc_make_layout(rc_rng_t *r, rc_case_t *c, const char *side, int mesh_ndim,
                                 const int64_t *mesh_shape, const int64_t *ids, mc_layout_t **out,
                                 char *err, size_t err_len)
{
    static const char *const name_sets[3][3] = {
        {"dp", "tp", "pp"}, {"a", "b", "c"}, {"rows", "cols", "depth"}};
    const char *const *names = NULL;
    int64_t size = 1;
    if (rc_range(r, 0, 1))
        names = name_sets[rc_range(r, 0, 2)];
    mc_mesh_t *mesh = NULL;
    mc_spec_t *spec = NULL;
    size_t n = strlen(c->desc);
    snprintf(c->desc + n, sizeof c->desc - n, " %s: mesh=", side);
    for (int a = 0; a < mesh_ndim; a++) {
        n = strlen(c->desc);
        snprintf(c->desc + n, sizeof c->desc - n, "%s%lld", a ? "x" : "", (long long)mesh_shape[a]);
        size *= mesh_shape[a];
    }
    n = strlen(c->desc);
    snprintf(c->desc + n, sizeof c->desc - n, " devices=");
    for (int64_t i = 0; i < size; i++) {
        n = strlen(c->desc);
        snprintf(c->desc + n, sizeof c->desc - n, "%s%lld", i ? "," : "", (long long)ids[i]);
    }
    if (mc_mesh_create(mesh_ndim, mesh_shape, ids, names, &mesh)) {
        snprintf(err, err_len, "mc_mesh_create: %s", mc_last_error());
        return -1;
    }
    if (rc_make_spec(r, c->ndim, mesh, c->desc, sizeof c->desc, &spec, err, err_len)) {
        mc_mesh_destroy(mesh);
        return -1;
    }
    mc_status_t s = mc_layout_create(c->ndim, c->shape, c->dtype, mesh, spec, out);
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    if (s) {
        snprintf(err, err_len, "mc_layout_create: %s", mc_last_error());
        return -1;
    }
    return 0;
}

/* Builds case `seed`. max_mesh caps each mesh's device count (<= RC_MAX_MESH). Returns 0, or
 * -1 with a message in err (a generator or library failure: the caller fails the test). */
static inline int rc_case_make(uint64_t seed, int64_t max_mesh, rc_case_t *c, char *err,
                               size_t err_len)
{
    rc_rng_t rng = {seed * 0x2545f4914f6cdd1dull + 12345};
    rc_rng_t *r = &rng;
    int64_t src_shape[3], dst_shape[3], pool[2 * RC_MAX_MESH + 64], ids_src[RC_MAX_MESH],
        ids_dst[RC_MAX_MESH];
    memset(c, 0, sizeof *c);
    c->seed = seed;
    if (max_mesh > RC_MAX_MESH)
        max_mesh = RC_MAX_MESH;
    /* tensor: 1..4 dims, at most RC_MAX_ELEMS elements, sizes often small and uneven */
    c->ndim = (int)rc_range(r, 1, 4);
    c->nelems = 1;
    for (int d = 0; d < c->ndim; d++) {
        int64_t cap = RC_MAX_ELEMS / c->nelems, hi = rc_range(r, 0, 3) == 0 ? 64 : 9;
        for (int e = d + 1; e < c->ndim; e++)
            cap /= 2; /* leave room for later dims */
        if (cap < 1)
            cap = 1;
        c->shape[d] = rc_range(r, 1, hi < cap ? hi : cap);
        c->nelems *= c->shape[d];
    }
    c->dtype = (mc_dtype_t)rc_range(r, 0, MC_DTYPE_COUNT - 1);
    /* meshes and device ids */
    int src_ndim = rc_mesh_shape(r, max_mesh, src_shape);
    int64_t nsrc = 1, ndst = 1;
    for (int a = 0; a < src_ndim; a++)
        nsrc *= src_shape[a];
    c->mode = (rc_devmode_t)rc_range(r, 0, 2);
    int dst_ndim;
    if (c->mode == RC_IDENTICAL) {
        /* same device set; the mesh shape may differ (same size) */
        if (rc_range(r, 0, 1)) {
            dst_ndim = src_ndim;
            memcpy(dst_shape, src_shape, sizeof dst_shape);
        } else {
            dst_ndim = 1;
            dst_shape[0] = nsrc;
            if (nsrc % 2 == 0 && rc_range(r, 0, 1)) {
                dst_ndim = 2;
                dst_shape[0] = 2;
                dst_shape[1] = nsrc / 2;
            }
        }
    } else {
        dst_ndim = rc_mesh_shape(r, max_mesh, dst_shape);
    }
    for (int a = 0; a < dst_ndim; a++)
        ndst *= dst_shape[a];
    /* overlap: k of the source devices (at least one) are destination devices too */
    int64_t k = c->mode == RC_OVERLAP ? rc_range(r, 1, nsrc < ndst ? nsrc : ndst) : 0;
    int64_t need = c->mode == RC_IDENTICAL ? nsrc : nsrc + ndst - k;
    need += rc_range(r, 0, 6); /* spare devices */
    int64_t dph = rc_range(r, 1, 8);
    int64_t hosts = (need + dph - 1) / dph;
    int64_t total = hosts * dph;
    for (int64_t i = 0; i < total; i++)
        pool[i] = i;
    if (rc_range(r, 0, 3))
        rc_shuffle(r, pool, total);
    memcpy(ids_src, pool, (size_t)nsrc * sizeof *ids_src);
    if (c->mode == RC_DISJOINT) {
        memcpy(ids_dst, pool + nsrc, (size_t)ndst * sizeof *ids_dst);
    } else if (c->mode == RC_IDENTICAL) {
        memcpy(ids_dst, ids_src, (size_t)ndst * sizeof *ids_dst);
        if (rc_range(r, 0, 1))
            rc_shuffle(r, ids_dst, ndst);
    } else {
        int64_t tmp[RC_MAX_MESH];
        memcpy(tmp, ids_src, (size_t)nsrc * sizeof *tmp);
        rc_shuffle(r, tmp, nsrc);
        memcpy(ids_dst, tmp, (size_t)k * sizeof *ids_dst);
        memcpy(ids_dst + k, pool + nsrc, (size_t)(ndst - k) * sizeof *ids_dst);
        rc_shuffle(r, ids_dst, ndst);
    }
    /* topology: random bandwidths (NIC in and out may differ), latencies, NIC count; half
     * the cases a host bandwidth, drawn from its own stream so the other draws stay as they
     * were */
    rc_rng_t hr = {seed ^ 0x686f737462770000ull};
    int64_t host_mb = rc_range(&hr, 0, 1) ? rc_range(&hr, 100, 300000) : 0;
    char topo[512];
    int len =
        snprintf(topo, sizeof topo,
                 "# random case %llu\nname rand%llu\nhosts %lld\ndevices_per_host %lld\n"
                 "link copy bandwidth=%lldGB/s latency=%lldus\n"
                 "link intra  bandwidth=%lldMB/s latency=%.1fus\n"
                 "nic count=%lld in=%lldGbit/s out=%lldGbit/s latency=%lldus\n",
                 (unsigned long long)seed, (unsigned long long)seed, (long long)hosts,
                 (long long)dph, (long long)rc_range(r, 50, 2000), (long long)rc_range(r, 0, 5),
                 (long long)rc_range(r, 1000, 300000), (double)rc_range(r, 0, 100) / 10,
                 (long long)rc_range(r, 1, 4), (long long)rc_range(r, 1, 400),
                 (long long)rc_range(r, 1, 400), (long long)rc_range(r, 0, 50));
    if (host_mb)
        len += snprintf(topo + len, sizeof topo - (size_t)len, "host bandwidth=%lldMB/s\n",
                        (long long)host_mb);
    /* a third of the cases a crossbar efficiency (lib/plan/crossbar.c), own stream too */
    rc_rng_t xr = {seed ^ 0x7862617200000000ull};
    if (rc_range(&xr, 0, 2) == 0)
        snprintf(topo + len, sizeof topo - (size_t)len, "crossbar efficiency=0.%02lld\n",
                 (long long)rc_range(&xr, 50, 99));
    snprintf(c->desc, sizeof c->desc, "seed=%llu shape=", (unsigned long long)seed);
    for (int d = 0; d < c->ndim; d++) {
        size_t n = strlen(c->desc);
        snprintf(c->desc + n, sizeof c->desc - n, "%s%lld", d ? "," : "", (long long)c->shape[d]);
    }
    size_t n = strlen(c->desc);
    static const char *const modes[] = {"disjoint", "overlap", "identical"};
    snprintf(c->desc + n, sizeof c->desc - n, " dtype=%s %s hosts=%lld dph=%lld",
             mc_dtype_name(c->dtype), modes[c->mode], (long long)hosts, (long long)dph);
    if (mc_topology_parse(topo, "random.topo", &c->topo)) {
        snprintf(err, err_len, "%s: mc_topology_parse: %s\n%s", c->desc, mc_last_error(), topo);
        return -1;
    }
    if (rc_make_layout(r, c, "src", src_ndim, src_shape, ids_src, &c->src, err, err_len) ||
        rc_make_layout(r, c, "dst", dst_ndim, dst_shape, ids_dst, &c->dst, err, err_len)) {
        size_t e = strlen(err);
        snprintf(err + e, err_len - e, " [%s]", c->desc);
        rc_case_free(c);
        return -1;
    }
    n = strlen(c->desc);
    snprintf(c->desc + n, sizeof c->desc - n, " topo={%lld Gbit/s in, %lld out, host %lld MB/s}",
             (long long)(mc_topology_nic_in(c->topo) * 8 / 1e9),
             (long long)(mc_topology_nic_out(c->topo) * 8 / 1e9), (long long)host_mb);
    return 0;
}

/* For a third of the seeds with several NICs per host (a stream of its own, so the other
 * draws stay as they were): the case's topology again with a 'nic-affinity' line, each device
 * of a host on a random one of its NICs, rail-optimized half the time, so the per-NIC paths
 * of the planner and the bound (rail stripes, the NICs a host's devices reach) meet random
 * cases too. Returns 0, or -1 with err set. */
static inline int rc_case_affinity(rc_case_t *c, char *err, size_t err_len)
{
    rc_rng_t ar = {c->seed ^ 0x6166666e69747900ull};
    int nics = mc_topology_nics_per_host(c->topo);
    int64_t dph = mc_topology_devices_per_host(c->topo);
    if (nics < 2 || rc_range(&ar, 0, 2) != 0)
        return 0;
    FILE *f = tmpfile();
    char text[2048], line[512];
    size_t n = 0;
    if (!f || mc_topology_write(c->topo, f) || fseek(f, 0, SEEK_SET) ||
        (n = fread(text, 1, sizeof text - 1, f)) == 0) {
        snprintf(err, err_len, "%s: cannot write the topology again", c->desc);
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    text[n] = '\0';
    int len = snprintf(line, sizeof line, "nic-affinity map=");
    for (int64_t d = 0; d < dph && len < (int)sizeof line - 16; d++)
        len += snprintf(line + len, sizeof line - (size_t)len, "%s%lld", d ? "," : "",
                        (long long)rc_range(&ar, 0, nics - 1));
    snprintf(line + len, sizeof line - (size_t)len, "%s\n", rc_range(&ar, 0, 1) ? " rails" : "");
    strncat(text, line, sizeof text - strlen(text) - 1);
    mc_topology_t *t = NULL;
    if (mc_topology_parse(text, "random.topo", &t)) {
        snprintf(err, err_len, "%s: mc_topology_parse: %s\n%s", c->desc, mc_last_error(), text);
        return -1;
    }
    mc_topology_destroy(c->topo);
    c->topo = t;
    size_t at = strlen(c->desc);
    snprintf(c->desc + at, sizeof c->desc - at, " %.*s", (int)strcspn(line, "\n"), line);
    return 0;
}

/* Row-major flat index of coordinate x in shape (ndim dims). */
static inline int64_t rc_flat(int ndim, const int64_t *shape, const int64_t *x)
{
    int64_t i = 0;
    for (int d = 0; d < ndim; d++)
        i = i * shape[d] + x[d];
    return i;
}

/* Calls fn(ctx, flat index) for every element of box. */
static inline void rc_box_each(int ndim, const int64_t *shape, const mc_box_t *box,
                               void (*fn)(void *, int64_t), void *ctx)
{
    int64_t x[MC_MAX_NDIM];
    for (int d = 0; d < ndim; d++) {
        if (box->lo[d] >= box->hi[d])
            return;
        x[d] = box->lo[d];
    }
    for (;;) {
        fn(ctx, rc_flat(ndim, shape, x));
        int d = ndim - 1;
        while (d >= 0 && ++x[d] == box->hi[d]) {
            x[d] = box->lo[d];
            d--;
        }
        if (d < 0)
            return;
    }
}

static inline int rc_box_contains(int ndim, const mc_box_t *outer, const mc_box_t *inner)
{
    for (int d = 0; d < ndim; d++)
        if (inner->lo[d] < outer->lo[d] || inner->hi[d] > outer->hi[d])
            return 0;
    return 1;
}

static inline int rc_in_box(int ndim, const mc_box_t *box, const int64_t *x)
{
    for (int d = 0; d < ndim; d++)
        if (x[d] < box->lo[d] || x[d] >= box->hi[d])
            return 0;
    return 1;
}

#endif
