/* mc_malloc, mc_calloc and mc_grow (lib/util/misc.c) ask for transparent huge pages on arrays
 * of MC_HUGE_BYTES or more: the kernel's own record of the mapping (the "hg" flag in
 * /proc/self/smaps) must show the advice on every whole page of such an array, and not on a
 * small one's. Skips where the kernel has no transparent huge pages. mc_malloc's overflow
 * check and error are tested too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "meshcast/status.h"
#include "util/util.h"

/* Whether the mapping holding address a carries the huge-page advice (VmFlags "hg"); -1 when
 * smaps has no such mapping or cannot be read. */
static int advised(const void *a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int inside = 0, found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)a >= lo && (uintptr_t)a < hi;
            continue;
        }
        if (inside && !strncmp(line, "VmFlags:", 8)) {
            found = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return found;
}

static void skip_without_thp(void)
{
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0)
        skip(); /* a kernel without transparent huge pages: the advice is ignored */
}

/* The first and last whole pages of [p, p + bytes). */
static void assert_advised(const char *p, size_t bytes, int want)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const char *first = (const char *)(((uintptr_t)p + page - 1) / page * page);
    const char *last = (const char *)(((uintptr_t)p + bytes) / page * page) - 1;
    assert_int_equal(advised(first), want);
    assert_int_equal(advised(last), want);
}

static void test_large_arrays_advised(void **state)
{
    (void)state;
    skip_without_thp();
    size_t bytes = 3 * MC_HUGE_BYTES + 100;
    char *m = mc_malloc(bytes, 1), *c = mc_calloc(bytes / 8, 8);
    assert_non_null(m);
    assert_non_null(c);
    assert_advised(m, bytes, 1);
    assert_advised(c, bytes / 8 * 8, 1);
    assert_int_equal(c[bytes / 8 * 8 - 1], 0);
    free(m);
    free(c);

    /* a growing array: advised once it reaches MC_HUGE_BYTES, the grown size included */
    int64_t *items = NULL, cap = 0;
    for (int64_t n = 0; n < (int64_t)(MC_HUGE_BYTES / sizeof *items) + 1; n++) {
        assert_int_equal(mc_grow((void **)&items, &cap, n, sizeof *items, 64, "a test array"),
                         MC_OK);
        items[n] = n;
    }
    assert_advised((const char *)items, (size_t)cap * sizeof *items, 1);
    assert_int_equal(items[cap / 2 - 1], cap / 2 - 1);
    free(items);
}

static void test_small_array_not_advised(void **state)
{
    (void)state;
    skip_without_thp();
    /* below the threshold: served from an mmap of its own (a size no heap holds) so the
     * mapping is the array's alone, and not advised */
    size_t bytes = MC_HUGE_BYTES - 4096;
    char *m = mc_malloc(bytes, 1);
    assert_non_null(m);
    int a = advised(m + bytes / 2);
    assert_true(a == 0 || a == -1);
    free(m);
}

static void test_malloc_overflow(void **state)
{
    (void)state;
    mc_error_clear();
    assert_null(mc_malloc(SIZE_MAX / 2, 4));
    assert_non_null(strstr(mc_last_error(), "out of memory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_array_not_advised), /* first: before any large frees */
        cmocka_unit_test(test_large_arrays_advised),
        cmocka_unit_test(test_malloc_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
