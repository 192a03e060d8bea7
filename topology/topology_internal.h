/* Topology structure, visible to the library's own modules. */
#ifndef MC_TOPOLOGY_INTERNAL_H
#define MC_TOPOLOGY_INTERNAL_H

#include "meshcast/topology.h"

struct mc_topology {
    char name[64];
    int64_t hosts;
    int64_t devices_per_host;
    mc_link_t copy;  /* same-device copy */
    mc_link_t intra; /* per device port, each direction */
    int nics;        /* NICs per host */
    mc_link_t nic;   /* per NIC, each direction (bandwidth is out; see nic_in_bw) */
    double nic_in_bw;  /* per NIC, inbound bytes/s */
};

#endif
