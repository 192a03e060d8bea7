/* The settings table: the one place where tunables and their defaults are declared. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "meshcast/config.h"
#include "util.h"

static const mc_setting_t settings[] = {
    {"CHUNK_BYTES", "0", "pipeline chunk size in bytes (K/M/G suffixes); 0 = chosen per flow"},
    {"TIMEOUT", "30", "seconds a rank waits for a peer before failing the request"},
    {"LOG_LEVEL", "warn", "error | warn | info | debug"},
    {"CLUSTERS_DIR", "", "extra directory searched for <name>.topo profiles"},
    {"THREADS", "0", "worker threads copying for an in-process rank; 0 = one per CPU, at most 8"},
    {"RANK", "", "this process's rank (environment bootstrap)"},
    {"NRANKS", "", "number of ranks (environment bootstrap)"},
    {"ROOT", "", "host:port where rank 0 listens (environment bootstrap)"},
    {"UCX_SHM", "0",
     "1 = UCX ranks on one host use shared memory (faster; a dead peer there is noticed only "
     "after TIMEOUT); 0 = every peer over a failure-detecting endpoint (TCP on one host)"},
};

size_t mc_setting_count(void)
{
    return sizeof settings / sizeof settings[0];
}

const mc_setting_t *mc_setting_at(size_t i)
{
    return i < mc_setting_count() ? &settings[i] : NULL;
}

static const mc_setting_t *find(const char *name)
{
    for (size_t i = 0; i < mc_setting_count(); i++)
        if (strcmp(settings[i].name, name) == 0)
            return &settings[i];
    return NULL;
}

const char *mc_setting_text(const char *name)
{
    const mc_setting_t *s = find(name);
    if (!s)
        return NULL;
    char var[96];
    snprintf(var, sizeof var, "MESHCAST_%s", name);
    const char *env = getenv(var);
    return env && *env ? env : s->default_text;
}

mc_status_t mc_setting_number(const char *name, double *out)
{
    const char *text = mc_setting_text(name);
    if (!text)
        return mc_error(MC_ERR_NOT_FOUND, "unknown setting '%s'", name);
    char *end;
    double v = strtod(text, &end);
    switch (*end) {
    case 'K':
    case 'k':
        v *= 1024.0;
        end++;
        break;
    case 'M':
    case 'm':
        v *= 1048576.0;
        end++;
        break;
    case 'G':
    case 'g':
        v *= 1073741824.0;
        end++;
        break;
    default:
        break;
    }
    if (end == text || *end)
        return mc_error(MC_ERR_INVALID, "MESHCAST_%s='%s' is not a number", name, text);
    *out = v;
    return MC_OK;
}
