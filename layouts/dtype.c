/* Element types: names, aliases and sizes. */
#include <string.h>
#include "layout_internal.h"
#include "util/util.h"

static const struct {
    const char *name;
    size_t size;
} dtype_info[MC_DTYPE_COUNT] = {
    [MC_DTYPE_F64] = {"f64", 8},   [MC_DTYPE_F32] = {"f32", 4}, [MC_DTYPE_F16] = {"f16", 2},
    [MC_DTYPE_BF16] = {"bf16", 2}, [MC_DTYPE_I64] = {"i64", 8}, [MC_DTYPE_I32] = {"i32", 4},
    [MC_DTYPE_I16] = {"i16", 2},   [MC_DTYPE_I8] = {"i8", 1},   [MC_DTYPE_U8] = {"u8", 1},
    [MC_DTYPE_BOOL] = {"bool", 1},
};

/* Long spellings used by NumPy, PyTorch and JAX. */
static const struct {
    const char *alias;
    mc_dtype_t dtype;
} dtype_aliases[] = {
    {"float64", MC_DTYPE_F64},   {"double", MC_DTYPE_F64},  {"float32", MC_DTYPE_F32},
    {"float", MC_DTYPE_F32},     {"float16", MC_DTYPE_F16}, {"half", MC_DTYPE_F16},
    {"bfloat16", MC_DTYPE_BF16}, {"int64", MC_DTYPE_I64},   {"long", MC_DTYPE_I64},
    {"int32", MC_DTYPE_I32},     {"int", MC_DTYPE_I32},     {"int16", MC_DTYPE_I16},
    {"short", MC_DTYPE_I16},     {"int8", MC_DTYPE_I8},     {"uint8", MC_DTYPE_U8},
    {"bool_", MC_DTYPE_BOOL},
};

mc_status_t mc_dtype_parse(const char *name, mc_dtype_t *out)
{
    if (!name || !out)
        return mc_error(MC_ERR_INVALID, "dtype: NULL argument");
    for (int i = 0; i < MC_DTYPE_COUNT; i++) {
        if (strcmp(name, dtype_info[i].name) == 0) {
            *out = (mc_dtype_t)i;
            return MC_OK;
        }
    }
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++) {
        if (strcmp(name, dtype_aliases[i].alias) == 0) {
            *out = dtype_aliases[i].dtype;
            return MC_OK;
        }
    }
    return mc_error(MC_ERR_INVALID,
                    "dtype '%s': unknown (expected f64, f32, f16, bf16, i64, i32, i16, i8, u8 "
                    "or bool)",
                    name);
}

const char *mc_dtype_name(mc_dtype_t dtype)
{
    if ((int)dtype < 0 || dtype >= MC_DTYPE_COUNT)
        return NULL;
    return dtype_info[dtype].name;
}

size_t mc_dtype_size(mc_dtype_t dtype)
{
    if ((int)dtype < 0 || dtype >= MC_DTYPE_COUNT)
        return 0;
    return dtype_info[dtype].size;
}
