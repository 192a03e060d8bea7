/* libFuzzer harness for .topo text: mc_topology_parse must accept or refuse with a message;
 * an accepted topology written with mc_topology_write must parse back to the same name,
 * counts and link figures. Any violation aborts (a crash for libFuzzer). See README.md. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meshcast/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *text)
{
    fprintf(stderr, "fuzz_topology: %s (last error: %s)\n--- input ---\n%.2000s\n", what,
            mc_last_error(), text);
    abort();
}

static int same_link(mc_link_t a, mc_link_t b)
{
    return a.bandwidth == b.bandwidth && a.latency == b.latency;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    mc_topology_t *t = NULL, *back = NULL;
    mc_status_t s = mc_topology_parse(text, "fuzz.topo", &t);
    if (s != MC_OK) {
        if (t || !mc_last_error()[0])
            die("failed parse without a message or with an output", text);
        free(text);
        return 0;
    }
    static const mc_link_class_t classes[] = {MC_LINK_COPY, MC_LINK_INTRA, MC_LINK_NIC};
    for (int i = 0; i < 3; i++) {
        mc_link_t l = mc_topology_link(t, classes[i]);
        if (!(isfinite(l.bandwidth) && l.bandwidth > 0 && isfinite(l.latency) && l.latency >= 0))
            die("link figures out of range", text);
    }
    if (mc_topology_hosts(t) < 1 || mc_topology_devices_per_host(t) < 1 ||
        mc_topology_nics_per_host(t) < 1 || !mc_topology_name(t)[0])
        die("counts or name out of range", text);

    char *out = NULL;
    size_t len = 0;
    FILE *ms = open_memstream(&out, &len);
    if (!ms || mc_topology_write(t, ms) != MC_OK || fclose(ms) != 0)
        die("cannot write the topology", text);
    if (mc_topology_parse(out, "fuzz.topo", &back) != MC_OK)
        die("written text does not parse back", out);
    if (strcmp(mc_topology_name(t), mc_topology_name(back)) ||
        mc_topology_hosts(t) != mc_topology_hosts(back) ||
        mc_topology_devices_per_host(t) != mc_topology_devices_per_host(back) ||
        mc_topology_nics_per_host(t) != mc_topology_nics_per_host(back) ||
        mc_topology_nic_in(t) != mc_topology_nic_in(back) ||
        mc_topology_nic_out(t) != mc_topology_nic_out(back))
        die("written text parses back to other counts or name", out);
    for (int i = 0; i < 3; i++)
        if (!same_link(mc_topology_link(t, classes[i]), mc_topology_link(back, classes[i])))
            die("written text parses back to other link figures", out);
    mc_topology_destroy(back);
    mc_topology_destroy(t);
    free(out);
    free(text);
    return 0;
}
