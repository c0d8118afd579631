/*
 * test_kmeans_reference.c: statgpu's k-means against the programs
 * statisticians trust, from their committed outputs (tests/reference/; the
 * scripts there re-make them with R and scikit-learn, which this test does not
 * need):
 *   - R's stats::kmeans(algorithm = "Lloyd") on faithful and iris[, 1:4] from
 *     the same initial centres: the same labels and iterations, centres and
 *     tot.withinss within 1e-10 relative. Where R's Lloyd leaves a cluster
 *     empty (its centre becomes NaN), statgpu must re-seed it instead and end
 *     with a lower inertia.
 *   - scikit-learn's KMeans(init="k-means++", n_init=10, tol=1e-4) on iris and
 *     on Gaussian blobs, 30 random_states each, against statgpu with
 *     k-means++ and 10 restarts, seeds 0..29. Where scikit-learn reaches one
 *     inertia from every random_state, statgpu must reach it (ours <=
 *     scikit-learn's x (1 + 1e-9)) from at least 28 of the 30 seeds and come
 *     within 1e-3 of it from all. Where there are several local minima,
 *     which one a run finds is luck, seed by seed, for both programs: there
 *     the mean over the 30 seeds must be at most scikit-learn's x (1 + 2e-3).
 *
 *     test_kmeans_reference REFERENCE_DIR
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"
#include "test_reference_csv.h"

#define RELATIVE_TOLERANCE_R       1e-10
#define RELATIVE_TOLERANCE_SKLEARN 1e-9
#define LINE_BYTES                 (1 << 16)

static const char      *g_reference_dir = ".";
static statgpu_context *g_context;

typedef struct dataset {
    double *data;  /* column-major, ld = n */
    size_t  n, d;
} dataset;

static FILE *open_reference(const char *name)
{
    return test_open_reference(g_reference_dir, name);
}

/* A CSV of numbers with one header line. */
static dataset read_dataset(const char *name)
{
    char file_name[256];
    snprintf(file_name, sizeof file_name, "%s.csv", name);
    size_t n, d;
    double *values = test_read_numeric_csv(g_reference_dir, file_name, &n, &d);  /* row-major */
    dataset set = { malloc(n * d * sizeof(double)), n, d };
    for (size_t i = 0; i < set.n; ++i)
        for (size_t v = 0; v < d; ++v)
            set.data[i + set.n * v] = values[i * d + v];
    free(values);
    return set;
}

/* Splits a line at commas, in place. */
static size_t split(char *line, char **fields, size_t capacity)
{
    size_t count = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *field = line; field && count < capacity; ++count) {
        fields[count] = field;
        field = strchr(field, ',');
        if (field)
            *field++ = '\0';
    }
    return count;
}

static double relative_difference(double a, double b)
{
    return a == b ? 0.0 : fabs(a - b) / fabs(b);
}

/* ------------------------------------------------------------------- R */

static void test_same_as_r_kmeans_lloyd(void **state)
{
    (void)state;
    FILE *file = open_reference("kmeans_r.csv");
    char *line = malloc(LINE_BYTES);
    assert_non_null(fgets(line, LINE_BYTES, file));  /* header */
    size_t cases = 0, exact_cases = 0;
    double worst_centre = 0.0, worst_inertia = 0.0;
    print_message("%-9s %2s %5s %8s %5s %22s %22s %9s\n", "data", "k", "start", "iter.max", "iter",
                  "R tot.withinss", "statgpu inertia", "centres");
    while (fgets(line, LINE_BYTES, file)) {
        char *fields[16];
        assert_int_equal(split(line, fields, 16), 10);
        dataset set = read_dataset(fields[0]);
        size_t k = strtoul(fields[1], NULL, 10), iter_max = strtoul(fields[3], NULL, 10);
        size_t r_iterations = strtoul(fields[4], NULL, 10);
        int r_converged = atoi(fields[5]);
        double r_inertia = strtod(fields[6], NULL);
        double rows[64], *r_centres = malloc(k * set.d * sizeof *r_centres), *labels = malloc(set.n * sizeof(double));
        assert_int_equal(test_parse_numbers(fields[7], rows, 64), k);
        assert_int_equal(test_parse_numbers(fields[8], r_centres, k * set.d), k * set.d);
        assert_int_equal(test_parse_numbers(fields[9], labels, set.n), set.n);

        double *initial = malloc(k * set.d * sizeof *initial);
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < set.d; ++v)
                initial[j + k * v] = set.data[(size_t)rows[j] - 1 + set.n * v];
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.init = STATGPU_KMEANS_INIT_GIVEN;
        params.initial_centroids = initial;
        params.tolerance = 0.0;  /* R's rule: stop when no label changes */
        params.max_iterations = iter_max;
        statgpu_kmeans_result *result = NULL;
        statgpu_status status = statgpu_kmeans(g_context, set.data, set.n, set.d, set.n, k, &params, &result);
        if (status != STATGPU_OK)
            fail_msg("%s k=%zu: %s", fields[0], k, statgpu_context_last_error(g_context));

        int r_has_nan = 0;
        for (size_t e = 0; e < k * set.d; ++e)
            r_has_nan = r_has_nan || isnan(r_centres[e]);
        double centre_difference = 0.0;
        for (size_t e = 0; e < k * set.d && !r_has_nan; ++e)
            if (relative_difference(result->centroids[e], r_centres[e]) > centre_difference)
                centre_difference = relative_difference(result->centroids[e], r_centres[e]);
        print_message("%-9s %2zu %5s %8zu %5zu %22.17g %22.17g %9.2g%s\n", fields[0], k, fields[2], iter_max,
                      r_iterations, r_inertia, result->inertia, centre_difference,
                      r_has_nan ? "  (R: an empty cluster, centre NaN; statgpu re-seeded it)"
                      : !r_converged ? "  (stopped at iter.max)" : "");
        if (r_has_nan) {
            /* R's Lloyd divides by a zero count; statgpu re-seeds the cluster. */
            assert_true(result->reseed_count >= 1);
            for (size_t e = 0; e < k * set.d; ++e)
                assert_true(isfinite(result->centroids[e]));
            for (size_t j = 0; j < k; ++j)
                assert_true(result->cluster_sizes[j] > 0);
            assert_true(result->inertia < r_inertia);
        } else {
            if (centre_difference > RELATIVE_TOLERANCE_R)
                fail_msg("%s k=%zu start %s: centres differ from R's by %g relative", fields[0], k, fields[2],
                         centre_difference);
            if (r_converged) {
                /* Converged: the same labels (R's are 1-based) and iterations. */
                for (size_t i = 0; i < set.n; ++i)
                    if (result->labels[i] + 1 != (int32_t)labels[i])
                        fail_msg("%s k=%zu start %s: row %zu is in cluster %d, R's %d", fields[0], k, fields[2],
                                 i + 1, result->labels[i] + 1, (int)labels[i]);
                assert_int_equal(result->iterations, r_iterations);
                assert_int_equal(result->converged, 1);
                double inertia_difference = relative_difference(result->inertia, r_inertia);
                if (inertia_difference > RELATIVE_TOLERANCE_R)
                    fail_msg("%s k=%zu: inertia %.17g, R's %.17g", fields[0], k, result->inertia, r_inertia);
                worst_inertia = inertia_difference > worst_inertia ? inertia_difference : worst_inertia;
                exact_cases += centre_difference == 0.0;
            } else {
                /* R counts iter.max + 1 when it stops there; its labels are those
                 * of its last assignment, ours the nearest centroid. */
                assert_int_equal(r_iterations, iter_max + 1);
                assert_int_equal(result->iterations, iter_max);
                assert_int_equal(result->converged, 0);
            }
            worst_centre = centre_difference > worst_centre ? centre_difference : worst_centre;
        }
        ++cases;
        statgpu_kmeans_result_destroy(result);
        free(initial);
        free(r_centres);
        free(labels);
        free(set.data);
    }
    fclose(file);
    free(line);
    print_message("%zu cases of R's kmeans: largest relative difference of centres %.2g, of inertia %.2g; "
                  "%zu converged cases with bit-identical centres\n",
                  cases, worst_centre, worst_inertia, exact_cases);
    assert_true(cases >= 20);
}

/* -------------------------------------------------------- scikit-learn */

#define SEEDS 30
/* Which local minimum a run ends in is luck of the draw, for both programs,
 * each with its own random stream. Even on the six separated blobs at k = 6
 * one k-means++ run finds the optimum only about 37% of the time (measured:
 * 109 of 300 runs here, 113 of 300 for scikit-learn), so the best of 10 runs
 * misses it from about 1 seed in 100. Hence: where scikit-learn reached one
 * inertia from all its random_states, statgpu must reach it (within 1e-9)
 * from at least SETTLED_SEEDS_MIN of the seeds and stay within
 * SETTLED_WORST of it from every seed (a wrong partition lies far above: 60%
 * for a merged pair of blobs); elsewhere the means over the seeds are
 * compared, with MEAN_MARGIN. */
#define SETTLED_SEEDS_MIN 28
#define SETTLED_WORST 1e-3
#define MEAN_MARGIN 2e-3

static void test_no_worse_than_scikit_learn(void **state)
{
    (void)state;
    FILE *file = open_reference("kmeans_sklearn.csv");
    char line[1024];
    assert_non_null(fgets(line, sizeof line, file));  /* header */
    char current[64] = "";
    size_t current_k = 0, seen = 0, settled_cases = 0, open_cases = 0, settled_misses = 0;
    double sklearn[SEEDS], worst_mean_ratio = 0.0;
    size_t n_init = 0;
    print_message("%-18s %2s %8s %16s %16s %16s %16s %8s %s\n", "data", "k", "", "sklearn best", "statgpu best",
                  "sklearn mean", "statgpu mean", "ratio", "statgpu seeds reaching sklearn's best");
    for (int more = 1; more;) {
        char *fields[8];
        more = fgets(line, sizeof line, file) != NULL;
        if (more)
            assert_int_equal(split(line, fields, 8), 6);
        size_t k = more ? strtoul(fields[1], NULL, 10) : 0;
        if (seen > 0 && (!more || strcmp(fields[0], current) != 0 || k != current_k)) {
            assert_int_equal(seen, SEEDS);
            double sklearn_best = INFINITY, sklearn_mean = 0.0;
            for (size_t s = 0; s < SEEDS; ++s) {
                sklearn_best = sklearn[s] < sklearn_best ? sklearn[s] : sklearn_best;
                sklearn_mean += sklearn[s] / SEEDS;
            }
            /* Settled: every scikit-learn fit reached the same inertia. */
            int settled = 1;
            for (size_t s = 0; s < SEEDS; ++s)
                settled = settled && sklearn[s] <= sklearn_best * (1.0 + RELATIVE_TOLERANCE_SKLEARN);

            dataset set = read_dataset(current);
            double ours_best = INFINITY, ours_mean = 0.0;
            size_t reached = 0;
            for (size_t seed = 0; seed < SEEDS; ++seed) {
                statgpu_kmeans_params params;
                statgpu_kmeans_params_init(&params);
                params.init = STATGPU_KMEANS_INIT_PLUS_PLUS;
                params.restart_count = n_init;
                params.seed = seed;
                statgpu_kmeans_result *result = NULL;
                assert_int_equal(statgpu_kmeans(g_context, set.data, set.n, set.d, set.n, current_k, &params,
                                                &result),
                                 STATGPU_OK);
                reached += result->inertia <= sklearn_best * (1.0 + RELATIVE_TOLERANCE_SKLEARN);
                if (settled && result->inertia > sklearn_best * (1.0 + SETTLED_WORST))
                    fail_msg("%s k=%zu seed %zu: inertia %.17g, scikit-learn's from every random_state %.17g",
                             current, current_k, seed, result->inertia, sklearn_best);
                ours_best = result->inertia < ours_best ? result->inertia : ours_best;
                ours_mean += result->inertia / SEEDS;
                statgpu_kmeans_result_destroy(result);
            }
            double ratio = ours_mean / sklearn_mean;
            print_message("%-18s %2zu %8s %16.10g %16.10g %16.10g %16.10g %8.5f %5zu/%d\n", current, current_k,
                          settled ? "settled" : "minima", sklearn_best, ours_best, sklearn_mean, ours_mean, ratio,
                          reached, SEEDS);
            if (settled && reached < SETTLED_SEEDS_MIN)
                fail_msg("%s k=%zu: scikit-learn's inertia %.17g reached from %zu of %d seeds", current, current_k,
                         sklearn_best, reached, SEEDS);
            settled_misses += settled ? SEEDS - reached : 0;
            if (!settled && ratio > 1.0 + MEAN_MARGIN)
                fail_msg("%s k=%zu: mean inertia %.10g over %d seeds, scikit-learn's %.10g", current, current_k,
                         ours_mean, SEEDS, sklearn_mean);
            worst_mean_ratio = ratio > worst_mean_ratio ? ratio : worst_mean_ratio;
            settled_cases += settled;
            open_cases += !settled;
            free(set.data);
            seen = 0;
        }
        if (!more)
            break;
        snprintf(current, sizeof current, "%s", fields[0]);
        current_k = k;
        n_init = strtoul(fields[2], NULL, 10);
        size_t random_state = strtoul(fields[3], NULL, 10);
        assert_true(random_state < SEEDS && random_state == seen);
        sklearn[seen++] = strtod(fields[4], NULL);
    }
    fclose(file);
    print_message("%zu settled cases x %d seeds: statgpu reached scikit-learn's inertia (within 1e-9) all but %zu "
                  "times; %zu cases with several minima: mean inertia at most %.5f x scikit-learn's "
                  "(allowed 1 + %g)\n", settled_cases, SEEDS, settled_misses, open_cases, worst_mean_ratio,
                  MEAN_MARGIN);
    assert_true(settled_cases >= 4 && settled_cases + open_cases == 18);
}

/* ---------------------------------------------------------------- main */

TEST_CPU_CONTEXT_FIXTURES(g_context)

int main(int argc, char **argv)
{
    if (argc > 1)
        g_reference_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_r_kmeans_lloyd),
        cmocka_unit_test(test_no_worse_than_scikit_learn),
    };
    return cmocka_run_group_tests_name("kmeans_reference", tests, setup, teardown);
}
