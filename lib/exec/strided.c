/* Strided N-d pack/unpack (strided.h). Positions inside the box are kept as byte offsets
 * from base (int64_t) and turned into pointers only to copy, so stepping past the last run
 * never forms an out-of-range pointer. A byte offset into the box's string splits into a
 * run number and an offset inside that run; the run number splits into per-dim indices
 * (outer dims) once, by div/mod, and an odometer walks on from there. */
#include "exec/strided.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#define MC_STREAM 1
#else
#define MC_STREAM 0
#endif

/* Ranges at least this long are written with non-temporal (streaming) stores: they do not
 * fit in cache anyway, and plain stores first read every destination line (RFO); on the
 * benchmark machine memcpy in cache-sized pieces moves ~10 GB/s, streaming ~17. glibc's
 * memcpy streams too, above its own (larger) threshold. Shorter runs stay on memcpy: per
 * run, the split into partial and whole lines costs more than it saves (measured). */
#define MC_STREAM_MIN_BYTES ((int64_t)16 << 20)
#define MC_STREAM_MIN_RUN 256

void mc_strided_shape(mc_strided_t *s, const mc_box_t *tile, const mc_box_t *box, int ndim,
                      size_t elem_size)
{
    memset(s, 0, sizeof *s);
    s->ndim = 1;
    s->stride[0] = 1;
    assert(ndim >= 0 && ndim <= MC_MAX_NDIM);
    if (elem_size == 0)
        return;
    for (int d = 0; d < ndim; d++) {
        assert(tile->lo[d] <= box->lo[d] && box->hi[d] <= tile->hi[d]);
        if (box->hi[d] <= box->lo[d])
            return; /* empty box; offset 0 so no pointer leaves the tile */
    }
    /* Merged dims, innermost first. The element itself is a dim of elem_size bytes at
     * stride 1, so the innermost tensor dim folds into it like any contiguous dim. */
    int64_t cnt[MC_MAX_NDIM + 1], str[MC_MAX_NDIM + 1];
    int m = 1;
    cnt[0] = (int64_t)elem_size;
    str[0] = 1;
    int64_t tstride = (int64_t)elem_size, start = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t ext = box->hi[d] - box->lo[d];
        start += (box->lo[d] - tile->lo[d]) * tstride;
        if (ext > 1) {
            if (cnt[m - 1] * str[m - 1] == tstride)
                cnt[m - 1] *= ext; /* the inner dims fill this one's stride: contiguous */
            else {
                cnt[m] = ext;
                str[m] = tstride;
                m++;
            }
        }
        tstride *= tile->hi[d] - tile->lo[d];
    }
    /* At most ndim dims survive: the element dim always merges with the first dim of
     * extent > 1 when there is one. */
    assert(m <= MC_MAX_NDIM);
    s->offset = start;
    s->ndim = m;
    s->bytes = 1;
    for (int i = 0; i < m; i++) {
        s->count[i] = cnt[m - 1 - i];
        s->stride[i] = str[m - 1 - i];
        s->bytes *= cnt[m - 1 - i];
    }
    s->run_bytes = s->count[m - 1];
}

mc_strided_t mc_strided_bind(const mc_strided_t *shape, void *tile_base)
{
    mc_strided_t s = *shape;
    s.base = (char *)tile_base + s.offset;
    return s;
}

void mc_strided_init(mc_strided_t *s, void *tile_base, const mc_box_t *tile, const mc_box_t *box,
                     int ndim, size_t elem_size)
{
    mc_strided_shape(s, tile, box, ndim, elem_size);
    s->base = (char *)tile_base + s->offset;
}

static int64_t locate(const mc_strided_t *s, int64_t off, int64_t *idx, int64_t *in_run)
{
    return mc_box_locate(s, off, idx, in_run);
}

/* The odometer's carry: dim ndim-2 has just run past its end (idx == count); wrap it and
 * step the outer dims. Only called while bytes remain, so dim 0 never overflows. */
static int64_t carry(const mc_strided_t *s, int64_t *idx, int64_t pos)
{
    int d = s->ndim - 2;
    for (;;) {
        pos -= idx[d] * s->stride[d];
        idx[d] = 0;
        d--;
        assert(d >= 0);
        pos += s->stride[d];
        if (++idx[d] < s->count[d])
            return pos;
    }
}

/* memcpy, but the cache lines that dst covers whole are written with streaming stores;
 * the partial lines at either end use plain stores, so no line mixes the two. */
static void stream_copy(char *dst, const char *src, size_t n)
{
#if MC_STREAM
    size_t head = (size_t)(-(uintptr_t)dst & 63);
    if (head < n) {
        memcpy(dst, src, head);
        dst += head;
        src += head;
        n -= head;
        size_t body = n & ~(size_t)63;
        for (size_t i = 0; i < body; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
            _mm_stream_si128((__m128i *)(dst + i), a);
            _mm_stream_si128((__m128i *)(dst + i + 16), b);
            _mm_stream_si128((__m128i *)(dst + i + 32), c);
            _mm_stream_si128((__m128i *)(dst + i + 48), d);
        }
        dst += body;
        src += body;
        n -= body;
    }
#endif
    memcpy(dst, src, n);
}

/* Streaming stores are weakly ordered: fence once at the end of an operation that used
 * them, so the bytes are visible before whatever the caller does next (e.g. a send). */
static void stream_fence(int stream)
{
#if MC_STREAM
    if (stream)
        _mm_sfence();
#else
    (void)stream;
#endif
}

static int use_stream(int64_t len, int64_t run)
{
    return MC_STREAM && len >= MC_STREAM_MIN_BYTES && run >= MC_STREAM_MIN_RUN;
}

static void move(char *dst, const char *src, int64_t n, int stream)
{
    if (stream)
        stream_copy(dst, src, (size_t)n);
    else
        memcpy(dst, src, (size_t)n);
}

/* k runs of run bytes each: dst + i*ds <- src + i*ss. Common small runs get a constant
 * memcpy size so the compiler emits plain moves instead of a libc call per run. */
static void copy_runs(char *dst, int64_t ds, const char *src, int64_t ss, int64_t k, int64_t run,
                      int stream)
{
#define MC_RUNS(n)                                                                                 \
    for (int64_t i = 0; i < k; i++)                                                                \
        memcpy(dst + i * ds, src + i * ss, n);                                                     \
    return
    if (stream) {
        for (int64_t i = 0; i < k; i++)
            stream_copy(dst + i * ds, src + i * ss, (size_t)run);
        return;
    }
    switch (run) {
    case 1:
        MC_RUNS(1);
    case 2:
        MC_RUNS(2);
    case 4:
        MC_RUNS(4);
    case 8:
        MC_RUNS(8);
    case 12:
        MC_RUNS(12);
    case 16:
        MC_RUNS(16);
    case 24:
        MC_RUNS(24);
    case 32:
        MC_RUNS(32);
    case 64:
        MC_RUNS(64);
    default:
        MC_RUNS((size_t)run);
    }
#undef MC_RUNS
}

static void check_range(const mc_strided_t *s, int64_t off, int64_t len)
{
    (void)s, (void)off, (void)len;
    assert(off >= 0 && len >= 0 && off <= s->bytes && len <= s->bytes - off);
}

/* Moves bytes [off, off+len) between the box and flat: to_box selects the direction.
 * Returns whether streaming stores were used (the caller fences). */
static int walk(const mc_strided_t *s, int64_t off, int64_t len, char *flat, int to_box)
{
    check_range(s, off, len);
    if (len == 0)
        return 0;
    const int64_t run = s->run_bytes;
    const int st = use_stream(len, s->ndim == 1 ? len : run);
    if (s->ndim == 1) {
        if (to_box)
            move(s->base + off, flat, len, st);
        else
            move(flat, s->base + off, len, st);
        return st;
    }
    const int64_t inner = s->ndim - 2;
    const int64_t cnt = s->count[inner], S = s->stride[inner];
    int64_t idx[MC_MAX_NDIM], in;
    int64_t pos = locate(s, off, idx, &in);
    if (in > 0) { /* finish the run that off starts inside */
        int64_t n = run - in < len ? run - in : len;
        if (to_box)
            move(s->base + pos + in, flat, n, st);
        else
            move(flat, s->base + pos + in, n, st);
        flat += n;
        len -= n;
        if (len == 0)
            return st;
        pos += S;
        if (++idx[inner] == cnt)
            pos = carry(s, idx, pos);
    }
    for (;;) {
        /* Whole runs left in this row of the innermost strided dim. */
        int64_t k = cnt - idx[inner];
        if (k > len / run)
            k = len / run;
        if (to_box)
            copy_runs(s->base + pos, S, flat, run, k, run, st);
        else
            copy_runs(flat, run, s->base + pos, S, k, run, st);
        flat += k * run;
        len -= k * run;
        if (len == 0)
            return st;
        pos += k * S;
        idx[inner] += k;
        if (idx[inner] == cnt)
            pos = carry(s, idx, pos);
        if (len < run) { /* a run's head ends the range */
            if (to_box)
                move(s->base + pos, flat, len, st);
            else
                move(flat, s->base + pos, len, st);
            return st;
        }
    }
}

void mc_strided_pack(const mc_strided_t *s, int64_t off, int64_t len, void *out)
{
    stream_fence(walk(s, off, len, out, 0));
}

void mc_strided_unpack(const mc_strided_t *s, int64_t off, int64_t len, const void *in)
{
    stream_fence(walk(s, off, len, (char *)in, 1)); /* walk only reads flat when to_box */
}

/* An empty range is contiguous anywhere: it gets the address byte off would have (just
 * past byte off-1 when off ends the box), so callers never see NULL for len 0. */
void *mc_strided_range(const mc_strided_t *s, int64_t off, int64_t len)
{
    if (off < 0 || len < 0 || off > s->bytes || len > s->bytes - off)
        return NULL;
    if (len == 0 && off == s->bytes)
        return off == 0 ? s->base : (char *)mc_strided_range(s, off - 1, 1) + 1;
    if (s->ndim == 1)
        return s->base + off;
    int64_t idx[MC_MAX_NDIM], in;
    int64_t pos = locate(s, off, idx, &in);
    if (in + len > s->run_bytes)
        return NULL;
    return s->base + pos + in;
}

/* Cursor for the general lock-step copy (strided sides only, ndim >= 2): byte offset of the current
 * run's start, outer indices, and bytes left in the current run. */
typedef struct {
    int64_t pos, left;
    int64_t idx[MC_MAX_NDIM];
} cursor_t;

static void cursor_init(const mc_strided_t *s, int64_t off, cursor_t *c)
{
    int64_t in;
    c->pos = locate(s, off, c->idx, &in);
    c->left = s->run_bytes - in;
}

static char *cursor_ptr(const mc_strided_t *s, const cursor_t *c)
{
    return s->base + c->pos + (s->run_bytes - c->left);
}

static void cursor_next_run(const mc_strided_t *s, cursor_t *c)
{
    int inner = s->ndim - 2;
    c->left = s->run_bytes;
    c->pos += s->stride[inner];
    if (++c->idx[inner] == s->count[inner])
        c->pos = carry(s, c->idx, c->pos);
}

void mc_strided_copy(const mc_strided_t *dst, const mc_strided_t *src, int64_t off, int64_t len)
{
    assert(dst->bytes == src->bytes);
    check_range(src, off, len);
    if (len == 0)
        return;
    /* A contiguous side is just flat memory for the other side's pack or unpack. */
    if (dst->ndim == 1) {
        stream_fence(walk(src, off, len, dst->base + off, 0));
        return;
    }
    if (src->ndim == 1) {
        stream_fence(walk(dst, off, len, src->base + off, 1));
        return;
    }
    cursor_t a, b; /* a: dst, b: src */
    cursor_init(dst, off, &a);
    cursor_init(src, off, &b);
    const int ia = dst->ndim - 2, ib = src->ndim - 2;
    const int64_t run = dst->run_bytes;
    const int st = use_stream(len, run);
    for (;;) {
        if (run == src->run_bytes && a.left == run && b.left == run && len >= run) {
            /* Equal runs, both at a run start: whole runs row by row, as in pack. */
            int64_t k = dst->count[ia] - a.idx[ia], kb = src->count[ib] - b.idx[ib];
            if (k > kb)
                k = kb;
            if (k > len / run)
                k = len / run;
            copy_runs(dst->base + a.pos, dst->stride[ia], src->base + b.pos, src->stride[ib], k,
                      run, st);
            len -= k * run;
            if (len == 0)
                break;
            a.pos += k * dst->stride[ia];
            b.pos += k * src->stride[ib];
            a.idx[ia] += k;
            b.idx[ib] += k;
            if (a.idx[ia] == dst->count[ia])
                a.pos = carry(dst, a.idx, a.pos);
            if (b.idx[ib] == src->count[ib])
                b.pos = carry(src, b.idx, b.pos);
            continue;
        }
        int64_t n = a.left < b.left ? a.left : b.left;
        if (n > len)
            n = len;
        move(cursor_ptr(dst, &a), cursor_ptr(src, &b), n, st);
        len -= n;
        if (len == 0)
            break;
        a.left -= n;
        b.left -= n;
        if (a.left == 0)
            cursor_next_run(dst, &a);
        if (b.left == 0)
            cursor_next_run(src, &b);
    }
    stream_fence(st);
}
