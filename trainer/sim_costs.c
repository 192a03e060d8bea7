/* The step simulator's costs (sim_costs.h): the FLOP model, costs files and traces. */
#include "sim_costs.h"
#include "model_utransformer.h"
#include "errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether layer l is a U-transformer up-block with a join. */
static int has_join(const tr_config *c, int l)
{
    if (c->arch != TR_ARCH_UTRANSFORMER)
        return 0;
    for (int e = 0; e < c->blocks / 2; e++) {
        int from, to;
        tr_utransformer_skip(c->blocks, e, &from, &to);
        if (to == l)
            return 1;
    }
    return 0;
}

double tr_sim_gflop(const tr_config *c, int B, int first, int last, int tp)
{
    const double tokens = (double)B * c->seq, C = c->dmodel, V = c->vocab, T = c->seq;
    double f = 0.0;
    for (int l = first; l < last; l++) {
        if (l == 0) /* embedding: a gather and an add */
            f += tokens * C;
        else if (l == c->blocks + 1) /* final LayerNorm, LM head, softmax cross-entropy */
            f += tokens * (2.0 * C * V + 10.0 * C + 5.0 * V);
        else /* qkv 6C^2, proj 2C^2, MLP 16C^2; scores and mix 4TC; LayerNorms, GELU, adds */
            f += tokens * ((24.0 * C * C + 4.0 * T * C) / tp + 30.0 * C) +
                 (has_join(c, l) ? tokens * 4.0 * C * C : 0.0);
    }
    return f * 1e-9;
}

double tr_sim_mparams(const tr_config *c, int first, int last, int tp)
{
    const double C = c->dmodel, V = c->vocab;
    double n = 0.0;
    for (int l = first; l < last; l++) {
        if (l == 0)
            n += V * C + (double)c->seq * C;
        else if (l == c->blocks + 1)
            n += 2.0 * C + V * C;
        else /* qkv, proj.w, fc, fcproj.w split over tp; LayerNorms and two biases not */
            n += (12.0 * C * C + 7.0 * C) / tp + 6.0 * C + (has_join(c, l) ? 2.0 * C * C + C : 0);
    }
    return n * 1e-6;
}

static int op_index(char op)
{
    const char *ops = "FBIW";
    const char *at = op ? strchr(ops, op) : NULL;
    return at ? (int)(at - ops) : -1;
}

/* B = I + W when missing; I and W half of B. */
static void complete(tr_sim_costs *c)
{
    if (!c->have[TR_OP_B] && c->have[TR_OP_I] && c->have[TR_OP_W]) {
        c->fixed[TR_OP_B] = c->fixed[TR_OP_I] + c->fixed[TR_OP_W];
        c->per_gflop[TR_OP_B] = c->per_gflop[TR_OP_I] + c->per_gflop[TR_OP_W];
        c->have[TR_OP_B] = 1;
    }
    for (int k = TR_OP_I; k <= TR_OP_W; k++)
        if (!c->have[k] && c->have[TR_OP_B]) {
            c->fixed[k] = c->fixed[TR_OP_B] / 2;
            c->per_gflop[k] = c->per_gflop[TR_OP_B] / 2;
            c->have[k] = 1;
        }
}

static int load_file(FILE *f, const char *path, tr_sim_costs *c, char *err, size_t len)
{
    char line[256];
    for (int no = 1; fgets(line, sizeof(line), f); no++) {
        char *hash = strchr(line, '#'), key[32];
        double a, b = 0.0;
        if (hash)
            *hash = '\0';
        int n = sscanf(line, "%31s %lf %lf", key, &a, &b);
        if (n <= 0)
            continue;
        int k = strlen(key) == 1 ? op_index(key[0]) : -1;
        if (n < 2 || a < 0.0 || b < 0.0 || (k < 0 && n > 2))
            return tr_fail(err, len,
                           "--sim-costs %s line %d: expected 'F|B|I|W FIXED [PER_GFLOP]', "
                           "'adamw PER_MPARAM', 'comm', 'gap' or 'step SECONDS' (not negative)",
                           path, no);
        if (k >= 0) {
            c->fixed[k] = a;
            c->per_gflop[k] = b;
            c->have[k] = 1;
        } else if (!strcmp(key, "adamw")) {
            c->adamw_per_mparam = a;
        } else if (!strcmp(key, "comm")) {
            c->comm = a;
        } else if (!strcmp(key, "gap")) {
            c->gap = a;
        } else if (!strcmp(key, "step")) {
            c->step = a;
        } else {
            return tr_fail(err, len, "--sim-costs %s line %d: unknown entry '%s'", path, no, key);
        }
    }
    complete(c);
    if (!c->have[TR_OP_F] || !c->have[TR_OP_B])
        return tr_fail(err, len, "--sim-costs %s gives no F or no B (nor I and W)", path);
    return 0;
}

/* One event line of our own traces. */
typedef struct {
    char name[96], cat[16];
    int pid, step;
    double ts, dur; /* microseconds */
} trace_event;

static const char *after_key(const char *line, const char *key)
{
    char pat[40];
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    const char *at = strstr(line, pat);
    return at ? at + strlen(pat) : NULL;
}

static int get_str(const char *line, const char *key, char *out, size_t n)
{
    const char *at = after_key(line, key);
    if (!at || *at != '"')
        return -1;
    size_t i = 0;
    for (at++; *at && *at != '"' && i + 1 < n; at++)
        out[i++] = *at;
    out[i] = '\0';
    return 0;
}

static int get_num(const char *line, const char *key, double *v)
{
    const char *at = after_key(line, key);
    char *end;
    if (!at)
        return -1;
    *v = strtod(at, &end);
    return end == at ? -1 : 0;
}

/* The run's shape from the trace's otherData line. */
typedef struct {
    tr_config cfg;
    int B, dp, nstages, first[256], last[256], rank[256], tp[256];
} trace_shape;

static int parse_shape(const char *line, trace_shape *s)
{
    char model[32];
    double v[5];
    static const char *keys[] = {"layers", "dmodel", "heads", "seq", "micro_batch"};
    if (get_str(line, "model", model, sizeof(model)))
        return -1;
    for (int i = 0; i < 5; i++)
        if (get_num(line, keys[i], &v[i]) || v[i] < 1)
            return -1;
    s->cfg = (tr_config){!strcmp(model, "gpt") ? TR_ARCH_GPT : TR_ARCH_UTRANSFORMER,
                         (int)v[0],
                         (int)v[1],
                         (int)v[2],
                         (int)v[3],
                         256};
    s->B = (int)v[4];
    s->dp = get_num(line, "dp", &v[0]) || v[0] < 1 ? 1 : (int)v[0];
    const char *tp = after_key(line, "tp"), *st = after_key(line, "stages");
    if (!tp || !st || *tp != '[' || *st != '[')
        return -1;
    for (int r = 0; r < 256; r++)
        s->tp[r] = 1;
    for (int r = 0; *tp != ']' && r < 256; r++) {
        char *end;
        s->tp[r] = (int)strtol(tp + 1, &end, 10);
        tp = end;
    }
    s->nstages = 0;
    int a, b, r, used;
    for (st++; s->nstages < 256 && sscanf(st, "[%d,%d,%d]%n", &a, &b, &r, &used) == 3;
         st += used + (st[used] == ',')) {
        s->first[s->nstages] = a;
        s->last[s->nstages] = b;
        s->rank[s->nstages] = r;
        s->nstages++;
    }
    return s->nstages ? 0 : -1;
}

/* Reads a trace's X events (compute, wait, step) and its shape; *ev is malloc'ed. */
static int read_trace(const char *path, trace_event **ev, int *n, trace_shape *shape, char *err,
                      size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return tr_fail(err, len, "cannot read %s", path);
    static const size_t most = 1 << 16; /* the shape line lists every stage */
    char *line = malloc(most);
    int cap = 0, have_shape = 0;
    *ev = NULL;
    *n = 0;
    if (!line) {
        fclose(f);
        return tr_fail(err, len, "out of memory");
    }
    while (fgets(line, (int)most, f)) {
        if (strstr(line, "\"otherData\"")) {
            have_shape = !parse_shape(line, shape);
            continue;
        }
        trace_event e = {0};
        double pid, step, ts, dur;
        if (!strstr(line, "\"ph\":\"X\"") || get_str(line, "name", e.name, sizeof(e.name)) ||
            get_str(line, "cat", e.cat, sizeof(e.cat)) || get_num(line, "pid", &pid) ||
            get_num(line, "step", &step) || get_num(line, "ts", &ts) || get_num(line, "dur", &dur))
            continue;
        e.pid = (int)pid;
        e.step = (int)step;
        e.ts = ts;
        e.dur = dur;
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            trace_event *v = realloc(*ev, (size_t)cap * sizeof(*v));
            if (!v) {
                fclose(f);
                free(line);
                free(*ev);
                *ev = NULL;
                return tr_fail(err, len, "out of memory");
            }
            *ev = v;
        }
        (*ev)[(*n)++] = e;
    }
    fclose(f);
    free(line);
    if (!have_shape || *n == 0) {
        free(*ev);
        *ev = NULL;
        return tr_fail(err, len, "%s is not a meshcast-train trace (no run shape or no events)",
                       path);
    }
    return 0;
}

/* One rate per op kind: the stages' mean times over their GFLOP (a ratio of sums). A fixed
 * part per op fitted beside it (least squares over the stages) followed noise: the stages of
 * a run differ little in size, and costs moved to another run's configuration came out worse
 * (benchmarks/trainer/sim-validation: 11 of 20 within 20% against 14 of 20). */
static double rate(const double *x, const double *y, int n)
{
    double sx = 0, sy = 0;
    for (int i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
    }
    return sx > 0 ? sy / sx : 0.0;
}

/* The executor's time outside its ops, from the trace's steps after the first: per compute
 * op, the gaps between a rank's events (polling requests, starting reshards, being scheduled);
 * per step, what its "step" event holds beyond the rank's first to last op (zeroing the
 * gradients, the ranks' skew). */
static void overheads(const trace_event *ev, int n, int from, int maxstep, tr_sim_costs *c)
{
    int maxpid = 0;
    for (int i = 0; i < n; i++)
        maxpid = ev[i].pid > maxpid ? ev[i].pid : maxpid;
    const size_t cells = (size_t)(maxpid + 1) * (maxstep + 1);
    double *t0 = malloc(cells * sizeof(double)), *t1 = calloc(cells, sizeof(double)),
           *busy = calloc(cells, sizeof(double)), *step = calloc(cells, sizeof(double)), gaps = 0.0,
           extra = 0.0;
    int nops = 0, nsteps = 0;
    if (t0 && t1 && busy && step) {
        for (size_t k = 0; k < cells; k++)
            t0[k] = -1.0;
        for (int i = 0; i < n; i++) {
            const trace_event *e = &ev[i];
            const size_t k = (size_t)e->pid * (maxstep + 1) + e->step;
            if (e->step < from)
                continue;
            if (!strcmp(e->name, "step")) {
                step[k] = e->dur;
                continue;
            }
            if (t0[k] < 0 || e->ts < t0[k])
                t0[k] = e->ts;
            t1[k] = e->ts + e->dur > t1[k] ? e->ts + e->dur : t1[k];
            busy[k] += e->dur;
            nops += !strcmp(e->cat, "compute");
        }
        for (size_t k = 0; k < cells; k++) {
            if (t0[k] < 0)
                continue;
            gaps += t1[k] - t0[k] - busy[k];
            if (step[k] > 0) {
                extra += step[k] - (t1[k] - t0[k]);
                nsteps++;
            }
        }
        c->gap = nops ? gaps * 1e-6 / nops : 0.0;
        c->step = nsteps && extra > 0 ? extra * 1e-6 / nsteps : 0.0;
    }
    free(t0);
    free(t1);
    free(busy);
    free(step);
}

static int load_trace(const char *path, tr_sim_costs *c, char *err, size_t len)
{
    trace_event *ev;
    trace_shape sh;
    int n, maxstep = 0;
    if (read_trace(path, &ev, &n, &sh, err, len))
        return -1;
    for (int i = 0; i < n; i++)
        maxstep = ev[i].step > maxstep ? ev[i].step : maxstep;
    const int from = maxstep >= 1 ? 1 : 0; /* the first step warms up */
    const int S = sh.nstages;
    double *sum = calloc((size_t)S * TR_NOPS, sizeof(double)),
           *x = calloc((size_t)S, sizeof(double)), *y = calloc((size_t)S, sizeof(double)),
           adamw = 0.0, mparams = 0.0;
    int *cnt = calloc((size_t)S * TR_NOPS, sizeof(int));
    if (!sum || !x || !y || !cnt) {
        free(ev);
        free(sum);
        free(x);
        free(y);
        free(cnt);
        return tr_fail(err, len, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        const trace_event *e = &ev[i];
        int s, mb, used = 0;
        char op;
        if (e->step < from)
            continue;
        if (!strcmp(e->name, "adamw")) {
            int r = 0; /* world rank pid's pipeline rank: dp x tp world ranks each */
            for (int base = sh.dp * sh.tp[0]; base <= e->pid && r + 1 < 256; r++)
                base += sh.dp * sh.tp[r + 1];
            for (int k = 0; k < S; k++)
                if (sh.rank[k] == r)
                    mparams += tr_sim_mparams(&sh.cfg, sh.first[k], sh.last[k], sh.tp[r]);
            adamw += e->dur * 1e-6;
            continue;
        }
        int lo, hi;
        if (strcmp(e->cat, "compute") || sscanf(e->name, "%d%c%d%n", &s, &op, &mb, &used) != 3 ||
            s < 0 || s >= S || op_index(op) < 0)
            continue;
        /* a part of a backward op ("1B3 layers 4-5", run bucket by bucket): its time adds to
         * the op's, which counts once (at its top part) */
        const int part = sscanf(e->name + used, " layers %d-%d", &lo, &hi) == 2;
        if (!part && e->name[used])
            continue;
        sum[s * TR_NOPS + op_index(op)] += e->dur * 1e-6;
        cnt[s * TR_NOPS + op_index(op)] += !part || hi + 1 == sh.last[s];
    }
    for (int k = 0; k < TR_NOPS; k++) {
        int m = 0;
        for (int s = 0; s < S; s++)
            if (cnt[s * TR_NOPS + k]) {
                x[m] = tr_sim_gflop(&sh.cfg, sh.B, sh.first[s], sh.last[s], sh.tp[sh.rank[s]]);
                y[m++] = sum[s * TR_NOPS + k] / cnt[s * TR_NOPS + k];
            }
        if (m) {
            c->fixed[k] = 0.0;
            c->per_gflop[k] = rate(x, y, m);
            c->have[k] = 1;
        }
    }
    c->adamw_per_mparam = mparams > 0 ? adamw / mparams : 0.0;
    overheads(ev, n, from, maxstep, c);
    free(ev);
    free(sum);
    free(x);
    free(y);
    free(cnt);
    complete(c);
    if (!c->have[TR_OP_F] || !c->have[TR_OP_B])
        return tr_fail(err, len, "--sim-costs %s: the trace has no forward or no backward ops",
                       path);
    return 0;
}

int tr_sim_costs_load(const char *path, tr_sim_costs *c, char *err, size_t len)
{
    memset(c, 0, sizeof(*c));
    FILE *f = fopen(path, "r");
    if (!f)
        return tr_fail(err, len, "--sim-costs %s cannot be read", path);
    int ch;
    while ((ch = fgetc(f)) == ' ' || ch == '\n' || ch == '\t')
        ;
    if (ch == '{') {
        fclose(f);
        return load_trace(path, c, err, len);
    }
    rewind(f);
    int rc = load_file(f, path, c, err, len);
    fclose(f);
    return rc;
}

int tr_sim_trace_steps(const char *path, double **steps, int *nsteps, char *err, size_t len)
{
    trace_event *ev;
    trace_shape sh;
    int n, maxstep = 0;
    if (read_trace(path, &ev, &n, &sh, err, len))
        return tr_fail(err, len, "--sim-compare: %s", err);
    for (int i = 0; i < n; i++)
        maxstep = ev[i].step > maxstep ? ev[i].step : maxstep;
    const int from = maxstep >= 1 ? 1 : 0;
    double *t0 = malloc((size_t)(maxstep + 1) * sizeof(double)),
           *t1 = malloc((size_t)(maxstep + 1) * sizeof(double));
    if (!t0 || !t1) {
        free(ev);
        free(t0);
        free(t1);
        return tr_fail(err, len, "out of memory");
    }
    for (int s = 0; s <= maxstep; s++)
        t0[s] = t1[s] = -1.0;
    int have_steps = 0;
    for (int i = 0; i < n; i++)
        have_steps |= !strcmp(ev[i].name, "step");
    for (int i = 0; i < n; i++) {
        const trace_event *e = &ev[i];
        double *a = &t0[e->step], *b = &t1[e->step];
        if (have_steps) { /* the slowest rank's step, as meshcast-train's ms */
            if (!strcmp(e->name, "step") && (*a < 0 || e->dur > *b - *a)) {
                *a = e->ts;
                *b = e->ts + e->dur;
            }
            continue;
        }
        if (*a < 0 || e->ts < *a)
            *a = e->ts;
        if (e->ts + e->dur > *b)
            *b = e->ts + e->dur;
    }
    *nsteps = 0;
    for (int s = from; s <= maxstep; s++)
        if (t0[s] >= 0)
            t0[(*nsteps)++] = (t1[s] - t0[s]) * 1e-6;
    free(ev);
    free(t1);
    *steps = t0;
    return 0;
}
