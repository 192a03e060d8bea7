/* Sharding spec objects: creation, validation, copies and accessors. */
#include <stdlib.h>
#include <string.h>
#include "layout_internal.h"
#include "util/util.h"

mc_status_t mc_spec_validate(const mc_spec_t *spec, const char *label)
{
    if (spec->tensor_ndim < 1 || spec->tensor_ndim > MC_MAX_NDIM)
        return mc_error(MC_ERR_INVALID, "%s: tensor rank %d (1 to %d supported)", label,
                        spec->tensor_ndim, MC_MAX_NDIM);
    if (spec->mesh_ndim < 1 || spec->mesh_ndim > MC_MAX_NDIM)
        return mc_error(MC_ERR_INVALID, "%s: mesh rank %d (1 to %d supported)", label,
                        spec->mesh_ndim, MC_MAX_NDIM);
    int used[MC_MAX_NDIM] = {0};
    for (int d = 0; d < spec->tensor_ndim; d++) {
        if (spec->naxes[d] < 0 || spec->naxes[d] > spec->mesh_ndim)
            return mc_error(MC_ERR_INVALID, "%s: tensor dim %d has %d mesh axes, mesh has %d axes",
                            label, d, spec->naxes[d], spec->mesh_ndim);
        for (int k = 0; k < spec->naxes[d]; k++) {
            int a = spec->axes[d][k];
            if (a < 0 || a >= spec->mesh_ndim)
                return mc_error(MC_ERR_INVALID, "%s: mesh has %d axes (axis %d out of range)",
                                label, spec->mesh_ndim, a);
            if (used[a])
                return mc_error(MC_ERR_INVALID, "%s: mesh axis %d used twice", label, a);
            used[a] = 1;
        }
    }
    return MC_OK;
}

mc_status_t mc_spec_create(int tensor_ndim, const int *naxes, const int *axes,
                           const mc_mesh_t *mesh, mc_spec_t **out)
{
    if (!mesh || !out || (naxes && !axes))
        return mc_error(MC_ERR_INVALID, "spec: NULL argument");
    if (tensor_ndim < 1 || tensor_ndim > MC_MAX_NDIM)
        return mc_error(MC_ERR_INVALID, "spec: tensor rank %d (1 to %d supported)", tensor_ndim,
                        MC_MAX_NDIM);
    mc_spec_t tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.tensor_ndim = tensor_ndim;
    tmp.mesh_ndim = mesh->ndim;
    int pos = 0;
    for (int d = 0; d < tensor_ndim && naxes; d++) {
        if (naxes[d] < 0 || naxes[d] > mesh->ndim)
            return mc_error(MC_ERR_INVALID,
                            "spec: tensor dim %d has %d mesh axes, mesh has %d axes", d, naxes[d],
                            mesh->ndim);
        tmp.naxes[d] = naxes[d];
        for (int k = 0; k < naxes[d]; k++)
            tmp.axes[d][k] = axes[pos++];
    }
    mc_status_t s = mc_spec_validate(&tmp, "spec");
    if (s)
        return s;
    mc_spec_t *spec = mc_calloc(1, sizeof *spec);
    if (!spec)
        return MC_ERR_NOMEM;
    *spec = tmp;
    *out = spec;
    return MC_OK;
}

mc_status_t mc_spec_copy(const mc_spec_t *spec, mc_spec_t **out)
{
    if (!spec || !out)
        return mc_error(MC_ERR_INVALID, "spec copy: NULL argument");
    mc_spec_t *c = mc_calloc(1, sizeof *c);
    if (!c)
        return MC_ERR_NOMEM;
    *c = *spec;
    *out = c;
    return MC_OK;
}

void mc_spec_destroy(mc_spec_t *spec)
{
    free(spec);
}

int mc_spec_tensor_ndim(const mc_spec_t *spec)
{
    return spec ? spec->tensor_ndim : 0;
}

int mc_spec_mesh_ndim(const mc_spec_t *spec)
{
    return spec ? spec->mesh_ndim : 0;
}

int mc_spec_dim_naxes(const mc_spec_t *spec, int d)
{
    if (!spec || d < 0 || d >= spec->tensor_ndim)
        return 0;
    return spec->naxes[d];
}

int mc_spec_dim_axis(const mc_spec_t *spec, int d, int k)
{
    if (!spec || d < 0 || d >= spec->tensor_ndim || k < 0 || k >= spec->naxes[d])
        return -1;
    return spec->axes[d][k];
}
