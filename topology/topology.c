/* Cluster descriptions: the .topo text format, built-in profiles, accessors. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meshcast/config.h"
#include "topology_internal.h"
#include "util/util.h"

/* Same layout as the table cmake/embed_profiles.cmake generates (an anonymous struct
 * there; C only needs the member layout to agree for the link to be meaningful). */
struct mc_builtin_profile {
    const char *name;
    const char *text;
};
extern const struct mc_builtin_profile mc_builtin_profiles[];

/* Refuse absurd files early; real profiles are a few hundred bytes. */
#define MAX_TOPO_FILE (1 << 20)

static const char *const builtin_names[] = {"p3.8xlarge", "dgx-a100", "dgx-h100", "cpu-testbed",
                                            NULL};

const char *const *mc_topology_builtin_names(void)
{
    return builtin_names;
}

mc_topology_t *mc_topology_new(const char *name)
{
    mc_topology_t *t = mc_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "unnamed");
    return t;
}

/* ---- units ---------------------------------------------------------------------------- */

typedef enum { Q_BANDWIDTH, Q_TIME } quantity_t;

typedef struct {
    const char *suffix;
    double mul, div; /* value * mul / div gives bytes/s or seconds, correctly rounded */
} unit_t;

/* Decimal prefixes as network and GPU vendors quote them; binary ones by their IEC name;
 * lower-case b means bits. Dividing (not multiplying by 1e-6) keeps "5us" == 5e-6. */
static const unit_t bandwidth_units[] = {
    {"", 1, 1},           {"B/s", 1, 1},           {"KB/s", 1e3, 1},
    {"MB/s", 1e6, 1},     {"GB/s", 1e9, 1},        {"TB/s", 1e12, 1},
    {"KiB/s", 1024.0, 1}, {"MiB/s", 1048576.0, 1}, {"GiB/s", 1073741824.0, 1},
    {"bit/s", 1, 8},      {"Kbit/s", 1e3, 8},      {"Mbit/s", 1e6, 8},
    {"Gbit/s", 1e9, 8},   {"Tbit/s", 1e12, 8},     {"Kb/s", 1e3, 8},
    {"Mb/s", 1e6, 8},     {"Gb/s", 1e9, 8},        {"Tb/s", 1e12, 8},
    {"bps", 1, 8},        {"Kbps", 1e3, 8},        {"Mbps", 1e6, 8},
    {"Gbps", 1e9, 8},     {"Tbps", 1e12, 8},       {NULL, 0, 0}};
static const unit_t time_units[] = {{"", 1, 1},     {"s", 1, 1},           {"ms", 1, 1e3},
                                    {"us", 1, 1e6}, {"\xc2\xb5s", 1, 1e6}, {"ns", 1, 1e9},
                                    {NULL, 0, 0}};

/* Parses "<number><unit>"; on failure writes the reason (without location) to why. */
static int parse_quantity(const char *tok, quantity_t q, double *out, char *why, size_t n)
{
    const unit_t *units = q == Q_BANDWIDTH ? bandwidth_units : time_units;
    const char *p = tok;
    if (*p == '+' || *p == '-')
        p++;
    /* strtod alone would accept inf, nan and hex floats: require a decimal number. */
    if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))) {
        snprintf(why, n, "'%s' is not a number", tok);
        return -1;
    }
    errno = 0;
    char *end;
    double v = strtod(tok, &end);
    if (errno == ERANGE && fabs(v) > 1.0) {
        snprintf(why, n, "'%s' overflows", tok);
        return -1;
    }
    const unit_t *u = units;
    while (u->suffix && strcmp(u->suffix, end) != 0)
        u++;
    if (!u->suffix) {
        snprintf(why, n, "'%s': unknown unit '%s' (%s)", tok, end,
                 q == Q_BANDWIDTH ? "use B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, "
                                    "bit/s, Kbit/s, Mbit/s, Gbit/s, Tbit/s or Gb/s"
                                  : "use s, ms, us or ns");
        return -1;
    }
    double x = v * u->mul / u->div;
    if (!isfinite(x)) {
        snprintf(why, n, "'%s' overflows", tok);
        return -1;
    }
    if (signbit(v) || (q == Q_BANDWIDTH && x == 0)) {
        snprintf(why, n, "'%s' must be %s", tok, q == Q_BANDWIDTH ? "positive" : "non-negative");
        return -1;
    }
    *out = x;
    return 0;
}

/* Writes v with the most readable unit whose text parses back to exactly v. */
static void format_quantity(double v, quantity_t q, int network, char *buf, size_t n)
{
    static const char *const bw_pref[] = {"GB/s", "Gbit/s", "MB/s", "Mbit/s", "TB/s", NULL};
    static const char *const net_pref[] = {"Gbit/s", "Mbit/s", "GB/s", "MB/s", NULL};
    static const char *const t_pref[] = {"us", "ms", "s", "ns", NULL};
    const char *const *pref = q == Q_TIME ? t_pref : network ? net_pref : bw_pref;
    const unit_t *units = q == Q_BANDWIDTH ? bandwidth_units : time_units;
    char why[160];
    for (; *pref; pref++) {
        const unit_t *u = units;
        while (strcmp(u->suffix, *pref) != 0)
            u++;
        double scaled = v * u->div / u->mul;
        if (scaled < 1.0 && v != 0) /* "0.0125GB/s" reads worse than "100Mbit/s" */
            continue;
        snprintf(buf, n, "%.15g%s", scaled, u->suffix);
        double back;
        if (parse_quantity(buf, q, &back, why, sizeof why) == 0 && back == v)
            return;
    }
    snprintf(buf, n, "%.17g", v); /* plain number: bytes/s or seconds, always exact */
}

/* ---- parser --------------------------------------------------------------------------- */

typedef struct {
    const char *origin;
    int line;
} where_t;

#define PERR(w, ...) parse_error(w, __VA_ARGS__)

static mc_status_t parse_error(const where_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static mc_status_t parse_error(const where_t *w, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (w->line > 0)
        return mc_error(MC_ERR_INVALID, "%s:%d: %s", w->origin, w->line, msg);
    return mc_error(MC_ERR_INVALID, "%s: %s", w->origin, msg);
}

static mc_status_t parse_count(const where_t *w, const char *key, const char *tok, int64_t max,
                               int64_t *out)
{
    if (!tok)
        return PERR(w, "'%s' needs a value", key);
    const char *p = tok;
    if (*p == '-' || *p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return PERR(w, "%s '%s' is not an integer", key, tok);
    errno = 0;
    char *end;
    long long v = strtoll(tok, &end, 10);
    if (*end)
        return PERR(w, "%s '%s' is not an integer", key, tok);
    if (errno == ERANGE || v > max)
        return PERR(w, "%s '%s' overflows (at most %lld)", key, tok, (long long)max);
    if (v < 1)
        return PERR(w, "%s '%s' must be at least 1", key, tok);
    *out = v;
    return MC_OK;
}

/* Splits "key=value"; returns the value or NULL. */
static char *split_attr(char *tok)
{
    char *eq = strchr(tok, '=');
    if (!eq)
        return NULL;
    *eq = '\0';
    return eq + 1;
}

enum { HAVE_HOSTS = 1, HAVE_DPH = 2, HAVE_COPY = 4, HAVE_INTRA = 8, HAVE_NIC = 16, HAVE_NAME = 32 };

/* "link copy|intra bandwidth=X latency=Y" or "nic count=N in=X out=Y latency=Z". */
static mc_status_t parse_attrs(const where_t *w, const char *what, char **save, int is_nic,
                               mc_topology_t *t, mc_link_t *link)
{
    int have_bw = 0, have_lat = 0, have_count = 0, have_in = 0, have_out = 0;
    char why[300];
    char *tok;
    while ((tok = strtok_r(NULL, " \t\r", save))) {
        char *val = split_attr(tok);
        if (!val || !*val)
            return PERR(w, "%s: expected key=value, got '%s'", what, tok);
        double *dst = NULL;
        quantity_t q = Q_BANDWIDTH;
        int *seen = NULL;
        if (!strcmp(tok, "latency")) {
            dst = is_nic ? &t->nic_latency : &link->latency;
            q = Q_TIME;
            seen = &have_lat;
        } else if (!is_nic && !strcmp(tok, "bandwidth")) {
            dst = &link->bandwidth;
            seen = &have_bw;
        } else if (is_nic && !strcmp(tok, "in")) {
            dst = &t->nic_in_bw;
            seen = &have_in;
        } else if (is_nic && !strcmp(tok, "out")) {
            dst = &t->nic_out_bw;
            seen = &have_out;
        } else if (is_nic && !strcmp(tok, "count")) {
            int64_t c;
            if (have_count)
                return PERR(w, "%s: duplicate 'count'", what);
            mc_status_t s = parse_count(w, "nic count", val, INT_MAX, &c);
            if (s)
                return s;
            t->nics = (int)c;
            have_count = 1;
            continue;
        } else {
            return PERR(w, "%s: unknown attribute '%s' (expected %s)", what, tok,
                        is_nic ? "count, in, out, latency" : "bandwidth, latency");
        }
        if (*seen)
            return PERR(w, "%s: duplicate '%s'", what, tok);
        if (parse_quantity(val, q, dst, why, sizeof why))
            return PERR(w, "%s %s %s", what, tok, why);
        *seen = 1;
    }
    if (is_nic) {
        if (!have_count || !have_in || !have_out || !have_lat)
            return PERR(w, "%s: missing %s", what,
                        !have_count ? "count="
                        : !have_in  ? "in="
                        : !have_out ? "out="
                                    : "latency=");
    } else if (!have_bw || !have_lat) {
        return PERR(w, "%s: missing %s", what, !have_bw ? "bandwidth=" : "latency=");
    }
    return MC_OK;
}

/* Name default: the origin's file name without directory and ".topo". */
static void default_name(const char *origin, char *buf, size_t n)
{
    const char *base = origin ? strrchr(origin, '/') : NULL;
    base = base ? base + 1 : origin ? origin : "unnamed";
    snprintf(buf, n, "%s", base);
    size_t len = strlen(buf);
    if (len > 5 && !strcmp(buf + len - 5, ".topo"))
        buf[len - 5] = '\0';
}

static mc_status_t parse_line(const where_t *w, char *line, mc_topology_t *t, unsigned *have)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *save = NULL;
    char *key = strtok_r(line, " \t\r", &save);
    if (!key)
        return MC_OK;
    if (!strcmp(key, "name")) {
        if (*have & HAVE_NAME)
            return PERR(w, "duplicate 'name'");
        /* The name is the rest of the line, so it may contain spaces. */
        char *rest = save ? save + strspn(save, " \t") : NULL;
        size_t len = rest ? strlen(rest) : 0;
        while (len && (rest[len - 1] == ' ' || rest[len - 1] == '\t' || rest[len - 1] == '\r'))
            rest[--len] = '\0';
        if (!len)
            return PERR(w, "'name' needs a value");
        if (len >= sizeof t->name)
            return PERR(w, "name is longer than %zu characters", sizeof t->name - 1);
        memcpy(t->name, rest, len + 1);
        *have |= HAVE_NAME;
        return MC_OK;
    }
    if (!strcmp(key, "hosts") || !strcmp(key, "devices_per_host")) {
        unsigned bit = key[0] == 'h' ? HAVE_HOSTS : HAVE_DPH;
        if (*have & bit)
            return PERR(w, "duplicate '%s'", key);
        char *val = strtok_r(NULL, " \t\r", &save);
        mc_status_t s = parse_count(w, key, val, INT64_MAX,
                                    bit == HAVE_HOSTS ? &t->hosts : &t->devices_per_host);
        if (s)
            return s;
        char *extra = strtok_r(NULL, " \t\r", &save);
        if (extra)
            return PERR(w, "unexpected '%s' after %s", extra, key);
        *have |= bit;
        return MC_OK;
    }
    if (!strcmp(key, "link")) {
        char *cls = strtok_r(NULL, " \t\r", &save);
        if (!cls)
            return PERR(w, "'link' needs a class (copy or intra)");
        unsigned bit;
        mc_link_t *link;
        if (!strcmp(cls, "copy")) {
            bit = HAVE_COPY;
            link = &t->copy;
        } else if (!strcmp(cls, "intra")) {
            bit = HAVE_INTRA;
            link = &t->intra;
        } else if (!strcmp(cls, "nic")) {
            return PERR(w, "NICs are described by a 'nic count=N in=X out=Y latency=Z' line");
        } else {
            return PERR(w, "unknown link class '%s' (expected copy or intra)", cls);
        }
        if (*have & bit)
            return PERR(w, "duplicate 'link %s'", cls);
        char what[32];
        snprintf(what, sizeof what, "link %s", cls);
        mc_status_t s = parse_attrs(w, what, &save, 0, t, link);
        if (s)
            return s;
        *have |= bit;
        return MC_OK;
    }
    if (!strcmp(key, "nic")) {
        if (*have & HAVE_NIC)
            return PERR(w, "duplicate 'nic'");
        mc_status_t s = parse_attrs(w, "nic", &save, 1, t, NULL);
        if (s)
            return s;
        *have |= HAVE_NIC;
        return MC_OK;
    }
    return PERR(w, "unknown key '%s'", key);
}

mc_status_t mc_topology_parse(const char *text, const char *origin, mc_topology_t **out)
{
    mc_status_t s = MC_OK;
    if (!text || !out)
        return mc_error(MC_ERR_INVALID, "mc_topology_parse: NULL argument");
    where_t w = {origin ? origin : "<topology>", 0};
    char *copy = mc_strdup(text);
    if (!copy)
        return MC_ERR_NOMEM;
    mc_topology_t *t = mc_topology_new(NULL);
    if (!t) {
        s = MC_ERR_NOMEM;
        goto err_copy;
    }
    unsigned have = 0;
    char *line = copy;
    while (line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        w.line++;
        if ((s = parse_line(&w, line, t, &have)))
            goto err_topo;
        line = nl ? nl + 1 : NULL;
    }
    w.line = 0;
    static const struct {
        unsigned bit;
        const char *text;
    } required[] = {{HAVE_HOSTS, "hosts"},
                    {HAVE_DPH, "devices_per_host"},
                    {HAVE_COPY, "link copy"},
                    {HAVE_INTRA, "link intra"},
                    {HAVE_NIC, "nic"}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (!(have & required[i].bit)) {
            s = PERR(&w, "missing required key '%s'", required[i].text);
            goto err_topo;
        }
    }
    int64_t devices;
    if (mc_mul_i64(t->hosts, t->devices_per_host, &devices)) {
        s = PERR(&w, "hosts x devices_per_host (%lld x %lld) overflows", (long long)t->hosts,
                 (long long)t->devices_per_host);
        goto err_topo;
    }
    if (!(have & HAVE_NAME))
        default_name(origin, t->name, sizeof t->name);
    free(copy);
    *out = t;
    return MC_OK;

err_topo:
    free(t);
err_copy:
    free(copy);
    return s;
}

/* ---- loading -------------------------------------------------------------------------- */

/* Reads a whole file; *text is malloc'd. Missing file → MC_ERR_NOT_FOUND. */
static mc_status_t read_file(const char *path, char **text)
{
    mc_status_t s;
    FILE *f = fopen(path, "rb");
    if (!f)
        return mc_error(errno == ENOENT ? MC_ERR_NOT_FOUND : MC_ERR_IO, "cannot open '%s': %s",
                        path, strerror(errno));
    char *buf = mc_calloc(MAX_TOPO_FILE + 1, 1);
    if (!buf) {
        s = MC_ERR_NOMEM;
        goto err_file;
    }
    size_t n = fread(buf, 1, MAX_TOPO_FILE + 1, f);
    if (ferror(f)) {
        s = mc_error(MC_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        goto err_buf;
    }
    if (n > MAX_TOPO_FILE) {
        s = mc_error(MC_ERR_INVALID, "'%s' is larger than %d bytes", path, MAX_TOPO_FILE);
        goto err_buf;
    }
    if (memchr(buf, '\0', n)) {
        s = mc_error(MC_ERR_INVALID, "'%s' is not a text file", path);
        goto err_buf;
    }
    buf[n] = '\0';
    fclose(f);
    *text = buf;
    return MC_OK;

err_buf:
    free(buf);
err_file:
    fclose(f);
    return s;
}

static mc_status_t load_file(const char *path, mc_topology_t **out)
{
    char *text = NULL;
    mc_status_t s = read_file(path, &text);
    if (s)
        return s;
    s = mc_topology_parse(text, path, out);
    free(text);
    return s;
}

static mc_status_t unknown_topology(const char *name)
{
    char list[256] = "";
    size_t used = 0;
    for (const char *const *n = builtin_names; *n; n++) {
        int k = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *n);
        if (k < 0 || (size_t)k >= sizeof list - used)
            break;
        used += (size_t)k;
    }
    return mc_error(MC_ERR_NOT_FOUND, "unknown topology '%s' (built-in: %s)", name, list);
}

mc_status_t mc_topology_load(const char *name_or_path, mc_topology_t **out)
{
    if (!name_or_path || !out)
        return mc_error(MC_ERR_INVALID, "mc_topology_load: NULL argument");
    if (!*name_or_path)
        return mc_error(MC_ERR_INVALID, "empty topology name");
    for (const struct mc_builtin_profile *p = mc_builtin_profiles; p->name; p++)
        if (!strcmp(p->name, name_or_path))
            return mc_topology_parse(p->text, p->name, out);

    size_t len = strlen(name_or_path);
    int looks_like_path =
        strchr(name_or_path, '/') || (len > 5 && !strcmp(name_or_path + len - 5, ".topo"));
    const char *dir = mc_setting_text("CLUSTERS_DIR");
    if (!looks_like_path && dir && *dir) {
        size_t n = strlen(dir) + len + 7;
        char *path = mc_calloc(n, 1);
        if (!path)
            return MC_ERR_NOMEM;
        snprintf(path, n, "%s/%s.topo", dir, name_or_path);
        mc_status_t s = load_file(path, out);
        free(path);
        if (s != MC_ERR_NOT_FOUND)
            return s;
    }
    mc_status_t s = load_file(name_or_path, out);
    if (s == MC_ERR_NOT_FOUND && !looks_like_path)
        return unknown_topology(name_or_path);
    return s;
}

/* ---- object --------------------------------------------------------------------------- */

mc_status_t mc_topology_copy(const mc_topology_t *topo, mc_topology_t **out)
{
    if (!topo || !out)
        return mc_error(MC_ERR_INVALID, "mc_topology_copy: NULL argument");
    mc_topology_t *t = mc_topology_new(NULL);
    if (!t)
        return MC_ERR_NOMEM;
    *t = *topo;
    *out = t;
    return MC_OK;
}

void mc_topology_destroy(mc_topology_t *topo)
{
    free(topo);
}

mc_status_t mc_topology_write(const mc_topology_t *topo, FILE *out)
{
    if (!topo || !out)
        return mc_error(MC_ERR_INVALID, "mc_topology_write: NULL argument");
    char cb[48], cl[48], ib[48], il[48], ni[48], no[48], nl[48];
    format_quantity(topo->copy.bandwidth, Q_BANDWIDTH, 0, cb, sizeof cb);
    format_quantity(topo->copy.latency, Q_TIME, 0, cl, sizeof cl);
    format_quantity(topo->intra.bandwidth, Q_BANDWIDTH, 0, ib, sizeof ib);
    format_quantity(topo->intra.latency, Q_TIME, 0, il, sizeof il);
    format_quantity(topo->nic_in_bw, Q_BANDWIDTH, 1, ni, sizeof ni);
    format_quantity(topo->nic_out_bw, Q_BANDWIDTH, 1, no, sizeof no);
    format_quantity(topo->nic_latency, Q_TIME, 0, nl, sizeof nl);
    fprintf(out,
            "name %s\nhosts %lld\ndevices_per_host %lld\n"
            "link copy  bandwidth=%s latency=%s\n"
            "link intra bandwidth=%s latency=%s\n"
            "nic count=%d in=%s out=%s latency=%s\n",
            topo->name, (long long)topo->hosts, (long long)topo->devices_per_host, cb, cl, ib, il,
            topo->nics, ni, no, nl);
    if (ferror(out))
        return mc_error(MC_ERR_IO, "writing topology '%s' failed", topo->name);
    return MC_OK;
}

const char *mc_topology_name(const mc_topology_t *topo)
{
    return topo->name;
}

int64_t mc_topology_hosts(const mc_topology_t *topo)
{
    return topo->hosts;
}

int64_t mc_topology_devices_per_host(const mc_topology_t *topo)
{
    return topo->devices_per_host;
}

int64_t mc_topology_devices(const mc_topology_t *topo)
{
    return topo->hosts * topo->devices_per_host; /* checked on every path that sets them */
}

mc_status_t mc_topology_set_hosts(mc_topology_t *topo, int64_t hosts)
{
    int64_t devices;
    if (!topo)
        return mc_error(MC_ERR_INVALID, "mc_topology_set_hosts: NULL topology");
    if (hosts < 1)
        return mc_error(MC_ERR_INVALID, "topology '%s': hosts must be at least 1, got %lld",
                        topo->name, (long long)hosts);
    if (mc_mul_i64(hosts, topo->devices_per_host, &devices))
        return mc_error(MC_ERR_OVERFLOW, "topology '%s': %lld hosts x %lld devices overflows",
                        topo->name, (long long)hosts, (long long)topo->devices_per_host);
    topo->hosts = hosts;
    return MC_OK;
}

int64_t mc_topology_host_of(const mc_topology_t *topo, int64_t device_id)
{
    if (!topo || device_id < 0 || device_id >= mc_topology_devices(topo))
        return -1;
    return device_id / topo->devices_per_host;
}

mc_link_t mc_topology_link(const mc_topology_t *topo, mc_link_class_t cls)
{
    switch (cls) {
    case MC_LINK_COPY:
        return topo->copy;
    case MC_LINK_INTRA:
        return topo->intra;
    case MC_LINK_NIC:
        break;
    }
    /* One NIC, one direction: the slower one, so a symmetric model never overestimates. */
    mc_link_t nic = {topo->nic_in_bw < topo->nic_out_bw ? topo->nic_in_bw : topo->nic_out_bw,
                     topo->nic_latency};
    return nic;
}

double mc_topology_nic_in(const mc_topology_t *topo)
{
    return topo->nic_in_bw * topo->nics;
}

double mc_topology_nic_out(const mc_topology_t *topo)
{
    return topo->nic_out_bw * topo->nics;
}

int mc_topology_nics_per_host(const mc_topology_t *topo)
{
    return topo->nics;
}
