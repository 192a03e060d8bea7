/* Printing sharding specs in each notation (the inverse of spec_parse.c). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "layout_internal.h"
#include "util/util.h"

static const char *const default_axis_names[MC_MAX_NDIM] = {"x", "y", "z", "w", "v", "u", "t", "s"};

typedef struct {
    char *buf;
    size_t len, used;
    int overflow;
} writer_t;

static void put(writer_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(writer_t *w, const char *fmt, ...)
{
    if (w->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->buf + w->used, w->len - w->used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= w->len - w->used)
        w->overflow = 1;
    else
        w->used += (size_t)n;
}

mc_status_t mc_spec_format(const mc_spec_t *spec, const mc_mesh_t *mesh, mc_notation_t notation,
                           char *buf, size_t len)
{
    if (!spec || !buf)
        return mc_error(MC_ERR_INVALID, "spec format: NULL argument");
    if (len == 0)
        return mc_error(MC_ERR_OVERFLOW, "spec format: buffer of 0 bytes");
    if (mesh && mesh->ndim != spec->mesh_ndim)
        return mc_error(MC_ERR_INVALID, "spec format: spec is for a %d-axis mesh, mesh has %d",
                        spec->mesh_ndim, mesh->ndim);
    /* Write into a local buffer so that buf is untouched on failure. */
    char tmp[1024];
    writer_t w = {tmp, sizeof tmp, 0, 0};
    switch (notation) {
    case MC_NOTATION_ALPA:
        for (int d = 0; d < spec->tensor_ndim; d++) {
            if (spec->naxes[d] == 0) {
                put(&w, "R");
                continue;
            }
            put(&w, "S");
            for (int k = 0; k < spec->naxes[d]; k++)
                put(&w, "%d", spec->axes[d][k]);
        }
        break;
    case MC_NOTATION_DTENSOR: {
        int dim_of[MC_MAX_NDIM];
        for (int a = 0; a < spec->mesh_ndim; a++)
            dim_of[a] = -1;
        for (int d = 0; d < spec->tensor_ndim; d++) {
            for (int k = 0; k < spec->naxes[d]; k++) {
                /* Placements order a dim's axes by mesh axis: outer must be the lower. */
                if (k > 0 && spec->axes[d][k] < spec->axes[d][k - 1])
                    return mc_error(MC_ERR_UNSUPPORTED,
                                    "spec format: tensor dim %d is split over mesh axes in "
                                    "decreasing order (%d before %d); DTensor placements "
                                    "cannot express that",
                                    d, spec->axes[d][k - 1], spec->axes[d][k]);
                dim_of[spec->axes[d][k]] = d;
            }
        }
        put(&w, "[");
        for (int a = 0; a < spec->mesh_ndim; a++) {
            if (a)
                put(&w, ", ");
            if (dim_of[a] < 0)
                put(&w, "Replicate()");
            else
                put(&w, "Shard(%d)", dim_of[a]);
        }
        put(&w, "]");
        break;
    }
    case MC_NOTATION_JAX:
        put(&w, "P(");
        for (int d = 0; d < spec->tensor_ndim; d++) {
            if (d)
                put(&w, ", ");
            int n = spec->naxes[d];
            if (n == 0) {
                put(&w, "None");
                continue;
            }
            if (n > 1)
                put(&w, "(");
            for (int k = 0; k < n; k++) {
                int a = spec->axes[d][k];
                put(&w, "%s'%s'", k ? ", " : "", mesh ? mesh->names[a] : default_axis_names[a]);
            }
            if (n > 1)
                put(&w, ")");
        }
        put(&w, ")");
        break;
    default:
        return mc_error(MC_ERR_INVALID, "spec format: unknown notation %d", (int)notation);
    }
    if (w.overflow || w.used + 1 > len)
        return mc_error(MC_ERR_OVERFLOW, "spec format: needs more than %zu bytes", len);
    memcpy(buf, tmp, w.used + 1);
    return MC_OK;
}
