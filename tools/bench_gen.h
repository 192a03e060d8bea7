/* `meshcast bench --generate N`: seeded random cases at cluster scale, as suite lines. */
#ifndef MC_TOOL_BENCH_GEN_H
#define MC_TOOL_BENCH_GEN_H

#include <stdint.h>
#include <stdio.h>

/* Most cases --generate accepts. */
#define BENCH_GEN_MAX 100000

/* Writes n suite lines (benchmarks/suites format) drawn from seed to a temporary file and
 * returns it rewound, or NULL (one line printed, *rc set to the exit status). */
FILE *bench_generate(int64_t n, uint64_t seed, int *rc);

#endif
