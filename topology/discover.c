/* Local-machine discovery with hwloc: one host whose devices are its GPUs, or its NUMA
 * nodes (packages) when it has none. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topology_internal.h"
#include "util/util.h"

#ifndef MESHCAST_HAVE_HWLOC
#define MESHCAST_HAVE_HWLOC 0
#endif

#if MESHCAST_HAVE_HWLOC

#include <hwloc.h>

/* Placeholder link figures: hwloc reports structure, not speed. A GPU host is assumed to
 * talk over PCIe 4.0 x16 (the conservative case without NVLink); a CPU host gets the
 * cpu-testbed figures. Calibration replaces both. */
#define GPU_COPY_BW 500e9
#define GPU_INTRA_BW 25e9
#define CPU_COPY_BW 5e9
#define CPU_INTRA_BW 2.5e9
#define DEFAULT_NIC_BW (10e9 / 8) /* when the OS does not report a link speed */

typedef mc_host_facts_t summary_t;

static mc_status_t open_hwloc(hwloc_topology_t *out)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) < 0)
        return mc_error(MC_ERR_INTERNAL, "hwloc_topology_init failed");
    /* I/O objects (GPUs, NICs) are filtered out by default. */
    if (hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0 ||
        hwloc_topology_load(t) < 0) {
        hwloc_topology_destroy(t);
        return mc_error(MC_ERR_INTERNAL, "hwloc could not load the local topology");
    }
    *out = t;
    return MC_OK;
}

/* A PCI device counts as a GPU when it has a compute OS device (CUDA, OpenCL, ...), a GPU
 * OS device from a vendor library (NVML, RSMI, LevelZero), or is an NVIDIA/AMD display or
 * 3D controller. Plain DRM cards are not enough: server BMCs and VMs expose one. */
static int is_gpu(hwloc_obj_t pci)
{
    unsigned vendor = pci->attr->pcidev.vendor_id;
    if ((pci->attr->pcidev.class_id >> 8) == 0x03 && (vendor == 0x10de || vendor == 0x1002))
        return 1;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
            return 1;
        if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU && c->subtype)
            return 1;
    }
    return 0;
}

static int is_nic(hwloc_obj_t osdev)
{
    return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
           osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
}

/* Link speed from sysfs (Linux): Ethernet in Mbit/s, InfiniBand as "200 Gb/sec (4X HDR)".
 * Returns bytes/s, or 0 when unknown (virtual NICs report -1). */
static double nic_speed(hwloc_obj_t osdev)
{
    char path[256];
    double v = 0;
    int fabric = osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    if (fabric)
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/1/rate", osdev->name);
    else
        snprintf(path, sizeof path, "/sys/class/net/%s/speed", osdev->name);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    if (fscanf(f, "%lf", &v) != 1 || v <= 0)
        v = 0;
    fclose(f);
    return fabric ? v * 1e9 / 8 : v * 1e6 / 8;
}

static void summarize(hwloc_topology_t t, summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    s->numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    s->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    s->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    for (hwloc_obj_t p = hwloc_get_next_pcidev(t, NULL); p; p = hwloc_get_next_pcidev(t, p))
        s->gpus += is_gpu(p);
    /* Compute traffic uses the fabric NICs when there are any, else physical Ethernet. */
    int fabrics = 0, ethernet = 0;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o; o = hwloc_get_next_osdev(t, o)) {
        if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
            fabrics++;
        else if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->parent &&
                 o->parent->type == HWLOC_OBJ_PCI_DEVICE)
            ethernet++;
    }
    s->nics = fabrics ? fabrics : ethernet;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o; o = hwloc_get_next_osdev(t, o)) {
        int counted = fabrics ? o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS
                              : o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK;
        double bw = counted ? nic_speed(o) : 0;
        if (bw > 0 && (!s->nic_speed_known || bw < s->nic_bw)) {
            s->nic_bw = bw;
            s->nic_speed_known = 1;
        }
    }
    if (!s->nic_speed_known)
        s->nic_bw = DEFAULT_NIC_BW;
}

/* Whether o is one of the NICs summarize counts: fabric NICs when there are any, else
 * physical (PCI) Ethernet. */
static int counted_nic(hwloc_obj_t o, int fabrics)
{
    if (fabrics)
        return o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->parent &&
           o->parent->type == HWLOC_OBJ_PCI_DEVICE;
}

/* Steps from a up to its first ancestor that also holds b (their deepest common ancestor):
 * 1 when b sits beside a under the same PCIe switch, more through bridges above it. */
static int steps_to_common(hwloc_obj_t a, hwloc_obj_t b)
{
    for (int steps = 0; a; a = a->parent, steps++)
        for (hwloc_obj_t c = b; c; c = c->parent)
            if (c == a)
                return steps;
    return INT_MAX;
}

/* map[g] = the NIC nearest GPU g in the PCI tree (under its deepest PCIe ancestor; the
 * lower NIC index on ties), GPUs and NICs numbered in hwloc's order. Returns the GPUs
 * mapped: 0 when there is no NIC or more than n GPUs. */
static int nearest_nics(hwloc_topology_t t, int *map, int n)
{
    int fabrics = 0, g = 0;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o; o = hwloc_get_next_osdev(t, o))
        fabrics |= o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    for (hwloc_obj_t p = hwloc_get_next_pcidev(t, NULL); p; p = hwloc_get_next_pcidev(t, p)) {
        if (!is_gpu(p))
            continue;
        if (g == n)
            return 0;
        int best = INT_MAX, index = 0;
        map[g] = -1;
        for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o; o = hwloc_get_next_osdev(t, o)) {
            if (!counted_nic(o, fabrics))
                continue;
            int steps = steps_to_common(p, o);
            if (steps < best) {
                best = steps;
                map[g] = index;
            }
            index++;
        }
        if (map[g] < 0)
            return 0;
        g++;
    }
    return g;
}

mc_status_t mc_discover_facts(mc_host_facts_t *out)
{
    hwloc_topology_t h = NULL;
    mc_status_t st = open_hwloc(&h);
    if (st)
        return st;
    summarize(h, out);
    hwloc_topology_destroy(h);
    return MC_OK;
}

static const char *plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

mc_status_t mc_topology_discover(mc_topology_t **out)
{
    if (!out)
        return mc_error(MC_ERR_INVALID, "mc_topology_discover: NULL argument");
    hwloc_topology_t h = NULL;
    mc_status_t st = open_hwloc(&h);
    if (st)
        return st;
    summary_t s;
    summarize(h, &s);
    int *map = s.gpus > 0 ? mc_calloc((size_t)s.gpus, sizeof *map) : NULL;
    if (s.gpus > 0 && !map) {
        hwloc_topology_destroy(h);
        return MC_ERR_NOMEM;
    }
    int mapped = map ? nearest_nics(h, map, s.gpus) : 0;
    hwloc_topology_destroy(h);

    char name[MC_TOPOLOGY_NAME_MAX];
    int64_t devices;
    if (s.gpus > 0) {
        devices = s.gpus;
        snprintf(name, sizeof name, "local (%d %s, %d %s, %d %s)", s.cores,
                 plural(s.cores, "core", "cores"), s.numa,
                 plural(s.numa, "NUMA node", "NUMA nodes"), s.gpus, plural(s.gpus, "GPU", "GPUs"));
    } else if (s.numa > 0) {
        devices = s.numa;
        snprintf(name, sizeof name, "local (%d %s, %d %s, no GPU)", s.cores,
                 plural(s.cores, "core", "cores"), s.numa,
                 plural(s.numa, "NUMA node", "NUMA nodes"));
    } else {
        devices = s.packages > 0 ? s.packages : 1;
        snprintf(name, sizeof name, "local (%d %s, %lld %s, no GPU)", s.cores,
                 plural(s.cores, "core", "cores"), (long long)devices,
                 plural((int)devices, "package", "packages"));
    }
    mc_topology_t *t = mc_topology_new(name);
    if (!t) {
        free(map);
        return MC_ERR_NOMEM;
    }
    /* each GPU's cross-host bytes go through the NIC nearest it (docs/topology.md) */
    if (mapped == s.gpus && s.gpus > 0 && s.nics > 0) {
        t->nic_map = map;
        t->nic_map_len = s.gpus;
    } else {
        free(map);
    }
    t->hosts = 1;
    t->devices_per_host = devices;
    t->copy.bandwidth = s.gpus ? GPU_COPY_BW : CPU_COPY_BW;
    t->copy.latency = s.gpus ? 2e-6 : 1e-6;
    t->intra.bandwidth = s.gpus ? GPU_INTRA_BW : CPU_INTRA_BW;
    t->intra.latency = s.gpus ? 10e-6 : 5e-6;
    t->nics = s.nics > 0 ? s.nics : 1; /* one host needs no NIC, but the model wants one */
    t->nic_in_bw = t->nic_out_bw = s.nic_bw;
    t->nic_latency = 25e-6;
    *out = t;
    return MC_OK;
}

static const char *osdev_kind(hwloc_obj_t o)
{
    switch (o->attr->osdev.type) {
    case HWLOC_OBJ_OSDEV_GPU:
        return "gpu";
    case HWLOC_OBJ_OSDEV_COPROC:
        return "coproc";
    case HWLOC_OBJ_OSDEV_NETWORK:
        return "network";
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
        return "openfabrics";
    default:
        return "other";
    }
}

static void write_pci_address(FILE *f, hwloc_obj_t pci)
{
    fprintf(f, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
            pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

mc_status_t mc_topology_write_discovery(FILE *out)
{
    if (!out)
        return mc_error(MC_ERR_INVALID, "mc_topology_write_discovery: NULL argument");
    hwloc_topology_t h = NULL;
    mc_status_t st = open_hwloc(&h);
    if (st)
        return st;
    summary_t s;
    summarize(h, &s);
    /* Every line is a .topo comment, so report + derived profile parse as one file. */
    const char *host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(h), "HostName");
    fprintf(out, "# hwloc %s discovery of %s\n", HWLOC_VERSION, host ? host : "this machine");
    fprintf(out, "# packages: %d\n# NUMA nodes: %d\n# cores: %d\n# PUs: %d\n", s.packages, s.numa,
            s.cores, s.pus);
    fprintf(out, "# GPUs: %d\n", s.gpus);
    int i = 0;
    for (hwloc_obj_t p = hwloc_get_next_pcidev(h, NULL); p; p = hwloc_get_next_pcidev(h, p)) {
        if (!is_gpu(p))
            continue;
        const char *model = hwloc_obj_get_info_by_name(p, "PCIDevice");
        fprintf(out, "#   gpu %d: pci ", i++);
        write_pci_address(out, p);
        fprintf(out, " %04x:%04x %s", p->attr->pcidev.vendor_id, p->attr->pcidev.device_id,
                model ? model : "");
        for (hwloc_obj_t c = p->io_first_child; c; c = c->next_sibling)
            if (c->type == HWLOC_OBJ_OS_DEVICE)
                fprintf(out, " [%s %s]", osdev_kind(c), c->name ? c->name : "?");
        fputc('\n', out);
    }
    int nics = 0;
    for (hwloc_obj_t o = hwloc_get_next_osdev(h, NULL); o; o = hwloc_get_next_osdev(h, o))
        nics += is_nic(o);
    fprintf(out, "# NICs: %d\n", nics);
    for (hwloc_obj_t o = hwloc_get_next_osdev(h, NULL); o; o = hwloc_get_next_osdev(h, o)) {
        if (!is_nic(o))
            continue;
        fprintf(out, "#   %s (%s", o->name ? o->name : "?", osdev_kind(o));
        if (o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE) {
            fprintf(out, ", pci ");
            write_pci_address(out, o->parent);
        } else {
            fprintf(out, ", virtual");
        }
        double bw = nic_speed(o);
        if (bw > 0)
            fprintf(out, ", %g Gbit/s", bw * 8 / 1e9);
        fprintf(out, ")\n");
    }
    fprintf(out,
            "# derived: devices = %s; link figures are placeholders (%s)%s; calibrate to "
            "measure them\n",
            s.gpus   ? "GPUs"
            : s.numa ? "NUMA nodes"
                     : "packages",
            s.gpus ? "PCIe 4.0 x16 between GPUs" : "cpu-testbed figures",
            s.nic_speed_known ? "" : ", NIC speed unknown: 10 Gbit/s assumed");
    hwloc_topology_destroy(h);
    if (ferror(out))
        return mc_error(MC_ERR_IO, "writing the discovery report failed");
    return MC_OK;
}

#else /* !MESHCAST_HAVE_HWLOC */

mc_status_t mc_discover_facts(mc_host_facts_t *out)
{
    (void)out;
    return mc_error(MC_ERR_UNSUPPORTED,
                    "topology discovery needs hwloc; this build has none (install libhwloc-dev "
                    "and rebuild with MESHCAST_WITH_HWLOC=ON)");
}

mc_status_t mc_topology_discover(mc_topology_t **out)
{
    (void)out;
    return mc_error(MC_ERR_UNSUPPORTED,
                    "topology discovery needs hwloc; this build has none (install libhwloc-dev "
                    "and rebuild with MESHCAST_WITH_HWLOC=ON)");
}

mc_status_t mc_topology_write_discovery(FILE *out)
{
    (void)out;
    return mc_error(MC_ERR_UNSUPPORTED,
                    "topology discovery needs hwloc; this build has none (install libhwloc-dev "
                    "and rebuild with MESHCAST_WITH_HWLOC=ON)");
}

#endif
