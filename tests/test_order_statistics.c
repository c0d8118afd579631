/*
 * test_order_statistics.c: exactness of the order-statistics functions
 * against a sort, on every data pattern of test_support.h, n from 1 to 10^7,
 * every k at small n; the Calc rules of MEDIAN and PERCENTILE.INC; bad inputs.
 *
 * The same binary tests the CUDA backend when STATGPU_TEST_BACKEND=cuda: every
 * call must then have run on CUDA (no silent CPU fallback), and where no CUDA
 * device is usable every test is reported as skipped and the binary exits 77,
 * which ctest shows as "Skipped".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"

static statgpu_context *g_context;
static statgpu_backend  g_backend;
static char             g_skip_reason[256];

/* Every successful call must have run on the backend under test. */
static void assert_ran_on_backend(void)
{
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(g_context, &report), STATGPU_OK);
    if (report.last_used != g_backend)
        fail_msg("ran on %s, not %s: %s", statgpu_backend_name(report.last_used),
                 statgpu_backend_name(g_backend), report.note);
}

#define SKIP_WITHOUT_BACKEND() TEST_SKIP_IF(g_skip_reason)

static void check_kth(const double *data, const double *sorted, size_t count, size_t k,
                      const char *pattern)
{
    double result = NAN;
    statgpu_status status = statgpu_kth_smallest(g_context, data, count, k, &result);
    if (status != STATGPU_OK)
        fail_msg("%s n=%zu k=%zu: %s (%s)", pattern, count, k, statgpu_status_string(status),
                 statgpu_context_last_error(g_context));
    if (!test_same_bits(result, sorted[k - 1]))
        fail_msg("%s n=%zu k=%zu: got %.17g, expected %.17g", pattern, count, k, result, sorted[k - 1]);
}

/* ------------------------------------------------------------ exactness */

static void test_every_rank_at_small_sizes(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const size_t extra_sizes[] = { 63, 64, 65, 100, 127, 128, 129, 257 };
    double data[300], copy[300];
    for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
        for (size_t s = 0; s < 40 + sizeof extra_sizes / sizeof *extra_sizes; ++s) {
            size_t count = s < 40 ? s + 1 : extra_sizes[s - 40];
            test_fill(data, count, (test_pattern)pattern, count);
            memcpy(copy, data, count * sizeof *data);
            double *sorted = test_sorted_copy(data, count);
            for (size_t k = 1; k <= count; ++k)
                check_kth(data, sorted, count, k, test_pattern_names[pattern]);
            assert_memory_equal(data, copy, count * sizeof *data);  /* input untouched */
            free(sorted);
        }
    }
    assert_ran_on_backend();
}

static void check_large(size_t count, test_pattern pattern)
{
    double *data = malloc(count * sizeof *data);
    assert_non_null(data);
    test_fill(data, count, pattern, 12345 + count);
    double first = data[0], last = data[count - 1];
    double *sorted = test_sorted_copy(data, count);
    const size_t ranks[] = { 1, 2, count / 3, (count + 1) / 2, count / 2 + 1, count - 1, count };
    for (size_t j = 0; j < sizeof ranks / sizeof *ranks; ++j)
        if (ranks[j] >= 1 && ranks[j] <= count)
            check_kth(data, sorted, count, ranks[j], test_pattern_names[pattern]);
    assert_ran_on_backend();
    assert_true(test_same_bits(data[0], first) && test_same_bits(data[count - 1], last));
    free(sorted);
    free(data);
}

static void test_large_inputs_every_pattern(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const size_t sizes[] = { 1000, 65535, 65536, 100000, 1000000 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
        for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern)
            check_large(sizes[s], (test_pattern)pattern);
}

/* Ranks either side of a run of equal keys among distinct ones: where the
 * CPU's introselect (from 2^13 keys, below 2^16: the AUTO method's copy)
 * takes a run for the target's key, the keys just beyond it must still be
 * selected, not the run's. */
static void test_ranks_beside_runs_of_equal_keys(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const size_t sizes[] = { 9000, 20000, 60000 };
    const double shares[] = { 0.05, 0.3, 0.6 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        for (size_t f = 0; f < sizeof shares / sizeof *shares; ++f) {
            const size_t count = sizes[s];
            double *data = malloc(count * sizeof *data);
            assert_non_null(data);
            test_rng rng = { 1000 * s + f + 1 };
            const double run_value = 0.25;
            size_t below = 0, run = 0;
            for (size_t i = 0; i < count; ++i) {
                if (test_rng_uniform(&rng) < shares[f]) {
                    data[i] = run_value;
                    ++run;
                } else {
                    data[i] = test_rng_normal(&rng);
                    below += data[i] < run_value;
                }
            }
            double *sorted = test_sorted_copy(data, count);
            const size_t edges[] = { below, below + run };
            for (size_t e = 0; e < 2; ++e)
                for (size_t d = 0; d < 5; ++d) {
                    const size_t k = edges[e] + d - 1;  /* edge - 1 .. edge + 3 */
                    if (k >= 1 && k <= count)
                        check_kth(data, sorted, count, k, "run of equal keys");
                }
            free(sorted);
            free(data);
        }
    }
    assert_ran_on_backend();
}

/* Introselect's sampled rounds (the CPU's copy path from 2^13 to 2^16
 * values) with bounds a tenth of a standard deviation from the target's
 * sample place (STATGPU_SELECT_ROUND_REACH=0.1), so that most targets fall
 * outside them: the rounds that keep the keys beyond a bound, on every
 * pattern, the same bits as a sorted copy. */
static void test_sampled_rounds_that_miss(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    assert_int_equal(setenv("STATGPU_SELECT_ROUND_REACH", "0.1", 1), 0);
    const size_t sizes[] = { 9000, 20000, 60000 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
        for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern)
            check_large(sizes[s], (test_pattern)pattern);
    assert_int_equal(unsetenv("STATGPU_SELECT_ROUND_REACH"), 0);
}

static void test_ten_million(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const test_pattern patterns[] = { PATTERN_NORMAL, PATTERN_SORTED, PATTERN_HUGE_1E300,
                                      PATTERN_TWO_VALUED, PATTERN_SIGNED_ZEROS };
    for (size_t j = 0; j < sizeof patterns / sizeof *patterns; ++j)
        check_large(10000000, patterns[j]);
}

static void test_thread_counts_agree(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    size_t count = 300001;
    double *data = malloc(count * sizeof *data);
    test_fill(data, count, PATTERN_CAUCHY, 99);
    double expected = NAN;
    for (int threads = 1; threads <= 5; threads += 2) {
        statgpu_context *context = NULL;
        TEST_CONTEXT_WITH_THREADS(g_backend, threads, context);
        double result = NAN;
        assert_int_equal(statgpu_median(context, data, count, &result), STATGPU_OK);
        if (threads == 1)
            expected = result;
        assert_true(test_same_bits(result, expected));
        statgpu_context_destroy(context);
    }
    free(data);
}

/* ------------------------------------------------------- Calc's MEDIAN */

static double median_reference(const double *data, size_t count)
{
    double *sorted = test_sorted_copy(data, count);
    double result = count % 2 ? sorted[count / 2] : (sorted[count / 2] + sorted[count / 2 - 1]) / 2;
    free(sorted);
    return result;
}

static void test_median_follows_calc(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    double result = NAN;
    const double odd[] = { 3, 1, 2 };
    assert_int_equal(statgpu_median(g_context, odd, 3, &result), STATGPU_OK);
    assert_true(result == 2.0);
    const double even[] = { 4, 1, 3, 2 };
    assert_int_equal(statgpu_median(g_context, even, 4, &result), STATGPU_OK);
    assert_true(result == 2.5);
    const double one[] = { -7.25 };
    assert_int_equal(statgpu_median(g_context, one, 1, &result), STATGPU_OK);
    assert_true(result == -7.25);

    /* (a+b)/2 would overflow: the halves are added instead. */
    const double huge[] = { 1.7e308, 1.6e308 };
    assert_int_equal(statgpu_median(g_context, huge, 2, &result), STATGPU_OK);
    assert_true(result == 1.7e308 / 2 + 1.6e308 / 2);
    const double infinite[] = { INFINITY, INFINITY, 1 };
    assert_int_equal(statgpu_median(g_context, infinite, 3, &result), STATGPU_OK);
    assert_true(result == INFINITY);
    const double minus_infinite[] = { -INFINITY, -INFINITY };
    assert_int_equal(statgpu_median(g_context, minus_infinite, 2, &result), STATGPU_OK);
    assert_true(result == -INFINITY);
    const double undefined[] = { -INFINITY, INFINITY };
    assert_int_equal(statgpu_median(g_context, undefined, 2, &result), STATGPU_ERROR_INVALID_ARGUMENT);

    for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
        if (pattern == PATTERN_EXTREMES)
            continue;  /* -Inf next to +Inf in the middle is covered above */
        const size_t sizes[] = { 2, 5, 10, 1001, 4096, 200000 };
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
            double *data = malloc(sizes[s] * sizeof *data);
            test_fill(data, sizes[s], (test_pattern)pattern, 3 + s);
            assert_int_equal(statgpu_median(g_context, data, sizes[s], &result), STATGPU_OK);
            double expected = median_reference(data, sizes[s]);
            if (!(result == expected))
                fail_msg("%s n=%zu: median %.17g, expected %.17g", test_pattern_names[pattern], sizes[s],
                         result, expected);
            free(data);
        }
    }
    assert_ran_on_backend();
}

/* ------------------------------------------------- Calc's PERCENTILE.INC */

/* PERCENTILE.INC on sorted data for p whose position p*(n-1) is not within
 * rounding of an integer: there Calc's rounding to 15 digits changes nothing. */
static double percentile_reference(const double *sorted, size_t count, double p)
{
    if (count == 1)
        return sorted[0];
    double position = p * (double)(count - 1);
    size_t index = (size_t)floor(position);
    double fraction = position - floor(position);
    if (fraction == 0.0)
        return sorted[index];
    return sorted[index] + fraction * (sorted[index + 1] - sorted[index]);
}

static void test_quantile_against_sort(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    test_rng rng = { 2024 };
    const size_t sizes[] = { 1, 2, 3, 10, 11, 1000, 70000, 500000 };
    for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
        if (pattern == PATTERN_EXTREMES)
            continue;  /* interpolation next to infinities is tested separately */
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
            size_t count = sizes[s];
            double *data = malloc(count * sizeof *data);
            test_fill(data, count, (test_pattern)pattern, 77 + s);
            double *sorted = test_sorted_copy(data, count);
            double p[6] = { 0.0, 1.0, 0.5, test_rng_uniform(&rng), test_rng_uniform(&rng), 0.25 };
            for (size_t j = 0; j < 6; ++j) {
                double result = NAN;
                assert_int_equal(statgpu_quantile(g_context, data, count, p[j], &result), STATGPU_OK);
                double expected = percentile_reference(sorted, count, p[j]);
                if (!test_same_bits(result, expected) && !(result == expected))
                    fail_msg("%s n=%zu p=%.17g: got %.17g, expected %.17g", test_pattern_names[pattern],
                             count, p[j], result, expected);
            }
            free(sorted);
            free(data);
        }
    }
    assert_ran_on_backend();
}

/* Calc floors p*(n-1) only after rounding it to 15 significant digits, and
 * interpolates with the unrounded remainder, which can be slightly negative. */
static void test_quantile_rounds_position_as_calc(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    double data[101];
    for (int i = 0; i < 101; ++i)
        data[100 - i] = i * 1.5;  /* given in reverse: the engine must order them */
    /* 0.29 * 100 = 28.999999999999996, 0.57 * 100 = 56.99999999999999: Calc
     * rounds the position to 29 and 57 and, h - i being negative, takes x(i)
     * itself (PERCENTILE.INC(0; 1.5; ...; 150; 0.29) = 43.5 in LibreOffice
     * 7.4, not 43.49999999999999). */
    volatile double p = 0.29;
    double position = p * 100.0;
    assert_true(position < 29.0);
    double result = NAN;
    assert_int_equal(statgpu_quantile(g_context, data, 101, p, &result), STATGPU_OK);
    assert_true(test_same_bits(result, 29 * 1.5));
    p = 0.57;
    assert_true(p * 100.0 < 57.0);
    assert_int_equal(statgpu_quantile(g_context, data, 101, p, &result), STATGPU_OK);
    assert_true(test_same_bits(result, 57 * 1.5));
    double expected;

    p = 0.7;                      /* 0.7 * 100 = 70.00000000000001 */
    position = p * 100.0;
    assert_int_equal(statgpu_quantile(g_context, data, 101, p, &result), STATGPU_OK);
    expected = 70 * 1.5 + (position - 70.0) * 1.5;
    assert_true(test_same_bits(result, expected));

    /* The largest p below 1 may round to the last position: no successor, no interpolation. */
    p = 0.99999999999999989;
    assert_int_equal(statgpu_quantile(g_context, data, 101, p, &result), STATGPU_OK);
    assert_true(result == 150.0);
}

static void test_quantile_next_to_infinities(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const double data[] = { -INFINITY, 1.0, 2.0, INFINITY };
    double result = NAN;
    assert_int_equal(statgpu_quantile(g_context, data, 4, 0.1, &result), STATGPU_OK);
    assert_true(result == -INFINITY);
    assert_int_equal(statgpu_quantile(g_context, data, 4, 0.5, &result), STATGPU_OK);
    assert_true(result == 1.5);
    assert_int_equal(statgpu_quantile(g_context, data, 4, 0.9, &result), STATGPU_OK);
    assert_true(result == INFINITY);
    const double wide[] = { -1.7e308, 1.7e308 };
    assert_int_equal(statgpu_quantile(g_context, wide, 2, 0.5, &result), STATGPU_OK);
    assert_true(isfinite(result) && fabs(result) < 1e293);
    /* Across a difference beyond the largest double: the value rounded once
     * (-1.7e308 + 0.75 x 3.3e308 = 7.75e307), not one ulp off. */
    const double gap[] = { 1.7e308, 1.7976931348623157e308, -1.7e308, 1.6e308 };
    assert_int_equal(statgpu_quantile(g_context, gap, 4, 0.25, &result), STATGPU_OK);
    assert_true(result == 7.75e307);
    const double both[] = { -INFINITY, INFINITY };
    assert_int_equal(statgpu_quantile(g_context, both, 2, 0.5, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantile(g_context, both, 2, 1.0, &result), STATGPU_OK);
    assert_true(result == INFINITY);
}

/* Calc computes x(i) + f*(x(i+1) - x(i)) and (a+b)/2: next to each other,
 * -0.0 and +0.0 give +0.0, as in Calc. */
static void test_signed_zeros_follow_calc(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const double zeros[] = { 0.0, -0.0, -0.0 };
    double result = NAN;
    assert_int_equal(statgpu_kth_smallest(g_context, zeros, 3, 1, &result), STATGPU_OK);
    assert_true(test_same_bits(result, -0.0));
    assert_int_equal(statgpu_kth_smallest(g_context, zeros, 3, 3, &result), STATGPU_OK);
    assert_true(test_same_bits(result, 0.0));
    assert_int_equal(statgpu_quantile(g_context, zeros, 3, 0.75, &result), STATGPU_OK);
    assert_true(test_same_bits(result, -0.0 + 0.5 * (0.0 - -0.0)));
    assert_true(test_same_bits(result, 0.0));
    assert_int_equal(statgpu_quantile(g_context, zeros, 3, 0.25, &result), STATGPU_OK);
    assert_true(test_same_bits(result, -0.0 + 0.5 * (-0.0 - -0.0)));
    assert_int_equal(statgpu_median(g_context, zeros + 1, 2, &result), STATGPU_OK);
    assert_true(test_same_bits(result, -0.0));
    assert_int_equal(statgpu_median(g_context, zeros, 2, &result), STATGPU_OK);
    assert_true(test_same_bits(result, (0.0 + -0.0) / 2));
}

static void test_many_quantiles_match_single_ones(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    size_t count = 123457;
    double *data = malloc(count * sizeof *data);
    test_fill(data, count, PATTERN_MANY_DUPLICATES, 5);
    for (size_t i = 0; i < count; i += 3)
        data[i] += test_rng_normal(&(test_rng){ i });
    double p[103], results[103];
    for (int j = 0; j <= 100; ++j)
        p[j] = j / 100.0;
    p[101] = 0.5;   /* repeated */
    p[102] = 0.031; /* out of order */
    assert_int_equal(statgpu_quantiles(g_context, data, count, p, 103, results), STATGPU_OK);
    assert_ran_on_backend();
    for (int j = 0; j < 103; ++j) {
        double single = NAN;
        assert_int_equal(statgpu_quantile(g_context, data, count, p[j], &single), STATGPU_OK);
        if (!test_same_bits(single, results[j]))
            fail_msg("p=%g: %.17g in the batch, %.17g alone", p[j], results[j], single);
    }
    double median = NAN;
    assert_int_equal(statgpu_median(g_context, data, count, &median), STATGPU_OK);
    assert_true(median == results[50]);
    free(data);
}

/* ------------------------------------------------------------ bad input */

/* The threads of this process (Linux: /proc/self/status), or -1. */
static int process_threads(void)
{
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    int threads = -1;
    while (status != NULL && fgets(line, sizeof line, status) != NULL)
        if (sscanf(line, "Threads: %d", &threads) == 1)
            break;
    if (status != NULL)
        fclose(status);
    return threads;
}

/* A context of 1024 threads takes one for the median of 5 values and of
 * 70,000 (the radix path forced for the 5): it had started all 1024, with a
 * histogram each (1.2 s and 700 MB for 5 values). Same answers. */
static void test_small_data_few_threads(void **state)
{
    (void)state;
    if (test_backend_from_environment() != STATGPU_BACKEND_CPU)
        skip();
    const int before = process_threads();
    if (before < 0)
        skip();  /* no /proc: nothing to count */
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    params.thread_count = 1024;
    params.select_method = STATGPU_SELECT_RADIX;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    const double five[] = { 5, 3, 9, 1, 7 };
    double median = 0.0;
    assert_int_equal(statgpu_median(context, five, 5, &median), STATGPU_OK);
    assert_true(median == 5.0);
    double *many = malloc(70000 * sizeof *many);
    assert_non_null(many);
    for (int i = 0; i < 70000; ++i)
        many[i] = (double)((i * 7919) % 70000);
    assert_int_equal(statgpu_median(context, many, 70000, &median), STATGPU_OK);
    assert_true(median == 34999.5);
    const int after = process_threads();
    if (after - before > 16)
        fail_msg("%d threads started for small data (%d before, %d after)", after - before, before, after);
    free(many);
    statgpu_context_destroy(context);
}

static void test_bad_inputs_get_their_status(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const double data[4] = { 1, 2, 3, 4 };
    double result = 123.0, results[2];
    const double p_ok[2] = { 0.5, 1.0 };

    assert_int_equal(statgpu_kth_smallest(NULL, data, 4, 1, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_median(NULL, data, 4, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantile(NULL, data, 4, 0.5, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantiles(NULL, data, 4, p_ok, 2, results), STATGPU_ERROR_INVALID_ARGUMENT);

    assert_int_equal(statgpu_kth_smallest(g_context, data, 0, 1, &result), STATGPU_ERROR_EMPTY_INPUT);
    assert_int_equal(statgpu_median(g_context, data, 0, &result), STATGPU_ERROR_EMPTY_INPUT);
    assert_int_equal(statgpu_quantile(g_context, NULL, 0, 0.5, &result), STATGPU_ERROR_EMPTY_INPUT);
    assert_string_not_equal(statgpu_context_last_error(g_context), "");

    assert_int_equal(statgpu_kth_smallest(g_context, NULL, 4, 1, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_median(g_context, NULL, 4, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_kth_smallest(g_context, data, 4, 1, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_median(g_context, data, 4, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantiles(g_context, data, 4, p_ok, 2, NULL), STATGPU_ERROR_INVALID_ARGUMENT);

    assert_int_equal(statgpu_kth_smallest(g_context, data, 4, 0, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_kth_smallest(g_context, data, 4, 5, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_kth_smallest(g_context, data, 4, (size_t)-1, &result), STATGPU_ERROR_INVALID_ARGUMENT);

    assert_int_equal(statgpu_quantile(g_context, data, 4, -0.01, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantile(g_context, data, 4, 1.01, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantile(g_context, data, 4, 2.0, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantile(g_context, data, 4, NAN, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantile(g_context, data, 4, INFINITY, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantiles(g_context, data, 4, NULL, 2, results), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_quantiles(g_context, data, 4, p_ok, 0, results), STATGPU_ERROR_INVALID_ARGUMENT);
    const double p_bad[2] = { 0.5, -1.0 };
    assert_int_equal(statgpu_quantiles(g_context, data, 4, p_bad, 2, results), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "outside [0, 1]"));

    /* NaN anywhere is rejected, small or large, never ordered somewhere. */
    const size_t sizes[] = { 1, 5, 200000 };
    for (size_t s = 0; s < 3; ++s) {
        size_t count = sizes[s];
        double *nan_data = malloc(count * sizeof *nan_data);
        const size_t places[] = { 0, count / 2, count - 1 };
        for (size_t w = 0; w < 3; ++w) {
            test_fill(nan_data, count, PATTERN_NORMAL, w);
            nan_data[places[w]] = NAN;
            assert_int_equal(statgpu_kth_smallest(g_context, nan_data, count, 1, &result), STATGPU_ERROR_NAN_IN_DATA);
            assert_int_equal(statgpu_median(g_context, nan_data, count, &result), STATGPU_ERROR_NAN_IN_DATA);
            assert_int_equal(statgpu_quantile(g_context, nan_data, count, 0.3, &result), STATGPU_ERROR_NAN_IN_DATA);
            assert_non_null(strstr(statgpu_context_last_error(g_context), "NaN"));
        }
        free(nan_data);
    }
    assert_true(result == 123.0);  /* no failed call wrote a result */
}

/* ---------------------------------------------------------------- vectors */

static void test_float32_vectors_are_exact(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const size_t sizes[] = { 1, 2, 7, 1000, 100000, 1000003 };
    for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
            size_t count = sizes[s];
            double *wide = malloc(count * sizeof *wide);
            float *narrow = malloc(count * sizeof *narrow);
            test_fill(wide, count, (test_pattern)pattern, 31 + s);
            for (size_t i = 0; i < count; ++i) {
                narrow[i] = (float)wide[i];  /* huge values become +-Inf: still ordered */
                wide[i] = (double)narrow[i];
            }
            double *sorted = test_sorted_copy(wide, count);
            statgpu_vector vector = { narrow, count, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
            size_t ranks[4] = { count, 1, (count + 1) / 2, count / 3 + 1 };
            double results[4];
            assert_int_equal(statgpu_vector_select(g_context, &vector, ranks, 4, results), STATGPU_OK);
            for (int j = 0; j < 4; ++j)
                if (!test_same_bits(results[j], sorted[ranks[j] - 1]))
                    fail_msg("float32 %s n=%zu k=%zu: got %.9g, expected %.9g", test_pattern_names[pattern],
                             count, ranks[j], results[j], sorted[ranks[j] - 1]);
            assert_ran_on_backend();
            if (pattern != PATTERN_EXTREMES && pattern != PATTERN_HUGE_1E300) {
                double median = NAN;
                assert_int_equal(statgpu_vector_median(g_context, &vector, &median), STATGPU_OK);
                assert_true(median == median_reference(wide, count));
                double p = 0.3, quantile = NAN;
                assert_int_equal(statgpu_vector_quantiles(g_context, &vector, &p, 1, &quantile), STATGPU_OK);
                assert_true(quantile == percentile_reference(sorted, count, p));
            }
            free(sorted);
            free(narrow);
            free(wide);
        }
    }
}

static void test_vector_ranks_in_any_order(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const double data[] = { 9, -1, 4, 4, 0.5, 7 };
    statgpu_vector vector = { data, 6, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    const size_t ranks[] = { 5, 1, 5, 3, 6, 4 };
    double results[6];
    assert_int_equal(statgpu_vector_select(g_context, &vector, ranks, 6, results), STATGPU_OK);
    const double expected[] = { 7, -1, 7, 4, 9, 4 };
    for (int j = 0; j < 6; ++j)
        assert_true(results[j] == expected[j]);
}

static void test_vector_bad_arguments(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const double data[] = { 1, 2, 3 };
    double result = 0, results[2];
    size_t rank = 1;
    statgpu_vector vector = { data, 3, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_vector_select(g_context, NULL, &rank, 1, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_vector_median(g_context, NULL, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_vector_select(g_context, &vector, NULL, 1, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_vector_select(g_context, &vector, &rank, 0, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    const size_t bad_ranks[2] = { 1, 4 };
    assert_int_equal(statgpu_vector_select(g_context, &vector, bad_ranks, 2, results), STATGPU_ERROR_INVALID_ARGUMENT);
    vector.dtype = (statgpu_dtype)9;
    assert_int_equal(statgpu_vector_median(g_context, &vector, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    vector.dtype = STATGPU_DTYPE_FLOAT64;
    vector.memory = (statgpu_memory)9;
    assert_int_equal(statgpu_vector_median(g_context, &vector, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    vector.memory = STATGPU_MEMORY_HOST;
    vector.count = 0;
    assert_int_equal(statgpu_vector_median(g_context, &vector, &result), STATGPU_ERROR_EMPTY_INPUT);
    const float nan_floats[] = { 1.0f, NAN };
    statgpu_vector floats = { nan_floats, 2, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_vector_median(g_context, &floats, &result), STATGPU_ERROR_NAN_IN_DATA);

    statgpu_context_params params;
    statgpu_context_params_init(&params);
    assert_int_equal(params.select_method, STATGPU_SELECT_AUTO);
    params.select_method = (statgpu_select_method)17;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_ERROR_INVALID_ARGUMENT);
}

/* Data said to be in device memory cannot be read by the CPU: without CUDA
 * that is an error, never a CPU read of a device pointer. */
static void test_device_memory_needs_cuda(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    const double not_on_a_device[] = { 1, 2, 3 };
    statgpu_vector vector = { not_on_a_device, 3, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_CUDA_DEVICE };
    double result = -5;
    assert_int_equal(statgpu_vector_median(context, &vector, &result), STATGPU_ERROR_BACKEND);
    assert_non_null(strstr(statgpu_context_last_error(context), "device memory"));
    assert_true(result == -5);
    statgpu_context_destroy(context);
}

/* Every selection method gives the same exact answers. */
/* A context on the backend under test that selects with method. */
static statgpu_context *context_with_method(statgpu_select_method method)
{
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = g_backend;
    params.select_method = method;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    return context;
}

/* Host data given up as scratch (STATGPU_MEMORY_HOST_SCRATCH): every method,
 * every pattern, sizes for introselect and for radix, one rank and many: the
 * same bits as on a sorted copy, with no copy of the data made by the CPU
 * backend (the add-in's 10^7-cell ranges). The data may be left reordered. */
static void test_scratch_memory_is_exact(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    const size_t counts[] = { 1, 2, 1001, 70001, 200003 };
    for (statgpu_select_method method = STATGPU_SELECT_AUTO; method <= STATGPU_SELECT_SORT; ++method) {
        statgpu_context *context = context_with_method(method);
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
            size_t count = counts[c];
            double *data = malloc(count * sizeof *data);
            for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
                test_fill(data, count, (test_pattern)pattern, 900 + (uint64_t)method + count);
                double *sorted = test_sorted_copy(data, count);
                const size_t ranks[6] = { 1, count, (count + 1) / 2, count / 3 + 1, count / 2 + 1, count };
                for (size_t rank_count = 1; rank_count <= 6; rank_count += 5) {
                    test_fill(data, count, (test_pattern)pattern, 900 + (uint64_t)method + count);
                    double results[6];
                    statgpu_vector vector = { data, count, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST_SCRATCH };
                    assert_int_equal(statgpu_vector_select(context, &vector, ranks + (rank_count == 1 ? 2 : 0),
                                                           rank_count, results), STATGPU_OK);
                    for (size_t j = 0; j < rank_count; ++j) {
                        size_t rank = ranks[j + (rank_count == 1 ? 2 : 0)];
                        if (!test_same_bits(results[j], sorted[rank - 1]))
                            fail_msg("method %d %s n=%zu k=%zu: got %.17g, expected %.17g", (int)method,
                                     test_pattern_names[pattern], count, rank, results[j], sorted[rank - 1]);
                    }
                }
                /* The median of scratch data, as MEDIAN computes it from the sorted copy. */
                test_fill(data, count, (test_pattern)pattern, 900 + (uint64_t)method + count);
                double median = 0.0, expected = 0.0;
                assert_int_equal(statgpu_median(context, sorted, count, &expected), STATGPU_OK);
                statgpu_vector vector = { data, count, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST_SCRATCH };
                assert_int_equal(statgpu_vector_median(context, &vector, &median), STATGPU_OK);
                assert_true(test_same_bits(median, expected));
                free(sorted);
            }
            free(data);
        }
        statgpu_context_destroy(context);
    }
}

static void test_every_method_is_exact(void **state)
{
    (void)state;
    SKIP_WITHOUT_BACKEND();
    size_t count = 200003;
    double *data = malloc(count * sizeof *data);
    for (statgpu_select_method method = STATGPU_SELECT_AUTO; method <= STATGPU_SELECT_SORT; ++method) {
        statgpu_context *context = context_with_method(method);
        for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
            test_fill(data, count, (test_pattern)pattern, 400 + (uint64_t)method);
            double *sorted = test_sorted_copy(data, count);
            size_t ranks[3] = { 17, count / 2, count - 3 };
            double results[3];
            assert_int_equal(statgpu_vector_select(context, &(statgpu_vector){ data, count, STATGPU_DTYPE_FLOAT64,
                                                                                STATGPU_MEMORY_HOST },
                                                   ranks, 3, results), STATGPU_OK);
            for (int j = 0; j < 3; ++j)
                if (!test_same_bits(results[j], sorted[ranks[j] - 1]))
                    fail_msg("method %d %s k=%zu: got %.17g, expected %.17g", (int)method,
                             test_pattern_names[pattern], ranks[j], results[j], sorted[ranks[j] - 1]);
            free(sorted);
        }
        statgpu_context_destroy(context);
    }
    free(data);
}

/* Selects the ranks (at most 4) of vector and checks each against sorted,
 * its values ascending; a failure names what. */
static void check_selected(statgpu_context *context, const statgpu_vector *vector, const size_t *ranks,
                           size_t rank_count, const double *sorted, const char *what)
{
    double results[4];
    assert_true(rank_count <= 4);
    assert_int_equal(statgpu_vector_select(context, vector, ranks, rank_count, results), STATGPU_OK);
    for (size_t j = 0; j < rank_count; ++j)
        if (!test_same_bits(results[j], sorted[ranks[j] - 1]))
            fail_msg("%s k=%zu: got %.17g, expected %.17g", what, ranks[j], results[j], sorted[ranks[j] - 1]);
}

/* The CPU's window select (AUTO from 2^16 values, CUTTING_PLANE from 2^12,
 * one to four ranks): the same bits as a sorted copy on every pattern, for
 * a rank alone, a median's two, three far apart and four at the ends, from
 * float64 and float32, host and scratch memory; and with the windows shrunk
 * to their sample key (STATGPU_SELECT_WINDOW_REACH=0, so that most ranks
 * fall outside theirs and are selected again by radix select) and to half
 * a standard deviation. NaN anywhere is found by the window's own pass. */
static void test_window_select(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    const char *const reaches[] = { NULL, "0.5", "0" };
    const size_t counts[] = { 4096, 70001, 200003 };
    for (size_t r = 0; r < 3; ++r) {
        if (reaches[r] == NULL)
            assert_int_equal(unsetenv("STATGPU_SELECT_WINDOW_REACH"), 0);
        else
            assert_int_equal(setenv("STATGPU_SELECT_WINDOW_REACH", reaches[r], 1), 0);
        for (statgpu_select_method method = STATGPU_SELECT_AUTO; method <= STATGPU_SELECT_CUTTING_PLANE; ++method) {
            params.select_method = method;
            statgpu_context *context = NULL;
            assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
                const size_t n = counts[c];
                double *data = malloc(n * sizeof *data);
                float *narrow = malloc(n * sizeof *narrow);
                for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
                    test_fill(data, n, (test_pattern)pattern, 31 + n);
                    double *sorted = test_sorted_copy(data, n);
                    const size_t sets[5][4] = { { n / 3 + 1 }, { n / 2, n / 2 + 1 }, { 17, n / 2, n - 3 },
                                                { 1, 2, n - 1, n }, { n } };
                    const size_t sizes[5] = { 1, 2, 3, 4, 1 };
                    char what[128];
                    snprintf(what, sizeof what, "reach %s, method %d, %s n=%zu", reaches[r] ? reaches[r] : "3",
                             (int)method, test_pattern_names[pattern], n);
                    for (size_t set = 0; set < 5; ++set) {
                        statgpu_vector vector = { data, n, STATGPU_DTYPE_FLOAT64,
                                                  set == 1 ? STATGPU_MEMORY_HOST_SCRATCH : STATGPU_MEMORY_HOST };
                        check_selected(context, &vector, sets[set], sizes[set], sorted, what);
                        test_fill(data, n, (test_pattern)pattern, 31 + n);  /* scratch may be reordered */
                    }
                    /* float32: the widened values' order. */
                    bool finite = true;
                    for (size_t i = 0; i < n; ++i) {
                        narrow[i] = (float)data[i];
                        finite = finite && isfinite(narrow[i]) == isfinite(data[i]);
                        sorted[i] = (double)narrow[i];
                    }
                    if (finite) {  /* a median's two ranks (one window) and three apart */
                        qsort(sorted, n, sizeof *sorted, test_total_order_compare);
                        const statgpu_vector vector = { narrow, n, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
                        char narrow_what[160];
                        snprintf(narrow_what, sizeof narrow_what, "float32, %s", what);
                        for (size_t set = 1; set <= 2; ++set)
                            check_selected(context, &vector, sets[set], sizes[set], sorted, narrow_what);
                    }
                    free(sorted);
                }
                /* Nine zeros in ten (a median's window of one key, counted,
                 * not kept), and half -1, half 1 (a crowded window: radix
                 * select), each with a rank away from the crowd. */
                for (int crowd = 0; crowd < 2; ++crowd) {
                    test_rng rng = { 77 + n };
                    for (size_t i = 0; i < n; ++i)
                        data[i] = crowd == 0 ? (i % 10 == 3 ? test_rng_normal(&rng) : 0.0) : (i % 2 ? 1.0 : -1.0);
                    if (crowd == 1)
                        data[n / 3] = 0.5;
                    double *sorted = test_sorted_copy(data, n);
                    const size_t picked[4] = { 1, n / 2, n / 2 + 1, n };
                    double pair[2], results[4];
                    assert_int_equal(statgpu_vector_select(context, &(statgpu_vector){ data, n, STATGPU_DTYPE_FLOAT64,
                                                                                        STATGPU_MEMORY_HOST },
                                                           picked + 1, 2, pair), STATGPU_OK);
                    assert_true(test_same_bits(pair[0], sorted[picked[1] - 1])
                                && test_same_bits(pair[1], sorted[picked[2] - 1]));
                    assert_int_equal(statgpu_vector_select(context, &(statgpu_vector){ data, n, STATGPU_DTYPE_FLOAT64,
                                                                                        STATGPU_MEMORY_HOST },
                                                           picked, 4, results), STATGPU_OK);
                    for (size_t j = 0; j < 4; ++j)
                        if (!test_same_bits(results[j], sorted[picked[j] - 1]))
                            fail_msg("crowd %d, reach %s, method %d, n=%zu k=%zu: got %.17g, expected %.17g", crowd,
                                     reaches[r] ? reaches[r] : "3", (int)method, n, picked[j], results[j],
                                     sorted[picked[j] - 1]);
                    free(sorted);
                }
                /* NaN first, last, in the middle. */
                const size_t places[3] = { 0, n - 1, n / 2 + 7 };
                for (size_t p = 0; p < 3; ++p) {
                    test_fill(data, n, PATTERN_NORMAL, p);
                    data[places[p]] = NAN;
                    double result = 0.0;
                    assert_int_equal(statgpu_median(context, data, n, &result), STATGPU_ERROR_NAN_IN_DATA);
                    narrow[places[p]] = NAN;
                    const size_t rank = 5;
                    statgpu_vector vector = { narrow, n, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
                    assert_int_equal(statgpu_vector_select(context, &vector, &rank, 1, &result),
                                     STATGPU_ERROR_NAN_IN_DATA);
                }
                free(data);
                free(narrow);
            }
            statgpu_context_destroy(context);
        }
    }
    assert_int_equal(unsetenv("STATGPU_SELECT_WINDOW_REACH"), 0);
}

/* The window select again over a window's own keys, where a window of the
 * values keeps 2^16 keys or more (the median's window at 3 million values
 * keeps about 100,000), in the threads' segments: the same bits as a sorted
 * copy for normal, Cauchy, sorted data (the kept keys in few segments, the
 * others empty) and a run of 50,000 zeros around the median (the second
 * window one key, counted; a rank just below the run: a crowded second
 * window, radix select over the segments); with the second windows shrunk
 * to their sample key (STATGPU_SELECT_WINDOW_REACH="3,0": most ranks miss
 * them and are selected again from the segments) and to half a standard
 * deviation; with 1, 7 and all threads. */
static void test_window_select_levels(void **state)
{
    (void)state;
    const size_t n = 3000017;
    double *data = malloc(n * sizeof *data);
    assert_non_null(data);
    const char *const reaches[] = { NULL, "3,0", "3,0.5" };
    const int threads[] = { 0, 1, 7 };
    for (int shape = 0; shape < 4; ++shape) {
        if (shape < 3) {
            const test_pattern patterns[3] = { PATTERN_NORMAL, PATTERN_CAUCHY, PATTERN_SORTED };
            test_fill(data, n, patterns[shape], 404);
        } else {
            test_fill(data, n, PATTERN_NORMAL, 405);
            for (size_t i = 0; i < n; i += 60)
                data[i] = 0.0;
        }
        double *sorted = test_sorted_copy(data, n);
        size_t first_zero = 0;
        while (shape == 3 && !(sorted[first_zero] == 0.0))
            ++first_zero;
        const size_t sets[4][3] = { { n / 2 + 1 }, { n / 2, n / 2 + 1 }, { 17, n / 2, n - 3 },
                                    { shape == 3 ? first_zero - 200 : n / 3, n / 2 + 1 } };
        const size_t sizes[4] = { 1, 2, 3, 2 };
        for (size_t r = 0; r < sizeof reaches / sizeof reaches[0]; ++r) {
            if (reaches[r] == NULL)
                assert_int_equal(unsetenv("STATGPU_SELECT_WINDOW_REACH"), 0);
            else
                assert_int_equal(setenv("STATGPU_SELECT_WINDOW_REACH", reaches[r], 1), 0);
            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; ++t) {
                statgpu_context_params params;
                statgpu_context_params_init(&params);
                params.backend = STATGPU_BACKEND_CPU;
                params.thread_count = threads[t];
                statgpu_context *context = NULL;
                assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
                const statgpu_vector vector = { data, n, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
                char what[96];
                snprintf(what, sizeof what, "shape %d, reach %s, %d threads", shape, reaches[r] ? reaches[r] : "3",
                         threads[t]);
                for (size_t set = 0; set < 4; ++set)
                    check_selected(context, &vector, sets[set], sizes[set], sorted, what);
                statgpu_context_destroy(context);
            }
        }
        free(sorted);
    }
    assert_int_equal(unsetenv("STATGPU_SELECT_WINDOW_REACH"), 0);
    free(data);
}

/* ---------------------------------------------------------------- main */

static int setup(void **state)
{
    (void)state;
    g_backend = test_backend_from_environment();
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = g_backend;
    if (statgpu_context_create(&params, &g_context) != STATGPU_OK)
        return -1;
    if (g_backend == STATGPU_BACKEND_CUDA) {
        statgpu_backend_report report;
        statgpu_context_backend_report(g_context, &report);
        if (!report.cuda_available)
            snprintf(g_skip_reason, sizeof g_skip_reason, "no usable CUDA backend: %s", report.note);
        else
            printf("# backend cuda: %s (runtime %d, driver %d)\n", report.device_name,
                   report.cuda_runtime_version, report.cuda_driver_version);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    statgpu_context_destroy(g_context);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_rank_at_small_sizes),
        cmocka_unit_test(test_large_inputs_every_pattern),
        cmocka_unit_test(test_ranks_beside_runs_of_equal_keys),
        cmocka_unit_test(test_sampled_rounds_that_miss),
        cmocka_unit_test(test_ten_million),
        cmocka_unit_test(test_thread_counts_agree),
        cmocka_unit_test(test_median_follows_calc),
        cmocka_unit_test(test_quantile_against_sort),
        cmocka_unit_test(test_quantile_rounds_position_as_calc),
        cmocka_unit_test(test_quantile_next_to_infinities),
        cmocka_unit_test(test_signed_zeros_follow_calc),
        cmocka_unit_test(test_many_quantiles_match_single_ones),
        cmocka_unit_test(test_bad_inputs_get_their_status),
        cmocka_unit_test(test_small_data_few_threads),
        cmocka_unit_test(test_float32_vectors_are_exact),
        cmocka_unit_test(test_vector_ranks_in_any_order),
        cmocka_unit_test(test_vector_bad_arguments),
        cmocka_unit_test(test_device_memory_needs_cuda),
        cmocka_unit_test(test_every_method_is_exact),
        cmocka_unit_test(test_window_select),
        cmocka_unit_test(test_window_select_levels),
        cmocka_unit_test(test_scratch_memory_is_exact),
    };
    int failures = cmocka_run_group_tests_name(
        test_backend_from_environment() == STATGPU_BACKEND_CUDA ? "order_statistics[cuda]" : "order_statistics[cpu]",
        tests, setup, teardown);
    return test_exit_code(failures, g_skip_reason);
}
