/* NIC affinity: which of its host's NICs each device sends and receives through, and whether
 * the cluster is rail-optimized (docs/topology.md, "NIC affinity"). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "topology_internal.h"
#include "util/util.h"

/* One entry of the map: a non-negative decimal integer below INT_MAX. */
static int parse_index(const char *tok, int *out)
{
    if (*tok < '0' || *tok > '9')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(tok, &end, 10);
    if (*end || errno == ERANGE || v >= INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

int mc_nic_affinity_parse(char **save, mc_topology_t *t, char *why, size_t n)
{
    char *tok = strtok_r(NULL, " \t\r", save);
    if (!tok || strncmp(tok, "map=", 4) || !tok[4]) {
        snprintf(why, n, "nic-affinity: expected map=N,N,... (a NIC index per device of a host)");
        return -1;
    }
    char *list = tok + 4;
    int64_t len = 1;
    for (const char *c = list; *c; c++)
        len += *c == ',';
    int *map = mc_calloc((size_t)len, sizeof *map);
    if (!map) {
        snprintf(why, n, "nic-affinity: out of memory");
        return -1;
    }
    char *entry = list;
    for (int64_t i = 0; i < len; i++) {
        char *comma = strchr(entry, ',');
        if (comma)
            *comma = '\0';
        if (parse_index(entry, &map[i])) {
            snprintf(why, n, "nic-affinity map: entry %lld '%s' is not a NIC index", (long long)i,
                     entry);
            free(map);
            return -1;
        }
        entry = comma ? comma + 1 : entry;
    }
    int rails = 0;
    while ((tok = strtok_r(NULL, " \t\r", save))) {
        if (strcmp(tok, "rails") || rails) {
            snprintf(why, n, "nic-affinity: unexpected '%s' (expected map=... and 'rails')", tok);
            free(map);
            return -1;
        }
        rails = 1;
    }
    t->nic_map = map;
    t->nic_map_len = len;
    t->nic_rails = rails;
    return 0;
}

int mc_nic_affinity_check(const mc_topology_t *t, char *why, size_t n)
{
    if (!t->nic_map)
        return 0;
    if (t->nic_map_len != t->devices_per_host) {
        snprintf(why, n, "nic-affinity map has %lld entries, devices_per_host is %lld",
                 (long long)t->nic_map_len, (long long)t->devices_per_host);
        return -1;
    }
    for (int64_t i = 0; i < t->nic_map_len; i++)
        if (t->nic_map[i] >= t->nics) {
            snprintf(why, n, "nic-affinity map: device %lld's NIC %d is not below nic count=%d",
                     (long long)i, t->nic_map[i], t->nics);
            return -1;
        }
    return 0;
}

void mc_nic_affinity_write(const mc_topology_t *t, FILE *out)
{
    if (!t->nic_map || t->host_of)
        return;
    fputs("nic-affinity map=", out);
    for (int64_t i = 0; i < t->nic_map_len; i++)
        fprintf(out, "%s%d", i ? "," : "", t->nic_map[i]);
    fputs(t->nic_rails ? " rails\n" : "\n", out);
}

mc_status_t mc_nic_affinity_copy(const mc_topology_t *src, mc_topology_t *dst)
{
    dst->nic_map = NULL;
    if (!src->nic_map)
        return MC_OK;
    dst->nic_map = mc_calloc((size_t)src->nic_map_len, sizeof *dst->nic_map);
    if (!dst->nic_map)
        return MC_ERR_NOMEM;
    memcpy(dst->nic_map, src->nic_map, (size_t)src->nic_map_len * sizeof *dst->nic_map);
    return MC_OK;
}

mc_status_t mc_topology_nic_of(const mc_topology_t *topo, int64_t device_id, int *nic)
{
    if (!topo || !nic)
        return mc_error(MC_ERR_INVALID, "mc_topology_nic_of: NULL argument");
    if (device_id < 0 || device_id >= mc_topology_devices(topo))
        return mc_error(MC_ERR_INVALID, "topology '%s': no device %lld", topo->name,
                        (long long)device_id);
    int i = mc_topology_nic_index(topo, device_id);
    if (i < 0)
        return mc_error(MC_ERR_NOT_FOUND, "topology '%s' pools its NICs (no nic-affinity line)",
                        topo->name);
    *nic = i;
    return MC_OK;
}

mc_status_t mc_topology_nic_rails(const mc_topology_t *topo, int *rails)
{
    if (!topo || !rails)
        return mc_error(MC_ERR_INVALID, "mc_topology_nic_rails: NULL argument");
    *rails = topo->nic_map && topo->nic_rails;
    return MC_OK;
}
