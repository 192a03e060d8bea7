/* Topology text for the unit tests: bad lines, each appended to a valid file must fail to
 * parse, and a topology written out. */
#ifndef MESHCAST_TEST_BAD_TOPOLOGY_H
#define MESHCAST_TEST_BAD_TOPOLOGY_H

/* Include after <cmocka.h> and the topology header. */
#include <stdio.h>
#include <string.h>

/* Each bad[i][0] appended to base must fail with MC_ERR_INVALID and an error message that
 * contains bad[i][1]. */
static inline void expect_bad_topology_lines(const char *base, const char *const (*bad)[2],
                                             size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char text[512];
        mc_topology_t *t = NULL;
        snprintf(text, sizeof text, "%s%s", base, bad[i][0]);
        assert_int_equal(mc_topology_parse(text, "t.topo", &t), MC_ERR_INVALID);
        if (!strstr(mc_last_error(), bad[i][1]))
            fail_msg("'%s': error '%s' lacks '%s'", bad[i][0], mc_last_error(), bad[i][1]);
    }
}

/* Writes t as .topo text into buf (n bytes, NUL-terminated), failing the test on error. */
static inline void topology_text(const mc_topology_t *t, char *buf, size_t n)
{
    memset(buf, 0, n);
    FILE *f = fmemopen(buf, n - 1, "w");
    assert_non_null(f);
    assert_int_equal(mc_topology_write(t, f), MC_OK);
    fclose(f);
}

#endif
