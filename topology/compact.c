/* The planner's compact view of a topology: only the devices and hosts a plan uses. */
#include <stdlib.h>
#include "topology_internal.h"
#include "util/util.h"

mc_status_t mc_topology_compact(const mc_topology_t *topo, const int64_t *ids, int64_t n,
                                mc_topology_t **out)
{
    if (!topo || topo->host_of || !ids || n < 1 || !out)
        return mc_error(MC_ERR_INVALID, "mc_topology_compact: bad argument");
    mc_topology_t *t = mc_topology_new(topo->name);
    if (!t)
        return MC_ERR_NOMEM;
    *t = *topo;
    t->host_of = mc_calloc((size_t)n, sizeof *t->host_of);
    /* the compact view keeps each used device's NIC, indexed by compact device */
    t->nic_map = topo->nic_map ? mc_calloc((size_t)n, sizeof *t->nic_map) : NULL;
    if (!t->host_of || (topo->nic_map && !t->nic_map)) {
        mc_topology_destroy(t);
        return MC_ERR_NOMEM;
    }
    for (int64_t i = 0; t->nic_map && i < n; i++)
        t->nic_map[i] = topo->nic_map[ids[i] % topo->devices_per_host];
    t->nic_map_len = topo->nic_map ? n : 0;
    /* ids ascend, so a host's devices are one run and hosts keep their order. */
    int64_t hosts = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && ids[i] / topo->devices_per_host != ids[i - 1] / topo->devices_per_host)
            hosts++;
        t->host_of[i] = hosts;
    }
    t->used_hosts = hosts + 1;
    t->ndevices = n;
    *out = t;
    return MC_OK;
}
