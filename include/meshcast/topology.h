/* Cluster descriptions: hosts, devices per host, link classes, NICs. */
#ifndef MESHCAST_TOPOLOGY_H
#define MESHCAST_TOPOLOGY_H

#include <stdint.h>
#include <stdio.h>
#include "meshcast/comm.h"
#include "meshcast/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mc_topology mc_topology_t;

/* Link classes of the cost model. */
typedef enum {
    MC_LINK_COPY,  /* within one device (source and destination buffer on the same device) */
    MC_LINK_INTRA, /* device to device inside a host, per device port and direction */
    MC_LINK_NIC    /* host to host, per host NIC and direction */
} mc_link_class_t;

typedef struct {
    double bandwidth; /* bytes per second, per port and direction */
    double latency;   /* seconds per message */
} mc_link_t;

/* Loads a built-in profile by name ("p3.8xlarge", "dgx-a100", "dgx-h100", "cpu-testbed")
 * or a .topo file by path (any argument containing '/' or ending in ".topo"). */
mc_status_t mc_topology_load(const char *name_or_path, mc_topology_t **out);
/* Parses .topo text (docs/topology.md); origin names the text in error messages. */
mc_status_t mc_topology_parse(const char *text, const char *origin, mc_topology_t **out);
/* The local machine as one host, from hwloc (packages, NUMA nodes, GPUs, NICs). */
mc_status_t mc_topology_discover(mc_topology_t **out);

enum {
    MC_DISCOVER_PARAM_DEVICES_PER_RANK = 1u << 0,
    MC_DISCOVER_PARAM_CALIBRATE_BYTES = 1u << 1,
    MC_DISCOVER_PARAM_REPORT = 1u << 2
};

typedef struct {
    uint64_t field_mask;      /* MC_DISCOVER_PARAM_* bits of the fields that are set */
    int64_t devices_per_rank; /* default: the host's devices (GPUs, else NUMA nodes) shared
                                 among its ranks, at least 1 */
    int64_t calibrate_bytes;  /* > 4096: time reshards of this many bytes from host 0 to host 1
                                 and set the NIC figures from it; default 0 (no calibration) */
    FILE *report;             /* rank 0 writes one '#' line per host (and the calibration) */
} mc_discover_params_t;

/* Collective: the communicator's ranks as a cluster (docs/topology.md, "Cluster
 * discovery"). Ranks sharing a boot id, network and IPC namespace and hostname are one
 * host; hosts must hold contiguous, equally many ranks (MC_ERR_UNSUPPORTED otherwise).
 * Every rank gets the same topology: hosts in rank order, devices_per_host = ranks per host
 * x devices per rank, hwloc's figures as the minimum over hosts. params may be NULL. */
mc_status_t mc_topology_discover_comm(mc_comm_t *comm, const mc_discover_params_t *params,
                                      mc_topology_t **out);
mc_status_t mc_topology_copy(const mc_topology_t *topo, mc_topology_t **out);
void mc_topology_destroy(mc_topology_t *topo);

/* Writes the topology as .topo text (parseable by mc_topology_parse). */
mc_status_t mc_topology_write(const mc_topology_t *topo, FILE *out);
/* Writes a hwloc discovery report (more detail than the .topo text). */
mc_status_t mc_topology_write_discovery(FILE *out);

const char *mc_topology_name(const mc_topology_t *topo);
int64_t mc_topology_hosts(const mc_topology_t *topo);
int64_t mc_topology_devices_per_host(const mc_topology_t *topo);
int64_t mc_topology_devices(const mc_topology_t *topo); /* hosts * devices_per_host */
mc_status_t mc_topology_set_hosts(mc_topology_t *topo, int64_t hosts);
/* Host of a device id (d / devices_per_host), -1 if out of range. */
int64_t mc_topology_host_of(const mc_topology_t *topo, int64_t device_id);
mc_link_t mc_topology_link(const mc_topology_t *topo, mc_link_class_t cls);
/* Aggregate NIC rate of one host (all its NICs) in each direction, bytes/s. */
double mc_topology_nic_in(const mc_topology_t *topo);
double mc_topology_nic_out(const mc_topology_t *topo);
int mc_topology_nics_per_host(const mc_topology_t *topo);
/* Bytes one NIC passes at once, per direction, after an idle spell: the token bucket of a
 * shaped NIC (the .topo 'nic ... burst=' attribute; the emulated cluster's tc shaping); 0 for
 * a plain link, which sends every byte at its rate. The planner does not use it; the
 * trainer's step simulator does (docs/trainer.md). */
double mc_topology_nic_burst(const mc_topology_t *topo);
/* NIC affinity (the .topo 'nic-affinity' line, docs/topology.md): the NIC (0..nics-1 of
 * its host) a device's cross-host bytes leave and enter through. MC_ERR_NOT_FOUND when the
 * topology pools its host's NICs (no such line); MC_ERR_INVALID for a device out of range. */
mc_status_t mc_topology_nic_of(const mc_topology_t *topo, int64_t device_id, int *nic);
/* *rails = 1 when NIC i of every host sits on one rail (leaf switch), else 0. */
mc_status_t mc_topology_nic_rails(const mc_topology_t *topo, int *rails);
/* Aggregate bytes/s of all intra-host transfers of one host at once (CPU-driven copies
 * shared by the host's ranks); 0 when the profile sets no limit. */
double mc_topology_host_bandwidth(const mc_topology_t *topo);

/* Names of the built-in profiles, NULL-terminated. */
const char *const *mc_topology_builtin_names(void);

#ifdef __cplusplus
}
#endif
#endif
