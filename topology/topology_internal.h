/* Topology structure, visible to the library's own modules (others use the accessors). */
#ifndef MC_TOPOLOGY_INTERNAL_H
#define MC_TOPOLOGY_INTERNAL_H

#include "meshcast/topology.h"

#define MC_TOPOLOGY_NAME_MAX 128

struct mc_topology {
    char name[MC_TOPOLOGY_NAME_MAX];
    int64_t hosts;
    int64_t devices_per_host;
    mc_link_t copy;       /* same-device copy */
    mc_link_t intra;      /* per device port, each direction */
    int nics;             /* NICs per host, >= 1 */
    double nic_in_bw;     /* per NIC, inbound bytes/s */
    double nic_out_bw;    /* per NIC, outbound bytes/s */
    double nic_latency;   /* seconds per message over a NIC */
    double nic_burst;     /* bytes a shaped NIC passes at once after an idle spell (its token
                             bucket, per NIC and direction); 0 = a plain link */
    double nic_msg_s;     /* NIC port time per message (chunk) besides its bytes, at the
                             sending and the receiving port, seconds; 0 = none */
    double host_bw;       /* all intra-host transfers of a host at once, bytes/s; 0 = none */
    double machine_bw;    /* all intra-host transfers of all hosts at once (hosts emulated on
                             one machine, whose cores do every copy), bytes/s; 0 = none */
    double machine_msg_s; /* machine time per intra-host message (chunk), seconds; 0 = none */
    double reshard_s;     /* fixed time of one reshard whatever its hops, seconds; 0 = none */
    double crossbar_eff;  /* NIC rate factor of a crossbar transfer (lib/plan/crossbar.c),
                             0 < E <= 1; 0 = no 'crossbar' line (off) */
    /* Compact view (mc_topology_compact): devices are 0..ndevices-1 and device i lies on
     * host host_of[i], one of used_hosts; hosts stays the cluster's. NULL for a plain
     * topology (device d on host d / devices_per_host). */
    int64_t ndevices, used_hosts;
    int64_t *host_of;
    /* NIC affinity (the 'nic-affinity' line, topology/nic_affinity.c): nic_map[i] is the NIC
     * of device i within its host (nic_map_len = devices_per_host), or in a compact view of
     * compact device i (nic_map_len = ndevices). NULL: the host's NICs are pooled. */
    int *nic_map;
    int64_t nic_map_len;
    int nic_rails;    /* NIC i of every host on one rail (leaf switch) */
    int nic_map_line; /* line of the nic-affinity text, for errors found after parsing */
};

/* What hwloc says about the local machine (topology/discover.c). */
typedef struct {
    int packages, numa, cores, pus;
    int gpus;
    int nics, nic_speed_known;
    double nic_bw; /* slowest known NIC, bytes/s per direction */
} mc_host_facts_t;
mc_status_t mc_discover_facts(mc_host_facts_t *out);

/* Allocates a zeroed topology named name (truncated to fit); NULL + MC_ERR_NOMEM. */
mc_topology_t *mc_topology_new(const char *name);

/* The planner's view of the devices it uses: ids (ascending, distinct, all inside topo)
 * become devices 0..n-1 and their hosts become hosts 0..h-1 in order, so per-device and
 * per-host arrays follow what is used, not the largest id or the --hosts count. */
mc_status_t mc_topology_compact(const mc_topology_t *topo, const int64_t *ids, int64_t n,
                                mc_topology_t **out);

/* Host of device d, which must be one of topo's: mc_topology_host_of without its checks,
 * inline for the planner's inner loops (a call per edge cost more than the loops' work). */
static inline int64_t mc_host_of(const mc_topology_t *topo, int64_t d)
{
    return topo->host_of ? topo->host_of[d] : d / topo->devices_per_host;
}
/* NIC of device d (0..nics-1), or -1 when the topology pools its NICs. Inline, as the next
 * two: the simulator and the strategies ask them per edge. */
static inline int mc_topology_nic_index(const mc_topology_t *topo, int64_t d)
{
    if (!topo->nic_map || d < 0)
        return -1;
    int64_t i = topo->host_of ? d : d % topo->devices_per_host;
    return i < topo->nic_map_len ? topo->nic_map[i] : -1;
}
/* NIC ports per host in the cost model: the NIC count with an affinity map, else 1 (the
 * host's NICs pooled into one port of their summed rate). */
static inline int64_t mc_topology_nic_ports(const mc_topology_t *topo)
{
    return topo->nic_map ? topo->nics : 1;
}
/* Seconds per byte of one cost-model NIC port: the slower direction of the host's NICs
 * (as mc_topology_link's NIC), pooled into one port or split over a port per NIC. */
static inline double mc_topology_nic_port_seconds_per_byte(const mc_topology_t *topo)
{
    double slower = topo->nic_in_bw < topo->nic_out_bw ? topo->nic_in_bw : topo->nic_out_bw;
    return (double)mc_topology_nic_ports(topo) / (slower * topo->nics);
}
/* Cost-model NIC port of device d, in 0..hosts*nic_ports-1. */
static inline int64_t mc_topology_nic_port(const mc_topology_t *topo, int64_t d)
{
    int i = mc_topology_nic_index(topo, d);
    return mc_host_of(topo, d) * mc_topology_nic_ports(topo) + (i > 0 ? i : 0);
}
/* Extra latency of a NIC transfer from device a to device b: on a rail-optimized cluster
 * a transfer between NICs on different rails crosses the spine, one more NIC latency.
 * Inline: the rails' loops ask it per NIC pair. */
static inline double mc_topology_nic_extra_latency(const mc_topology_t *topo, int64_t a, int64_t b)
{
    if (!topo->nic_rails || mc_topology_nic_index(topo, a) == mc_topology_nic_index(topo, b))
        return 0;
    return topo->nic_latency;
}
/* Parses the rest of a 'nic-affinity map=N,N,... [rails]' line into t; on failure writes
 * the reason (without location) to why and returns -1. */
int mc_nic_affinity_parse(char **save, mc_topology_t *t, char *why, size_t n);
/* Checks the map against devices_per_host and the NIC count once the whole text is read. */
int mc_nic_affinity_check(const mc_topology_t *t, char *why, size_t n);
/* Writes the nic-affinity line of a plain topology that has one. */
void mc_nic_affinity_write(const mc_topology_t *t, FILE *out);
/* Copies src's map into dst (dst's map pointer is overwritten); MC_ERR_NOMEM. */
mc_status_t mc_nic_affinity_copy(const mc_topology_t *src, mc_topology_t *dst);

#endif
