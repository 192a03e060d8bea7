/* Two layouts of one 10 x 6 f32 tensor: rows over a 2x2 mesh's first axis on devices 0-3, and
 * columns over both axes of a 2x2 mesh on devices 4-7 (uneven: 6 columns in 4 shards of
 * 2, 2, 2, 0). Prints each spec in all three notations and each device's tile, and checks
 * them; returns 0 on success. */
#include <stdio.h>
#include <string.h>
#include "meshcast/layout.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "layout_basic: check failed: %s (%s)\n", #cond, mc_last_error());      \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static const char *const notation_names[3] = {"alpa", "dtensor", "jax"};

/* Prints the spec in every notation and checks that each text parses back to the same spec. */
static int print_spec(const char *title, const mc_spec_t *spec, const mc_mesh_t *mesh)
{
    printf("%s:\n", title);
    for (int n = 0; n < 3; n++) {
        char text[128];
        mc_status_t st = mc_spec_format(spec, mesh, (mc_notation_t)n, text, sizeof text);
        if (st == MC_ERR_UNSUPPORTED) {
            printf("  %-8s (not expressible)\n", notation_names[n]);
            continue;
        }
        if (st != MC_OK)
            return -1;
        mc_spec_t *back = NULL;
        if (mc_spec_parse(text, mesh, mc_spec_tensor_ndim(spec), &back) != MC_OK)
            return -1;
        int same = 1;
        for (int d = 0; d < mc_spec_tensor_ndim(spec); d++) {
            same &= mc_spec_dim_naxes(back, d) == mc_spec_dim_naxes(spec, d);
            for (int k = 0; same && k < mc_spec_dim_naxes(spec, d); k++)
                same &= mc_spec_dim_axis(back, d, k) == mc_spec_dim_axis(spec, d, k);
        }
        mc_spec_destroy(back);
        if (!same)
            return -1;
        printf("  %-8s %s\n", notation_names[n], text);
    }
    return 0;
}

/* Prints every device's tile; returns the total number of elements over all tiles. */
static int64_t print_tiles(const mc_layout_t *layout)
{
    const mc_mesh_t *mesh = mc_layout_mesh(layout);
    int64_t total = 0;
    for (int64_t i = 0; i < mc_mesh_size(mesh); i++) {
        mc_box_t box;
        int64_t dev = mc_mesh_device(mesh, i), n = 1;
        if (mc_layout_tile(layout, dev, &box) != MC_OK)
            return -1;
        printf("  device %lld: rows [%lld, %lld) cols [%lld, %lld)\n", (long long)dev,
               (long long)box.lo[0], (long long)box.hi[0], (long long)box.lo[1],
               (long long)box.hi[1]);
        for (int d = 0; d < mc_layout_ndim(layout); d++)
            n *= box.hi[d] - box.lo[d];
        total += n;
    }
    return total;
}

int main(void)
{
    int rc = 1;
    const int64_t shape[2] = {10, 6};
    mc_mesh_t *src_mesh = NULL, *dst_mesh = NULL;
    mc_spec_t *src_spec = NULL, *dst_spec = NULL;
    mc_layout_t *src = NULL, *dst = NULL;
    mc_dtype_t dtype;

    CHECK(mc_dtype_parse("float32", &dtype) == MC_OK && mc_dtype_size(dtype) == 4);
    CHECK(mc_mesh_parse("2x2", NULL, 0, &src_mesh) == MC_OK);
    CHECK(mc_mesh_parse("2x2", "4-7", 0, &dst_mesh) == MC_OK);
    /* The same kind of spec written three ways. */
    CHECK(mc_spec_parse("[Shard(0), Replicate()]", src_mesh, 2, &src_spec) == MC_OK);
    CHECK(mc_spec_parse("P(None, ('x', 'y'))", dst_mesh, 2, &dst_spec) == MC_OK);
    CHECK(mc_layout_create(2, shape, dtype, src_mesh, src_spec, &src) == MC_OK);
    CHECK(mc_layout_create(2, shape, dtype, dst_mesh, dst_spec, &dst) == MC_OK);

    CHECK(print_spec("source spec", src_spec, src_mesh) == 0);
    printf("source tiles (%lld bytes in all):\n", (long long)mc_layout_bytes(src));
    /* Rows split in 2, each row block on 2 devices: every element twice. */
    CHECK(print_tiles(src) == 2 * 60);
    CHECK(print_spec("destination spec", dst_spec, dst_mesh) == 0);
    printf("destination tiles:\n");
    CHECK(print_tiles(dst) == 60); /* 4 column shards of 2, 2, 2, 0: every element once */

    mc_box_t box;
    CHECK(mc_layout_tile(dst, 7, &box) == MC_OK && box.lo[1] == 6 && box.hi[1] == 6);
    CHECK(mc_layout_tile(dst, 5, &box) == MC_OK && box.lo[1] == 2 && box.hi[1] == 4);
    CHECK(mc_layout_tile(src, 3, &box) == MC_OK && box.lo[0] == 5 && box.hi[0] == 10);
    CHECK(mc_layout_tile(src, 4, &box) == MC_ERR_INVALID); /* not in the source mesh */
    int64_t lo, hi;
    mc_chunk_range(6, 4, 3, &lo, &hi);
    CHECK(lo == 6 && hi == 6);
    printf("ok\n");
    rc = 0;
out:
    mc_layout_destroy(src);
    mc_layout_destroy(dst);
    mc_spec_destroy(src_spec);
    mc_spec_destroy(dst_spec);
    mc_mesh_destroy(src_mesh);
    mc_mesh_destroy(dst_mesh);
    return rc;
}
