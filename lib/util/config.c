/* The settings table: the one place where tunables, their defaults and their allowed values
 * are declared; every value is checked against its entry the same way. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meshcast/config.h"
#include "util.h"

#define TIB 1099511627776.0

static const mc_setting_t settings[] = {
    {"CHUNK_BYTES", "0", "pipeline chunk size in bytes (K/M/G suffixes); 0 = chosen per flow",
     MC_SETTING_SIZE, 0, TIB},
    {"TIMEOUT", "30", "seconds a rank waits for a peer before failing the request",
     MC_SETTING_NUMBER, 0.001, 1e6},
    {"CLUSTERS_DIR", "", "extra directory searched for <name>.topo profiles", MC_SETTING_TEXT, 0,
     0},
    {"THREADS", "0", "worker threads copying for an in-process rank; 0 = one per CPU, at most 8",
     MC_SETTING_INTEGER, 0, 256},
    {"PROGRESS", "thread",
     "who advances started reshards: caller (inside test/wait calls) or thread (a progress "
     "thread per communicator, while the caller computes)",
     MC_SETTING_TEXT, 0, 0},
    {"RANK", "", "this process's rank (environment bootstrap)", MC_SETTING_INTEGER, 0, 65535},
    {"NRANKS", "", "number of ranks (environment bootstrap)", MC_SETTING_INTEGER, 1, 65536},
    {"ROOT", "", "host:port where rank 0 listens (environment bootstrap)", MC_SETTING_TEXT, 0, 0},
    {"UCX_SHM", "0",
     "1 = UCX ranks on one host use shared memory (faster; a dead peer there is noticed only "
     "after TIMEOUT); 0 = every peer over a failure-detecting endpoint (TCP on one host)",
     MC_SETTING_INTEGER, 0, 1},
    {"GPUS", "0",
     "GPUs that logical devices map to (device d on GPU d % GPUS; 1 = every device on one GPU, "
     "to test multi-device plans there); 0 = every visible GPU",
     MC_SETTING_INTEGER, 0, 1024},
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

static const char *env_text(const mc_setting_t *s)
{
    char var[96];
    snprintf(var, sizeof var, "MESHCAST_%s", s->name);
    const char *env = getenv(var);
    return env && *env ? env : NULL;
}

const char *mc_setting_text(const char *name)
{
    const mc_setting_t *s = find(name);
    if (!s)
        return NULL;
    const char *env = env_text(s);
    return env ? env : s->default_text;
}

/* text as s's type; 0 when it is one (range not checked). */
static int parse(const mc_setting_t *s, const char *text, double *out)
{
    char *end;
    errno = 0;
    if (s->type == MC_SETTING_SIZE) {
        int64_t v;
        if (*text < '0' || *text > '9' || mc_parse_size(text, s->name, &v))
            return -1;
        *out = (double)v;
        return 0;
    }
    if (s->type == MC_SETTING_INTEGER) {
        if ((*text < '0' || *text > '9') && *text != '-')
            return -1;
        long long v = strtoll(text, &end, 10);
        *out = (double)v;
    } else {
        if (strchr(" \t\n", *text))
            return -1;
        *out = strtod(text, &end);
    }
    return end == text || *end || errno || !isfinite(*out) ? -1 : 0;
}

/* "an integer in [0, 256]" and the like. */
static void describe(const mc_setting_t *s, char *buf, size_t len)
{
    switch (s->type) {
    case MC_SETTING_SIZE:
        snprintf(buf, len, "a byte count in [%.0f, %.0fG] (K/M/G suffixes)", s->min,
                 s->max / 1073741824.0);
        break;
    case MC_SETTING_INTEGER:
        snprintf(buf, len, "an integer in [%.0f, %.0f]", s->min, s->max);
        break;
    default:
        snprintf(buf, len, "a number in [%g, %g]", s->min, s->max);
        break;
    }
}

static mc_status_t check(const mc_setting_t *s, const char *text, double *out)
{
    double v = 0;
    if (parse(s, text, &v) == 0 && v >= s->min && v <= s->max) {
        *out = v;
        return MC_OK;
    }
    char allowed[96];
    describe(s, allowed, sizeof allowed);
    return mc_error(MC_ERR_INVALID, "MESHCAST_%s='%s' is not %s", s->name, text, allowed);
}

mc_status_t mc_setting_number(const char *name, double *out)
{
    const mc_setting_t *s = name ? find(name) : NULL;
    if (!s || s->type == MC_SETTING_TEXT)
        return mc_error(MC_ERR_NOT_FOUND, "no numeric setting '%s'", name ? name : "(null)");
    return check(s, mc_setting_text(name), out);
}

mc_status_t mc_settings_check(void)
{
    for (size_t i = 0; i < mc_setting_count(); i++) {
        const mc_setting_t *s = &settings[i];
        const char *env = env_text(s);
        double v;
        if (env && s->type != MC_SETTING_TEXT && check(s, env, &v))
            return MC_ERR_INVALID;
    }
    return MC_OK;
}
