/* Topology: built-in profiles, .topo parsing (units, every error), write/parse round trip,
 * loading by name, path and MESHCAST_CLUSTERS_DIR, hosts and device mapping, discovery. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "meshcast/topology.h"

/* The table cmake/embed_profiles.cmake generates (same layout as topology.c declares). */
struct builtin_profile {
    const char *name;
    const char *text;
};
extern const struct builtin_profile mc_builtin_profiles[];

#define GBIT (1e9 / 8)

/* hwloc's PCI plugin (libpciaccess) leaks one block per hwloc_topology_load, even in a bare
 * init/load/destroy program; under ASan, unwind fully so the suppression can see it. */
const char *__asan_default_options(void);
const char *__lsan_default_suppressions(void);
const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}
const char *__lsan_default_suppressions(void)
{
    return "leak:hwloc_topology_load\n";
}

static const char *minimal = "name t\n"
                             "hosts 2\n"
                             "devices_per_host 4\n"
                             "link copy bandwidth=100GB/s latency=1us\n"
                             "link intra bandwidth=10GB/s latency=2us\n"
                             "nic count=2 in=10Gbit/s out=20Gbit/s latency=25us\n";

static mc_topology_t *parse_ok(const char *text)
{
    mc_topology_t *t = NULL;
    mc_status_t s = mc_topology_parse(text, "t.topo", &t);
    if (s != MC_OK)
        fail_msg("parse failed: %s\n%s", mc_last_error(), text);
    return t;
}

/* Every failure is MC_ERR_INVALID, leaves the output untouched, and names the problem. */
static void expect_parse_error(const char *text, const char *substring)
{
    mc_topology_t *sentinel = (mc_topology_t *)(uintptr_t)0x1, *t = sentinel;
    mc_status_t s = mc_topology_parse(text, "t.topo", &t);
    if (s != MC_ERR_INVALID)
        fail_msg("expected MC_ERR_INVALID (message '%s'), got %d for:\n%s", substring, s, text);
    assert_ptr_equal(t, sentinel);
    if (!strstr(mc_last_error(), substring))
        fail_msg("message '%s' lacks '%s'", mc_last_error(), substring);
}

/* minimal with line `line` (1-based) replaced by repl ("" deletes it). */
static char *replace_line(int line, const char *repl)
{
    static _Thread_local char buf[1024];
    const char *p = minimal;
    size_t used = 0;
    for (int l = 1; *p; l++) {
        const char *nl = strchr(p, '\n');
        size_t n = (size_t)(nl - p) + 1;
        if (l == line) {
            used +=
                (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", repl, *repl ? "\n" : "");
        } else {
            memcpy(buf + used, p, n);
            used += n;
        }
        p += n;
    }
    buf[used] = '\0';
    return buf;
}

static void test_builtin_profiles(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t hosts, dph;
        double copy_bw, copy_lat, intra_bw, intra_lat;
        int nics;
        double nic_bw, nic_lat;
    } want[] = {
        {"p3.8xlarge", 5, 4, 400e9, 2e-6, 100e9, 5e-6, 1, 10 * GBIT, 25e-6},
        {"dgx-a100", 2, 8, 750e9, 2e-6, 300e9, 3e-6, 8, 200 * GBIT, 10e-6},
        {"dgx-h100", 2, 8, 1600e9, 2e-6, 450e9, 3e-6, 8, 400 * GBIT, 10e-6},
        {"cpu-testbed", 2, 4, 5e9, 1e-6, 2.5e9, 5e-6, 1, 1 * GBIT, 50e-6},
        {"dgx-a100-rails", 2, 8, 750e9, 2e-6, 300e9, 3e-6, 8, 200 * GBIT, 10e-6},
        {"dgx-h100-rails", 2, 8, 1600e9, 2e-6, 450e9, 3e-6, 8, 400 * GBIT, 10e-6},
    };
    size_t n = sizeof want / sizeof want[0];
    for (size_t i = 0; i < n; i++) {
        mc_topology_t *t = NULL;
        if (mc_topology_load(want[i].name, &t) != MC_OK)
            fail_msg("%s: %s", want[i].name, mc_last_error());
        assert_string_equal(mc_topology_name(t), want[i].name);
        assert_int_equal(mc_topology_hosts(t), want[i].hosts);
        assert_int_equal(mc_topology_devices_per_host(t), want[i].dph);
        assert_int_equal(mc_topology_devices(t), want[i].hosts * want[i].dph);
        mc_link_t c = mc_topology_link(t, MC_LINK_COPY), in = mc_topology_link(t, MC_LINK_INTRA);
        mc_link_t nic = mc_topology_link(t, MC_LINK_NIC);
        assert_true(c.bandwidth == want[i].copy_bw && c.latency == want[i].copy_lat);
        assert_true(in.bandwidth == want[i].intra_bw && in.latency == want[i].intra_lat);
        assert_true(nic.bandwidth == want[i].nic_bw && nic.latency == want[i].nic_lat);
        assert_int_equal(mc_topology_nics_per_host(t), want[i].nics);
        assert_true(mc_topology_nic_in(t) == want[i].nics * want[i].nic_bw);
        assert_true(mc_topology_nic_out(t) == want[i].nics * want[i].nic_bw);
        assert_true(mc_topology_nic_burst(t) == 0.0); /* plain links: no shaper's bucket */
        mc_topology_destroy(t);
    }
    /* The names list, the embedded table and the table above agree. */
    const char *const *names = mc_topology_builtin_names();
    size_t count = 0;
    for (; names[count]; count++)
        assert_string_equal(names[count], want[count].name);
    assert_int_equal(count, n);
    size_t embedded = 0;
    for (; mc_builtin_profiles[embedded].name; embedded++) {
        int listed = 0;
        for (size_t i = 0; i < n; i++)
            listed |= !strcmp(mc_builtin_profiles[embedded].name, names[i]);
        if (!listed)
            fail_msg("embedded profile '%s' missing from mc_topology_builtin_names()",
                     mc_builtin_profiles[embedded].name);
    }
    assert_int_equal(embedded, n);
}

/* The profiles on disk are the ones embedded (the build regenerates the table). */
static void test_profiles_on_disk(void **state)
{
    (void)state;
    const char *src = getenv("MESHCAST_SOURCE_DIR");
    if (!src)
        fail_msg("MESHCAST_SOURCE_DIR is not set (CTest sets it to the source tree)");
    for (const char *const *n = mc_topology_builtin_names(); *n; n++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/topology/clusters/%s.topo", src, *n);
        mc_topology_t *a = NULL, *b = NULL;
        if (mc_topology_load(path, &a) != MC_OK)
            fail_msg("%s", mc_last_error());
        assert_int_equal(mc_topology_load(*n, &b), MC_OK);
        assert_string_equal(mc_topology_name(a), mc_topology_name(b));
        assert_true(mc_topology_link(a, MC_LINK_INTRA).bandwidth ==
                    mc_topology_link(b, MC_LINK_INTRA).bandwidth);
        mc_topology_destroy(a);
        mc_topology_destroy(b);
    }
}

static void test_units(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double want;
    } bw[] = {{"10Gbit/s", 1.25e9},   {"1.25GB/s", 1.25e9},     {"300GB/s", 300e9},
              {"1250000000", 1.25e9}, {"100Gb/s", 12.5e9},      {"8Mbit/s", 1e6},
              {"1KiB/s", 1024},       {"2GiB/s", 2147483648.0}, {"1TB/s", 1e12},
              {"40Gbps", 5e9},        {"2.5e9B/s", 2.5e9},      {"1KB/s", 1e3}};
    static const struct {
        const char *text;
        double want;
    } lat[] = {{"5us", 5e-6},     {"2ms", 2e-3},        {"0.5", 0.5}, {"1s", 1.0},
               {"300ns", 300e-9}, {"7\xc2\xb5s", 7e-6}, {"0", 0.0},   {"0us", 0.0}};
    static const struct {
        const char *text;
        double want;
    } bytes[] = {{"128KiB", 131072}, {"50000", 50000}, {"1.5MB", 1.5e6},      {"2MiB", 2097152},
                 {"0B", 0},          {"3KB", 3000},    {"1GiB", 1073741824.0}};
    char text[512];
    for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
        snprintf(text, sizeof text,
                 "hosts 1\ndevices_per_host 1\nlink copy bandwidth=1GB/s latency=1us\n"
                 "link intra bandwidth=1GB/s latency=1us\nnic count=1 in=1GB/s out=1GB/s "
                 "latency=1us burst=%s\n",
                 bytes[i].text);
        mc_topology_t *t = parse_ok(text);
        if (mc_topology_nic_burst(t) != bytes[i].want)
            fail_msg("burst %s -> %.17g, want %.17g", bytes[i].text, mc_topology_nic_burst(t),
                     bytes[i].want);
        mc_topology_destroy(t);
    }
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++) {
        snprintf(text, sizeof text,
                 "hosts 1\ndevices_per_host 1\nlink copy bandwidth=%s latency=1us\n"
                 "link intra bandwidth=1GB/s latency=1us\nnic count=1 in=%s out=1GB/s "
                 "latency=1us\n",
                 bw[i].text, bw[i].text);
        mc_topology_t *t = parse_ok(text);
        if (mc_topology_link(t, MC_LINK_COPY).bandwidth != bw[i].want ||
            mc_topology_nic_in(t) != bw[i].want)
            fail_msg("%s -> %.17g, want %.17g", bw[i].text,
                     mc_topology_link(t, MC_LINK_COPY).bandwidth, bw[i].want);
        mc_topology_destroy(t);
    }
    for (size_t i = 0; i < sizeof lat / sizeof lat[0]; i++) {
        snprintf(text, sizeof text,
                 "hosts 1\ndevices_per_host 1\nlink copy bandwidth=1GB/s latency=%s\n"
                 "link intra bandwidth=1GB/s latency=1us\nnic count=1 in=1GB/s out=1GB/s "
                 "latency=%s\n",
                 lat[i].text, lat[i].text);
        mc_topology_t *t = parse_ok(text);
        if (mc_topology_link(t, MC_LINK_COPY).latency != lat[i].want ||
            mc_topology_link(t, MC_LINK_NIC).latency != lat[i].want)
            fail_msg("%s -> %.17g, want %.17g", lat[i].text,
                     mc_topology_link(t, MC_LINK_COPY).latency, lat[i].want);
        mc_topology_destroy(t);
    }
}

static void test_syntax(void **state)
{
    (void)state;
    /* Comments, blank lines, tabs, CRLF, any order, a name with spaces. */
    mc_topology_t *t = parse_ok("# leading comment\r\n\n"
                                "nic count=1 in=1Gbit/s out=2Gbit/s latency=50us # trailing\r\n"
                                "\tlink intra  bandwidth=1GB/s\tlatency=5us\n"
                                "name  my cluster (2 racks)  # comment\n"
                                "devices_per_host 3\n"
                                "link copy latency=1us bandwidth=4GB/s\n"
                                "hosts 7");
    assert_string_equal(mc_topology_name(t), "my cluster (2 racks)");
    assert_int_equal(mc_topology_devices(t), 21);
    /* The slower direction is the symmetric per-NIC figure. */
    assert_true(mc_topology_link(t, MC_LINK_NIC).bandwidth == 1 * GBIT);
    assert_true(mc_topology_nic_out(t) == 2 * GBIT);
    mc_topology_destroy(t);
    /* Without a name key the origin's base name (minus .topo) is used. */
    const char *no_name = replace_line(1, "");
    assert_int_equal(mc_topology_parse(no_name, "dir/sub/mine.topo", &t), MC_OK);
    assert_string_equal(mc_topology_name(t), "mine");
    mc_topology_destroy(t);
    assert_int_equal(mc_topology_parse(no_name, NULL, &t), MC_OK);
    assert_true(strlen(mc_topology_name(t)) > 0);
    mc_topology_destroy(t);
}

static void test_parse_errors(void **state)
{
    (void)state;
    /* Location first: origin and line. */
    expect_parse_error(replace_line(2, "hostz 2"), "t.topo:2: unknown key 'hostz'");
    expect_parse_error(replace_line(4, "link copy bandwidth=10Gbitz/s latency=1us"),
                       "t.topo:4: link copy bandwidth '10Gbitz/s': unknown unit 'Gbitz/s'");
    expect_parse_error(replace_line(4, "link copy bandwidth=10GB/s latency=3parsecs"),
                       "unknown unit 'parsecs'");
    expect_parse_error(replace_line(4, "link copy bandwidth=fast latency=1us"),
                       "'fast' is not a number");
    expect_parse_error(replace_line(4, "link copy bandwidth=inf latency=1us"), "not a number");
    expect_parse_error(replace_line(4, "link copy bandwidth=nan latency=1us"), "not a number");
    /* Negative and zero. */
    expect_parse_error(replace_line(4, "link copy bandwidth=-1GB/s latency=1us"),
                       "t.topo:4: link copy bandwidth '-1GB/s' must be positive");
    expect_parse_error(replace_line(4, "link copy bandwidth=1GB/s latency=-1us"),
                       "'-1us' must be non-negative");
    expect_parse_error(replace_line(4, "link copy bandwidth=0GB/s latency=1us"),
                       "'0GB/s' must be positive");
    expect_parse_error(replace_line(6, "nic count=2 in=0 out=1GB/s latency=1us"),
                       "t.topo:6: nic in '0' must be positive");
    expect_parse_error(replace_line(2, "hosts 0"), "t.topo:2: hosts '0' must be at least 1");
    expect_parse_error(replace_line(2, "hosts -3"), "hosts '-3' must be at least 1");
    expect_parse_error(replace_line(3, "devices_per_host 0"), "devices_per_host '0' must be");
    expect_parse_error(replace_line(6, "nic count=1 in=1GB/s out=1GB/s latency=1us burst=-1KiB"),
                       "t.topo:6: nic burst '-1KiB' must be non-negative");
    expect_parse_error(replace_line(6, "nic count=1 in=1GB/s out=1GB/s latency=1us burst=2KiB/s"),
                       "nic burst '2KiB/s': unknown unit 'KiB/s' (use B, KB, MB, GB, KiB, MiB");
    expect_parse_error(
        replace_line(6, "nic count=1 in=1GB/s out=1GB/s latency=1us burst=1KiB burst=2KiB"),
        "nic: duplicate 'burst'");
    expect_parse_error(replace_line(6, "nic count=0 in=1GB/s out=1GB/s latency=1us"),
                       "nic count '0' must be at least 1");
    expect_parse_error(replace_line(2, "hosts 2.5"), "hosts '2.5' is not an integer");
    expect_parse_error(replace_line(2, "hosts"), "'hosts' needs a value");
    expect_parse_error(replace_line(2, "hosts 2 3"), "unexpected '3' after hosts");
    /* Overflow. */
    expect_parse_error(replace_line(2, "hosts 99999999999999999999"), "t.topo:2: hosts");
    expect_parse_error(replace_line(2, "hosts 99999999999999999999"), "overflows");
    expect_parse_error(replace_line(6, "nic count=4294967296 in=1GB/s out=1GB/s latency=1us"),
                       "nic count '4294967296' overflows");
    expect_parse_error(replace_line(4, "link copy bandwidth=1e400 latency=1us"),
                       "'1e400' overflows");
    expect_parse_error(replace_line(4, "link copy bandwidth=1e300TB/s latency=1us"),
                       "'1e300TB/s' overflows");
    expect_parse_error(replace_line(2, "hosts 4611686018427387904"),
                       "t.topo: hosts x devices_per_host (4611686018427387904 x 4) overflows");
    /* Missing keys and attributes. */
    expect_parse_error(replace_line(2, ""), "t.topo: missing required key 'hosts'");
    expect_parse_error(replace_line(3, ""), "missing required key 'devices_per_host'");
    expect_parse_error(replace_line(4, ""), "missing required key 'link copy'");
    expect_parse_error(replace_line(5, ""), "missing required key 'link intra'");
    expect_parse_error(replace_line(6, ""), "missing required key 'nic'");
    expect_parse_error(replace_line(4, "link copy bandwidth=1GB/s"),
                       "t.topo:4: link copy: missing latency=");
    expect_parse_error(replace_line(6, "nic count=1 out=1GB/s latency=1us"), "nic: missing in=");
    expect_parse_error("", "missing required key 'hosts'");
    /* Malformed lines and duplicates. */
    expect_parse_error(replace_line(4, "link copy bandwidth 1GB/s latency=1us"),
                       "link copy: expected key=value, got 'bandwidth'");
    expect_parse_error(replace_line(4, "link copy bandwidth= latency=1us"), "expected key=value");
    expect_parse_error(replace_line(4, "link copy speed=1GB/s latency=1us"),
                       "unknown attribute 'speed'");
    expect_parse_error(replace_line(4, "link copy bandwidth=1GB/s bandwidth=2GB/s latency=1us"),
                       "duplicate 'bandwidth'");
    expect_parse_error(replace_line(4, "link bus bandwidth=1GB/s latency=1us"),
                       "unknown link class 'bus'");
    expect_parse_error(replace_line(4, "link"), "'link' needs a class");
    expect_parse_error(replace_line(4, "link nic bandwidth=1GB/s latency=1us"), "'nic count=N");
    expect_parse_error(replace_line(5, "link copy bandwidth=1GB/s latency=1us"),
                       "t.topo:5: duplicate 'link copy'");
    expect_parse_error(replace_line(3, "hosts 3"), "t.topo:3: duplicate 'hosts'");
    expect_parse_error(replace_line(1, "name"), "'name' needs a value");
    char longname[300] = "name ";
    memset(longname + 5, 'x', 200);
    longname[205] = '\0';
    expect_parse_error(replace_line(1, longname), "name is longer than");
    /* Without an origin the message still locates the line. */
    mc_topology_t *t = NULL;
    assert_int_equal(mc_topology_parse("hostz 1\n", NULL, &t), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), ":1: unknown key 'hostz'"));
    assert_int_equal(mc_topology_parse(NULL, "x", &t), MC_ERR_INVALID);
    assert_int_equal(mc_topology_parse(minimal, "x", NULL), MC_ERR_INVALID);
}

static void roundtrip(const mc_topology_t *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(mc_topology_write(a, f), MC_OK);
    assert_int_equal(fclose(f), 0);
    mc_topology_t *b = NULL;
    if (mc_topology_parse(buf, "written", &b) != MC_OK)
        fail_msg("%s\n%s", mc_last_error(), buf);
    assert_string_equal(mc_topology_name(a), mc_topology_name(b));
    assert_int_equal(mc_topology_hosts(a), mc_topology_hosts(b));
    assert_int_equal(mc_topology_devices_per_host(a), mc_topology_devices_per_host(b));
    assert_int_equal(mc_topology_nics_per_host(a), mc_topology_nics_per_host(b));
    for (int c = MC_LINK_COPY; c <= MC_LINK_NIC; c++) {
        mc_link_t x = mc_topology_link(a, (mc_link_class_t)c);
        mc_link_t y = mc_topology_link(b, (mc_link_class_t)c);
        if (x.bandwidth != y.bandwidth || x.latency != y.latency)
            fail_msg("class %d: %.17g/%.17g != %.17g/%.17g\n%s", c, x.bandwidth, x.latency,
                     y.bandwidth, y.latency, buf);
    }
    assert_true(mc_topology_nic_in(a) == mc_topology_nic_in(b));
    assert_true(mc_topology_nic_out(a) == mc_topology_nic_out(b));
    assert_true(mc_topology_nic_burst(a) == mc_topology_nic_burst(b));
    mc_topology_destroy(b);
    free(buf);
}

static void test_roundtrip(void **state)
{
    (void)state;
    for (const char *const *n = mc_topology_builtin_names(); *n; n++) {
        mc_topology_t *t = NULL;
        assert_int_equal(mc_topology_load(*n, &t), MC_OK);
        roundtrip(t);
        mc_topology_destroy(t);
    }
    /* Awkward values must survive exactly (the writer falls back to plain numbers). */
    const char *odd[] = {
        "name odd one\nhosts 9223372036854775807\ndevices_per_host 1\n"
        "link copy bandwidth=123456789.123456 latency=3.3e-7\n"
        "link intra bandwidth=0.1 latency=0\n"
        "nic count=2147483647 in=1e-300 out=1.7e308 latency=123456s\n",
        "name t2\nhosts 3\ndevices_per_host 5\nlink copy bandwidth=3KiB/s latency=7ns\n"
        "link intra bandwidth=7Mbit/s latency=0.1ms\n"
        "nic count=3 in=0.3Gbit/s out=12.5Gb/s latency=1.5ms\n",
        "name shaped\nhosts 2\ndevices_per_host 1\nlink copy bandwidth=1GB/s latency=1us\n"
        "link intra bandwidth=1GB/s latency=1us\n"
        "nic count=1 in=200Mbit/s out=200Mbit/s latency=457.3us burst=128KiB\n",
        "name odd burst\nhosts 2\ndevices_per_host 1\nlink copy bandwidth=1GB/s latency=1us\n"
        "link intra bandwidth=1GB/s latency=1us\n"
        "nic count=1 in=1GB/s out=1GB/s latency=1us burst=12345.678\n",
        minimal,
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        mc_topology_t *t = parse_ok(odd[i]);
        roundtrip(t);
        mc_topology_destroy(t);
    }
}

static void test_hosts_and_mapping(void **state)
{
    (void)state;
    mc_topology_t *t = NULL;
    assert_int_equal(mc_topology_load("p3.8xlarge", &t), MC_OK);
    assert_int_equal(mc_topology_set_hosts(t, 3), MC_OK);
    assert_int_equal(mc_topology_hosts(t), 3);
    assert_int_equal(mc_topology_devices(t), 12);
    assert_int_equal(mc_topology_host_of(t, 0), 0);
    assert_int_equal(mc_topology_host_of(t, 3), 0);
    assert_int_equal(mc_topology_host_of(t, 4), 1);
    assert_int_equal(mc_topology_host_of(t, 11), 2);
    assert_int_equal(mc_topology_host_of(t, 12), -1);
    assert_int_equal(mc_topology_host_of(t, -1), -1);
    assert_int_equal(mc_topology_host_of(NULL, 0), -1);
    assert_int_equal(mc_topology_set_hosts(t, 0), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), "hosts must be at least 1"));
    assert_int_equal(mc_topology_set_hosts(t, -2), MC_ERR_INVALID);
    assert_int_equal(mc_topology_set_hosts(t, INT64_MAX / 2), MC_ERR_OVERFLOW);
    assert_int_equal(mc_topology_hosts(t), 3); /* unchanged by failures */
    assert_int_equal(mc_topology_set_hosts(t, 1), MC_OK);
    assert_int_equal(mc_topology_host_of(t, 3), 0);
    assert_int_equal(mc_topology_host_of(t, 4), -1);

    /* A copy is independent of its original. */
    mc_topology_t *c = NULL;
    assert_int_equal(mc_topology_copy(t, &c), MC_OK);
    assert_int_equal(mc_topology_set_hosts(c, 8), MC_OK);
    assert_int_equal(mc_topology_hosts(t), 1);
    assert_int_equal(mc_topology_hosts(c), 8);
    assert_string_equal(mc_topology_name(c), "p3.8xlarge");
    mc_topology_destroy(c);
    mc_topology_destroy(t);
    mc_topology_destroy(NULL);
}

static char tmpdir[64];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_load(void **state)
{
    (void)state;
    mc_topology_t *sentinel = (mc_topology_t *)(uintptr_t)0x1, *t = sentinel;
    assert_int_equal(mc_topology_load("foo", &t), MC_ERR_NOT_FOUND);
    assert_ptr_equal(t, sentinel);
    assert_string_equal(mc_last_error(),
                        "unknown topology 'foo' (built-in: p3.8xlarge, dgx-a100, dgx-h100, "
                        "cpu-testbed, dgx-a100-rails, dgx-h100-rails)");
    assert_int_equal(mc_topology_load("/nonexistent/x.topo", &t), MC_ERR_NOT_FOUND);
    assert_non_null(strstr(mc_last_error(), "cannot open '/nonexistent/x.topo'"));
    assert_int_equal(mc_topology_load("", &t), MC_ERR_INVALID);
    assert_int_equal(mc_topology_load(NULL, &t), MC_ERR_INVALID);

    assert_non_null(mkdtemp(strcpy(tmpdir, "/tmp/mc_topo_XXXXXX")));
    char path[256], dirpath[256];
    snprintf(path, sizeof path, "%s/mine.topo", tmpdir);
    write_text(path, minimal);
    /* By path: errors name the file. */
    assert_int_equal(mc_topology_load(path, &t), MC_OK);
    assert_string_equal(mc_topology_name(t), "t");
    mc_topology_destroy(t);
    snprintf(dirpath, sizeof dirpath, "%s/bad.topo", tmpdir);
    write_text(dirpath, "hosts 1\nbogus 2\n");
    assert_int_equal(mc_topology_load(dirpath, &t), MC_ERR_INVALID);
    char want[300];
    snprintf(want, sizeof want, "%s:2: unknown key 'bogus'", dirpath);
    assert_string_equal(mc_last_error(), want);
    /* A directory is not a topology. */
    assert_int_not_equal(mc_topology_load(tmpdir, &t), MC_OK);

    /* By name through MESHCAST_CLUSTERS_DIR; built-ins win over it. */
    assert_int_equal(setenv("MESHCAST_CLUSTERS_DIR", tmpdir, 1), 0);
    assert_int_equal(mc_topology_load("mine", &t), MC_OK);
    assert_int_equal(mc_topology_devices(t), 8);
    mc_topology_destroy(t);
    snprintf(path, sizeof path, "%s/dgx-a100.topo", tmpdir);
    write_text(path, minimal);
    assert_int_equal(mc_topology_load("dgx-a100", &t), MC_OK);
    assert_string_equal(mc_topology_name(t), "dgx-a100");
    mc_topology_destroy(t);
    assert_int_equal(mc_topology_load("bad", &t), MC_ERR_INVALID);
    assert_int_equal(mc_topology_load("absent", &t), MC_ERR_NOT_FOUND);
    assert_non_null(strstr(mc_last_error(), "unknown topology 'absent'"));
    assert_int_equal(unsetenv("MESHCAST_CLUSTERS_DIR"), 0);
    unlink(path);
    snprintf(path, sizeof path, "%s/mine.topo", tmpdir);
    unlink(path);
    unlink(dirpath);
    rmdir(tmpdir);
}

static void test_discover(void **state)
{
    (void)state;
    mc_topology_t *t = NULL;
    mc_status_t s = mc_topology_discover(&t);
    if (s == MC_ERR_UNSUPPORTED) {
        assert_non_null(strstr(mc_last_error(), "hwloc"));
        assert_null(t);
        assert_int_equal(mc_topology_write_discovery(stdout), MC_ERR_UNSUPPORTED);
        return;
    }
    if (s != MC_OK)
        fail_msg("discover: %s", mc_last_error());
    assert_int_equal(mc_topology_hosts(t), 1);
    assert_true(mc_topology_devices_per_host(t) >= 1);
    assert_true(mc_topology_nics_per_host(t) >= 1);
    assert_non_null(strstr(mc_topology_name(t), "local ("));
    roundtrip(t);
    mc_topology_destroy(t);
    /* The report is .topo comments, so report + profile parse as one file. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(mc_topology_write_discovery(f), MC_OK);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(buf, "cores:"));
    assert_non_null(strstr(buf, "NUMA nodes:"));
    for (char *p = buf; *p; p = strchr(p, '\n') + 1) {
        assert_int_equal(*p, '#');
        if (!strchr(p, '\n'))
            break;
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_profiles),
        cmocka_unit_test(test_profiles_on_disk),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_hosts_and_mapping),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_discover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
