/*
 * test_support.h: what the engine's cmocka tests share: a seeded random
 * generator, the data patterns the order-statistics tests run on, a sorting
 * reference in IEEE total order, and the backend a test binary runs against
 * (STATGPU_TEST_BACKEND=cpu|cuda in the environment; cpu by default).
 */
#ifndef STATGPU_TEST_SUPPORT_H
#define STATGPU_TEST_SUPPORT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "statgpu.h"

/* ----- random numbers: splitmix64, reproducible across platforms ----- */

typedef struct test_rng { uint64_t state; } test_rng;

static inline uint64_t test_rng_next(test_rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform on (0, 1). */
static inline double test_rng_uniform(test_rng *rng)
{
    return ((double)(test_rng_next(rng) >> 11) + 0.5) * 0x1p-53;
}

static inline double test_rng_normal(test_rng *rng)
{
    double u = test_rng_uniform(rng), v = test_rng_uniform(rng);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ----- the total order of statgpu.h, written out independently ----- */

static inline int test_total_order_compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (x < y) return -1;
    if (x > y) return 1;
    /* equal as doubles: only -0.0 versus +0.0 can still differ */
    int sx = signbit(x) != 0, sy = signbit(y) != 0;
    return sy - sx;
}

/* A sorted copy of data; the caller frees it. */
static inline double *test_sorted_copy(const double *data, size_t count)
{
    double *copy = malloc((count > 0 ? count : 1) * sizeof *copy);
    memcpy(copy, data, count * sizeof *copy);
    qsort(copy, count, sizeof *copy, test_total_order_compare);
    return copy;
}

/* Bit-for-bit equality, so -0.0 and +0.0 are told apart. */
static inline int test_same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* In a cmocka test: fails, naming both, unless actual has expected's bits. */
#define assert_bits_equal(actual, expected)                                        \
    do {                                                                          \
        double same_bits_actual_ = (actual), same_bits_expected_ = (expected);    \
        if (!test_same_bits(same_bits_actual_, same_bits_expected_))              \
            fail_msg("%.17g is not %.17g", same_bits_actual_, same_bits_expected_); \
    } while (0)

/* The first of count values where got and expected differ in their bits;
 * count where none does. */
static inline size_t test_first_different_bits(const double *got, const double *expected, size_t count)
{
    if (memcmp(got, expected, count * sizeof *got) == 0)
        return count;
    size_t e = 0;
    while (e < count && memcmp(got + e, expected + e, sizeof *got) == 0)
        ++e;
    return e;
}

/* In a cmocka test: fails, naming the first value that differs, unless
 * got[0..count-1] has expected's bits. */
#define assert_array_bits_equal(what, output, got, expected, count)                                   \
    do {                                                                                            \
        const double *bits_got_ = (got), *bits_expected_ = (expected);                              \
        const size_t bits_at_ = test_first_different_bits(bits_got_, bits_expected_, (count));      \
        if (bits_at_ < (size_t)(count))                                                             \
            fail_msg("%s: %s[%zu] is %a, expected %a", (what), (output), bits_at_, bits_got_[bits_at_], \
                     bits_expected_[bits_at_]);                                                      \
    } while (0)

/* ----- data patterns ----- */

typedef enum test_pattern {
    PATTERN_UNIFORM, PATTERN_NORMAL, PATTERN_SORTED, PATTERN_REVERSE_SORTED,
    PATTERN_ALL_EQUAL, PATTERN_TWO_VALUED, PATTERN_MANY_DUPLICATES, PATTERN_CAUCHY,
    PATTERN_HUGE_1E9, PATTERN_HUGE_1E20, PATTERN_HUGE_1E300, PATTERN_EXTREMES,
    PATTERN_SIGNED_ZEROS, PATTERN_SUBNORMAL, PATTERN_ORGAN_PIPE,
    PATTERN_COUNT
} test_pattern;

static const char *const test_pattern_names[PATTERN_COUNT] = {
    "uniform", "normal", "sorted", "reverse-sorted", "all-equal", "two-valued",
    "many-duplicates", "cauchy", "normal+1e9", "normal+1e20", "normal+1e300",
    "extremes(+-1.7e308,+-Inf)", "signed-zeros", "subnormal", "organ-pipe",
};

/* Fills data[0..count-1] with the pattern. */
static inline void test_fill(double *data, size_t count, test_pattern pattern, uint64_t seed)
{
    test_rng rng = { seed * 7919u + (uint64_t)pattern };
    for (size_t i = 0; i < count; ++i) {
        switch (pattern) {
        case PATTERN_UNIFORM:         data[i] = test_rng_uniform(&rng); break;
        case PATTERN_SORTED:          data[i] = (double)i * 0.5 - 3.0; break;
        case PATTERN_REVERSE_SORTED:  data[i] = (double)(count - i) * 0.25; break;
        case PATTERN_ALL_EQUAL:       data[i] = 42.125; break;
        case PATTERN_TWO_VALUED:      data[i] = (test_rng_next(&rng) & 1) ? 1.0 : -2.5; break;
        case PATTERN_MANY_DUPLICATES: data[i] = (double)(test_rng_next(&rng) % 7) - 3.0; break;
        case PATTERN_CAUCHY:          data[i] = tan(3.141592653589793 * (test_rng_uniform(&rng) - 0.5)); break;
        case PATTERN_SUBNORMAL:       data[i] = (test_rng_uniform(&rng) - 0.5) * 0x1p-1060; break;
        /* Rising, then falling: a median of the first, middle and last keys
         * is next to the smallest on every round. */
        case PATTERN_ORGAN_PIPE:      data[i] = (double)(i < count / 2 ? i : count - i); break;
        case PATTERN_SIGNED_ZEROS: {
            uint64_t r = test_rng_next(&rng) % 4;
            data[i] = r == 0 ? -0.0 : r == 1 ? 0.0 : test_rng_normal(&rng);
            break;
        }
        default:                      data[i] = test_rng_normal(&rng); break;
        }
    }
    /* A few huge values among normal data: the failure mode the seed paper
     * reports for every method but cutting plane. */
    size_t spikes = count < 8 ? 1 : count / 1000 + 3;
    double huge = 0.0;
    switch (pattern) {
    case PATTERN_HUGE_1E9:   huge = 1e9; break;
    case PATTERN_HUGE_1E20:  huge = 1e20; break;
    case PATTERN_HUGE_1E300: huge = 1e300; break;
    default: break;
    }
    if (huge != 0.0)
        for (size_t s = 0; s < spikes && count > 0; ++s)
            data[test_rng_next(&rng) % count] = (s % 2 ? -huge : huge) * (1.0 + (double)s);
    if (pattern == PATTERN_EXTREMES && count > 0) {
        const double extremes[] = { 1.7e308, -1.7e308, INFINITY, -INFINITY, 1.79e308, -1.79e308 };
        for (size_t s = 0; s < 6 && s < count; ++s)
            data[test_rng_next(&rng) % count] = extremes[s];
    }
}

/* ----- the backend under test ----- */

/* Gaussian mixture parameters: the defaults with the given start and
 * tolerance 0 (a fixed number of iterations). */
static inline statgpu_gmm_params test_gmm_given_start(statgpu_gmm_covariance type, const double *weights,
                                                      const double *means, const double *precisions)
{
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.covariance = type;
    params.init = STATGPU_GMM_INIT_GIVEN;
    params.initial_weights = weights;
    params.initial_means = means;
    params.initial_precisions = precisions;
    params.tolerance = 0.0;
    return params;
}

static inline statgpu_backend test_backend_from_environment(void)
{
    const char *name = getenv("STATGPU_TEST_BACKEND");
    if (name != NULL && strcmp(name, "cuda") == 0)
        return STATGPU_BACKEND_CUDA;
    return STATGPU_BACKEND_CPU;
}

/* Where backend is CUDA and the context cannot run it, writes why into
 * skip_reason (skip_bytes bytes); otherwise leaves it as it is. */
static inline void test_note_missing_cuda(statgpu_context *context, statgpu_backend backend, char *skip_reason,
                                          size_t skip_bytes)
{
    statgpu_backend_report report;
    if (backend == STATGPU_BACKEND_CUDA
        && (statgpu_context_backend_report(context, &report) != STATGPU_OK || !report.cuda_available))
        snprintf(skip_reason, skip_bytes, "no usable CUDA backend (%s)", report.note);
}

/* Where the backend under test is CUDA, whether this machine cannot run it:
 * probes a context of its own and writes why into skip_reason. A binary
 * whose tests all need CUDA returns test_exit_code(0, skip_reason) then. */
static inline int test_cuda_missing(char *skip_reason, size_t skip_bytes)
{
    if (test_backend_from_environment() != STATGPU_BACKEND_CUDA)
        return 0;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CUDA;
    statgpu_context *context = NULL;
    if (statgpu_context_create(&params, &context) != STATGPU_OK) {
        snprintf(skip_reason, skip_bytes, "no context could be made");
        return 1;
    }
    test_note_missing_cuda(context, STATGPU_BACKEND_CUDA, skip_reason, skip_bytes);
    statgpu_context_destroy(context);
    return skip_reason[0] != '\0';
}

/* ----- fixtures -----
 * cmocka's group setup and teardown for a test file whose tests share one
 * CPU context in the variable named. Used after #include <cmocka.h>. */
#define TEST_CPU_CONTEXT_FIXTURES(context)                                            \
    static int setup(void **state)                                                    \
    {                                                                                 \
        (void)state;                                                                  \
        statgpu_context_params params;                                                \
        statgpu_context_params_init(&params);                                         \
        params.backend = STATGPU_BACKEND_CPU;                                         \
        return statgpu_context_create(&params, &(context)) == STATGPU_OK ? 0 : -1;    \
    }                                                                                 \
    static int teardown(void **state)                                                 \
    {                                                                                 \
        (void)state;                                                                  \
        statgpu_context_destroy(context);                                             \
        return 0;                                                                     \
    }

/* cmocka's group setup and teardown for a test file whose tests share one
 * context of the backend under test (test_backend_from_environment) in the
 * variable named; is_cuda says whether it is CUDA, and skip_reason (a char
 * array) why CUDA cannot run, where it cannot. */
#define TEST_BACKEND_CONTEXT_FIXTURES(context, is_cuda, skip_reason)                  \
    static int setup(void **state)                                                    \
    {                                                                                 \
        (void)state;                                                                  \
        statgpu_context_params params;                                                \
        statgpu_context_params_init(&params);                                         \
        params.backend = test_backend_from_environment();                             \
        (is_cuda) = params.backend == STATGPU_BACKEND_CUDA;                           \
        if (statgpu_context_create(&params, &(context)) != STATGPU_OK)                \
            return -1;                                                                \
        test_note_missing_cuda(context, params.backend, skip_reason, sizeof skip_reason); \
        return 0;                                                                     \
    }                                                                                 \
    static int teardown(void **state)                                                 \
    {                                                                                 \
        (void)state;                                                                  \
        statgpu_context_destroy(context);                                             \
        return 0;                                                                     \
    }

/* A new context of which_backend with threads threads in out_context, or the
 * test fails. Used after #include <cmocka.h>. */
#define TEST_CONTEXT_WITH_THREADS(which_backend, threads, out_context)                      \
    do {                                                                                   \
        statgpu_context_params test_params_;                                               \
        statgpu_context_params_init(&test_params_);                                        \
        test_params_.backend = (which_backend);                                            \
        test_params_.thread_count = (threads);                                             \
        assert_int_equal(statgpu_context_create(&test_params_, &(out_context)), STATGPU_OK); \
    } while (0)

/* Fails unless context's last call ran on CUDA; what names the call in the
 * message. Used after #include <cmocka.h>. */
#define TEST_ASSERT_RAN_ON_CUDA(context, what)                                              \
    do {                                                                                   \
        statgpu_backend_report test_report_;                                               \
        assert_int_equal(statgpu_context_backend_report((context), &test_report_), STATGPU_OK); \
        if (test_report_.last_used != STATGPU_BACKEND_CUDA)                                \
            fail_msg("%s asked for CUDA ran on the CPU: %s", (what), test_report_.note);   \
    } while (0)

/* ----- the GPU tier's skips -----
 * A test binary that cannot run here keeps a reason; every test then prints it
 * and is skipped (cmocka's skip()), and the binary exits 77, which ctest
 * reports as "Skipped", never as passed. Used after #include <cmocka.h>. */

#define TEST_SKIP_IF(reason)                            \
    do {                                                \
        if ((reason)[0] != '\0') {                      \
            print_message("skipped: %s\n", (reason));   \
            skip();                                     \
        }                                               \
    } while (0)

/* A GPU tier's exit status: the failures; 77 (skipped) where skip_reason
 * says why CUDA could not run, unless STATGPU_EXPECT_CUDA=1 says a GPU must
 * be there: then a failure. */
static inline int test_exit_code(int failures, const char *skip_reason)
{
    const char *expect = getenv("STATGPU_EXPECT_CUDA");
    if (skip_reason[0] != '\0' && expect != NULL && strcmp(expect, "1") == 0) {
        printf("FAILED: STATGPU_EXPECT_CUDA=1 and %s\n", skip_reason);
        return 1;
    }
    if (failures == 0 && skip_reason[0] != '\0') {
        printf("SKIPPED: %s\n", skip_reason);
        return 77;
    }
    return failures;
}

#endif /* STATGPU_TEST_SUPPORT_H */
