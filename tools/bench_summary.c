/* The distribution lines after a simulated `bench` run (docs/planning.md, "Scale
 * benchmark"): per topology and strategy, and for all topologies together. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench_summary.h"

/* Beaten means another strategy's estimate is more than this fraction below meshcast's. */
#define BEAT_TOLERANCE 0.001

mc_status_t bench_summary_add(bench_summary_t *s, const char *topology, const char *name,
                              const plan_row_t *rows, int nrows)
{
    double ours = -1, best_other = -1;
    for (int i = 0; i < nrows; i++) {
        if (s->n == s->cap) {
            int64_t cap = s->cap ? 2 * s->cap : 256;
            bench_sample_t *p = realloc(s->samples, (size_t)cap * sizeof *p);
            if (!p)
                return MC_ERR_NOMEM;
            s->samples = p;
            s->cap = cap;
        }
        const mc_plan_stats_t *st = &rows[i].stats;
        bench_sample_t *x = &s->samples[s->n];
        x->topology = strdup(topology);
        x->name = strdup(name);
        if (!x->topology || !x->name) {
            free((char *)x->topology);
            free((char *)x->name);
            return MC_ERR_NOMEM;
        }
        s->n++;
        x->strategy = rows[i].strategy;
        x->ratio = st->lower_bound_s > 0 ? st->estimate_s / st->lower_bound_s : 1;
        x->plan_ms = st->plan_ms;
        if (!strcmp(rows[i].strategy, "meshcast"))
            ours = st->estimate_s;
        else if (best_other < 0 || st->estimate_s < best_other)
            best_other = st->estimate_s;
    }
    s->cases++;
    if (ours > 0 && best_other > 0) {
        double beat = ours / best_other;
        s->beaten += beat > 1 / (1 - BEAT_TOLERANCE);
        if (beat > s->worst_beat) {
            s->worst_beat = beat;
            snprintf(s->worst_beat_case, sizeof s->worst_beat_case, "%s", name);
        }
    }
    return MC_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const double *v, int64_t n, double q)
{
    int64_t k = (int64_t)ceil(q * (double)n) - 1;
    return v[k < 0 ? 0 : k];
}

/* One line for the samples of strategy on topology (NULL: every topology). */
static void print_group(const bench_summary_t *s, const char *topology, const char *strategy,
                        double *ratio, double *ms, FILE *out)
{
    int64_t n = 0, within10 = 0, within25 = 0;
    const char *worst = "";
    double worst_ratio = -1;
    for (int64_t i = 0; i < s->n; i++) {
        const bench_sample_t *x = &s->samples[i];
        if (strcmp(x->strategy, strategy) || (topology && strcmp(x->topology, topology)))
            continue;
        ratio[n] = x->ratio;
        ms[n++] = x->plan_ms;
        within10 += x->ratio <= 1.10;
        within25 += x->ratio <= 1.25;
        if (x->ratio > worst_ratio) {
            worst_ratio = x->ratio;
            worst = x->name;
        }
    }
    qsort(ratio, (size_t)n, sizeof *ratio, cmp_double);
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    fprintf(out, "# %-11s %-18s %5lld %6.3f %6.3f %6.3f %6.3f %6.1f%% %6.1f%% %8.3f %8.3f  %s\n",
            topology ? topology : "all", strategy, (long long)n, pct(ratio, n, 0.5),
            pct(ratio, n, 0.9), pct(ratio, n, 0.95), ratio[n - 1],
            100.0 * (double)within10 / (double)n, 100.0 * (double)within25 / (double)n,
            pct(ms, n, 0.5), ms[n - 1], worst);
}

void bench_summary_print(const bench_summary_t *s, FILE *out)
{
    if (s->n == 0)
        return;
    double *ratio = malloc((size_t)s->n * sizeof *ratio), *ms = malloc((size_t)s->n * sizeof *ms);
    if (!ratio || !ms) {
        free(ratio);
        free(ms);
        return;
    }
    fprintf(out, "# est/bound and plan_ms over %lld case(s), per topology and strategy\n",
            (long long)s->cases);
    fprintf(out, "# %-11s %-18s %5s %6s %6s %6s %6s %7s %7s %8s %8s  %s\n", "topology", "strategy",
            "cases", "p50", "p90", "p95", "max", "<=1.10", "<=1.25", "ms_p50", "ms_max",
            "worst case");
    /* groups in order of first appearance, then every topology together */
    for (int64_t i = 0; i < s->n; i++) {
        int seen = 0;
        for (int64_t j = 0; j < i && !seen; j++)
            seen = !strcmp(s->samples[j].topology, s->samples[i].topology) &&
                   !strcmp(s->samples[j].strategy, s->samples[i].strategy);
        if (!seen)
            print_group(s, s->samples[i].topology, s->samples[i].strategy, ratio, ms, out);
    }
    for (int64_t i = 0; i < s->n; i++) {
        int seen = 0;
        for (int64_t j = 0; j < i && !seen; j++)
            seen = !strcmp(s->samples[j].strategy, s->samples[i].strategy);
        if (!seen)
            print_group(s, NULL, s->samples[i].strategy, ratio, ms, out);
    }
    if (s->worst_beat > 0)
        fprintf(out,
                "# meshcast beaten by another strategy by more than 0.1%%: %lld of %lld case(s); "
                "worst meshcast/best other %.4f (%s)\n",
                (long long)s->beaten, (long long)s->cases, s->worst_beat, s->worst_beat_case);
    free(ratio);
    free(ms);
}

void bench_summary_free(bench_summary_t *s)
{
    for (int64_t i = 0; i < s->n; i++) {
        free((char *)s->samples[i].topology);
        free((char *)s->samples[i].name);
    }
    free(s->samples);
    memset(s, 0, sizeof *s);
}
