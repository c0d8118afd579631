/*
 * test_kmeans_cuda.c: k-means on the CUDA backend against a brute-force Lloyd
 * (test_kmeans_lloyd.h, from the definitions in statgpu.h) and against the engine's CPU
 * backend, on the same data and initial centroids: shapes that reach every
 * kernel path (1 to 100 variables, k from 1 to 300, fewer rows than one tile
 * and many tiles, accumulators in shared and in global memory), k-means++
 * starts, re-seeded empty clusters, reproducibility (two runs, same bits), the
 * tensor-core screen against the difference form alone (same bits), the
 * summing pass from the last assignment's distances against the rows (same
 * bits), the centroids as the exact means of the CUDA backend's rule (every
 * assignment kernel, re-seeding, variables from 1e-150 to 1e150), the
 * screen's bounds settling rows at any scale of the data, data with fewer than
 * k distinct rows, cancellation, the backend report and the AUTO threshold.
 *
 * Tolerances: the GPU sums in another order than the CPU and uses fused
 * multiply-adds in its distances, so the two agree to rounding: centroids
 * within 1e-12 relative (absolute floor 1e-12 x the data's largest magnitude),
 * inertia and within sums of squares within 1e-11 relative. Labels,
 * iterations, convergence and re-seeds must be equal where no observation,
 * at any iteration of the brute force, has its two nearest centroids within
 * 1e-9 relative of each other (a near tie, where rounding may pick either):
 * the brute force records the smallest such gap, and cases with a near tie
 * are only checked for consistency (each label the nearest centroid but for
 * near ties). Such cases are rare; the test requires most cases exact.
 *
 * Skipped (exit 77) where CUDA is unusable, unless STATGPU_EXPECT_CUDA=1,
 * which makes that a failure.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"
#include "test_kmeans_lloyd.h"

#define TIE_GAP 1e-9

static statgpu_context *g_cuda;
static statgpu_context *g_cpu;
static char             g_skip_reason[256];

static statgpu_context *make_context(statgpu_backend backend, uint64_t seed)
{
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = backend;
    params.seed = seed;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    return context;
}

static void assert_ran_on(statgpu_context *context, statgpu_backend backend)
{
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    if (report.last_used != backend)
        fail_msg("k-means ran on %s, not %s: %s", statgpu_backend_name(report.last_used),
                 statgpu_backend_name(backend), report.note);
}

static statgpu_kmeans_result *fit(statgpu_context *context, statgpu_backend backend, const double *data, size_t n,
                                  size_t d, size_t k, const statgpu_kmeans_params *params)
{
    statgpu_kmeans_result *result = NULL;
    statgpu_status status = statgpu_kmeans(context, data, n, d, n, k, params, &result);
    if (status != STATGPU_OK)
        fail_msg("statgpu_kmeans n=%zu d=%zu k=%zu on %s: %s (%s)", n, d, k, statgpu_backend_name(backend),
                 statgpu_status_string(status), statgpu_context_last_error(context));
    assert_ran_on(context, backend);
    return result;
}

/* Gaussian blobs (standard deviation 1) around centres within +-2 separation,
 * shifted by offset in every variable; column-major, leading dimension n. */
static double *make_blobs(size_t n, size_t d, size_t blobs, double separation, double offset, uint64_t seed)
{
    double *data = malloc(n * d * sizeof *data);
    double *centres = malloc(blobs * d * sizeof *centres);
    test_rng rng = { seed };
    for (size_t b = 0; b < blobs * d; ++b)
        centres[b] = separation * (test_rng_uniform(&rng) * 4.0 - 2.0);
    for (size_t i = 0; i < n; ++i) {
        size_t blob = test_rng_next(&rng) % blobs;
        for (size_t v = 0; v < d; ++v)
            data[i + n * v] = offset + centres[blob * d + v] + test_rng_normal(&rng);
    }
    free(centres);
    return data;
}

/* k distinct rows as column-major initial centroids (leading dimension k). */
static double *pick_rows(const double *data, size_t n, size_t d, size_t k, uint64_t seed)
{
    double *centres = malloc(k * d * sizeof *centres);
    char *taken = calloc(n, 1);
    test_rng rng = { seed };
    for (size_t j = 0; j < k; ++j) {
        size_t row;
        do
            row = test_rng_next(&rng) % n;
        while (taken[row]);
        taken[row] = 1;
        for (size_t v = 0; v < d; ++v)
            centres[j + k * v] = data[row + n * v];
    }
    free(taken);
    return centres;
}

/* Parameters for a fit from the given centroids, run to the exact fixed
 * point (tolerance 0) or max_iterations. */
static statgpu_kmeans_params given_start(const double *initial, size_t max_iterations)
{
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = STATGPU_KMEANS_INIT_GIVEN;
    params.initial_centroids = initial;
    params.tolerance = 0.0;
    params.max_iterations = max_iterations;
    return params;
}

/* ------------------------------------------------------------- comparisons */

static int close_to(double a, double b, double relative, double absolute)
{
    return a == b || fabs(a - b) <= relative * fabs(b) + absolute;
}

static double largest_magnitude(const double *data, size_t count)
{
    double largest = 0.0;
    for (size_t i = 0; i < count; ++i)
        largest = fabs(data[i]) > largest ? fabs(data[i]) : largest;
    return largest;
}

/* The GPU's result against an expected one: everything equal but rounding. */
static void assert_same_fit(const statgpu_kmeans_result *gpu, const int32_t *labels, const size_t *sizes,
                            const double *centroids, double inertia, size_t iterations, int converged,
                            size_t reseeds, double scale, const char *what)
{
    size_t n = gpu->n_obs, k = gpu->k, d = gpu->n_vars;
    for (size_t i = 0; i < n; ++i)
        if (gpu->labels[i] != labels[i])
            fail_msg("%s: observation %zu has label %d on the GPU, %d expected", what, i, gpu->labels[i], labels[i]);
    for (size_t j = 0; j < k; ++j)
        if (gpu->cluster_sizes[j] != sizes[j])
            fail_msg("%s: cluster %zu has %zu observations on the GPU, %zu expected", what, j, gpu->cluster_sizes[j],
                     sizes[j]);
    for (size_t e = 0; e < k * d; ++e)
        if (!close_to(gpu->centroids[e], centroids[e], 1e-12, 1e-12 * scale))
            fail_msg("%s: centroid %zu variable %zu is %.17g on the GPU, %.17g expected", what, e % k, e / k,
                     gpu->centroids[e], centroids[e]);
    if (!close_to(gpu->inertia, inertia, 1e-11, 0.0))
        fail_msg("%s: inertia %.17g on the GPU, %.17g expected", what, gpu->inertia, inertia);
    if (gpu->iterations != iterations || gpu->converged != converged || gpu->reseed_count != reseeds)
        fail_msg("%s: %zu iterations (converged %d, %zu re-seeds) on the GPU, %zu (%d, %zu) expected", what,
                 gpu->iterations, gpu->converged, gpu->reseed_count, iterations, converged, reseeds);
}

/* A result is a fixed point of its own centroids: every label is the nearest
 * centroid but for near ties, sizes and within sums of squares match the
 * labels, the inertia is their sum. */
static void assert_consistent(const statgpu_kmeans_result *result, const double *data, const char *what)
{
    size_t n = result->n_obs, d = result->n_vars, k = result->k;
    size_t *sizes = calloc(k, sizeof *sizes);
    double *within = calloc(k, sizeof *within);
    double inertia = 0.0;
    for (size_t i = 0; i < n; ++i) {
        int32_t label = result->labels[i];
        assert_true(label >= 0 && (size_t)label < k);
        double own = row_distance(data, n, d, i, result->centroids, k, (size_t)label);
        for (size_t j = 0; j < k; ++j) {
            double other = row_distance(data, n, d, i, result->centroids, k, j);
            if (other < own && (own - other) > TIE_GAP * own)
                fail_msg("%s: observation %zu is nearer centroid %zu (%.17g) than its own %d (%.17g)", what, i, j,
                         other, label, own);
        }
        sizes[label]++;
        within[label] += own;
        inertia += own;
    }
    for (size_t j = 0; j < k; ++j) {
        assert_int_equal(result->cluster_sizes[j], sizes[j]);
        if (!close_to(result->within_ss[j], within[j], 1e-11, 1e-300))
            fail_msg("%s: within_ss[%zu] %.17g, recomputed %.17g", what, j, result->within_ss[j], within[j]);
    }
    if (!close_to(result->inertia, inertia, 1e-11, 0.0))
        fail_msg("%s: inertia %.17g, recomputed %.17g", what, result->inertia, inertia);
    free(sizes);
    free(within);
}

static void assert_same_bits(const statgpu_kmeans_result *a, const statgpu_kmeans_result *b)
{
    size_t n = a->n_obs, k = a->k, d = a->n_vars;
    assert_memory_equal(a->centroids, b->centroids, k * d * sizeof *a->centroids);
    assert_memory_equal(a->labels, b->labels, n * sizeof *a->labels);
    assert_memory_equal(a->cluster_sizes, b->cluster_sizes, k * sizeof *a->cluster_sizes);
    assert_memory_equal(a->within_ss, b->within_ss, k * sizeof *a->within_ss);
    assert_true(test_same_bits(a->inertia, b->inertia));
    assert_int_equal(a->iterations, b->iterations);
    assert_int_equal(a->converged, b->converged);
}

/* ------------------------------------------------------------------ tests */

#define SKIP_WITHOUT_CUDA() TEST_SKIP_IF(g_skip_reason)

typedef struct shape {
    size_t n, d, k;
} shape;

/* Every kernel path: padded widths 4, 8, 16 (two rows a thread), 32 (one),
 * the generic kernel (33 and 100 variables), centroids in shared or global
 * memory, accumulators per warp, shared by warps, or in global memory; fewer
 * rows than one tile (512 rows up to 16 variables, 256 beyond) and many. */
static const shape g_shapes[] = {
    { 100, 1, 1 },   { 300, 1, 2 },    { 5000, 1, 16 },  { 100, 2, 1 },    { 4000, 2, 64 },  { 700, 3, 300 },
    { 3000, 3, 16 }, { 3001, 5, 64 },  { 511, 16, 16 },  { 20000, 16, 64 }, { 2000, 16, 300 }, { 3000, 32, 16 },
    { 257, 33, 2 },  { 5000, 33, 16 }, { 200, 100, 1 },  { 3000, 100, 64 }, { 1500, 100, 300 },
};

static void test_given_centroids_match_brute_force_and_cpu(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    size_t cases = 0, exact = 0;
    for (size_t s = 0; s < sizeof g_shapes / sizeof g_shapes[0]; ++s)
        for (int variant = 0; variant < 2; ++variant) {
            size_t n = g_shapes[s].n, d = g_shapes[s].d, k = g_shapes[s].k;
            /* variant 1: data far from the origin, the tolerance, few iterations */
            double offset = variant ? 1000.0 : 0.0;
            double *data = make_blobs(n, d, 1 + s % 7 + k / 8, 3.0, offset, 100 + s);
            double *initial = pick_rows(data, n, d, k, 200 + s + 1000 * (size_t)variant);
            statgpu_kmeans_params params;
            statgpu_kmeans_params_init(&params);
            params.init = STATGPU_KMEANS_INIT_GIVEN;
            params.initial_centroids = initial;
            params.tolerance = variant ? 1e-4 : 0.0;
            params.max_iterations = variant ? 5 : 60;
            char what[160];
            snprintf(what, sizeof what, "n=%zu d=%zu k=%zu offset=%g tol=%g", n, d, k, offset, params.tolerance);

            reference_fit expected = reference_lloyd(data, n, d, k, initial, params.max_iterations, params.tolerance);
            statgpu_kmeans_result *gpu = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
            statgpu_kmeans_result *cpu = fit(g_cpu, STATGPU_BACKEND_CPU, data, n, d, k, &params);
            double scale = largest_magnitude(data, n * d);
            assert_consistent(gpu, data, what);
            if (expected.min_gap > TIE_GAP) {
                int32_t *labels = malloc(n * sizeof *labels);
                for (size_t i = 0; i < n; ++i)
                    labels[i] = expected.labels[i];
                assert_same_fit(gpu, labels, expected.sizes, expected.centroids, expected.inertia,
                                expected.iterations, expected.converged, expected.reseeds, scale, what);
                assert_same_fit(gpu, cpu->labels, cpu->cluster_sizes, cpu->centroids, cpu->inertia, cpu->iterations,
                                cpu->converged, cpu->reseed_count, scale, what);
                for (size_t j = 0; j < k; ++j)
                    if (!close_to(gpu->within_ss[j], cpu->within_ss[j], 1e-11, 1e-300))
                        fail_msg("%s: within_ss[%zu] %.17g on the GPU, %.17g on the CPU", what, j, gpu->within_ss[j],
                                 cpu->within_ss[j]);
                free(labels);
                ++exact;
            } else {
                print_message("%s: a near tie (relative gap %.3g): checked for consistency only\n", what,
                              expected.min_gap);
            }
            ++cases;
            statgpu_kmeans_result_destroy(gpu);
            statgpu_kmeans_result_destroy(cpu);
            reference_free(&expected);
            free(initial);
            free(data);
        }
    print_message("%zu cases, %zu compared exactly with the brute force and the CPU\n", cases, exact);
    assert_true(exact * 10 >= cases * 8);
}

static void test_plus_plus_matches_cpu(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    const shape shapes[] = { { 6000, 2, 5 }, { 20000, 16, 16 }, { 4000, 33, 8 } };
    for (size_t s = 0; s < 3; ++s) {
        size_t n = shapes[s].n, d = shapes[s].d, k = shapes[s].k;
        double *data = make_blobs(n, d, k, 4.0, 0.0, 300 + s);
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.init = STATGPU_KMEANS_INIT_PLUS_PLUS;
        params.restart_count = 3;
        params.seed = 17;
        statgpu_context *cuda = make_context(STATGPU_BACKEND_CUDA, 99);
        statgpu_context *cpu_context = make_context(STATGPU_BACKEND_CPU, 99);
        statgpu_kmeans_result *gpu = fit(cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        statgpu_kmeans_result *cpu = fit(cpu_context, STATGPU_BACKEND_CPU, data, n, d, k, &params);
        char what[96];
        snprintf(what, sizeof what, "k-means++ n=%zu d=%zu k=%zu", n, d, k);
        assert_consistent(gpu, data, what);
        /* The same starts (drawn on the CPU) and, on blobs this far apart, the
         * same runs: a difference would need a near tie. */
        assert_int_equal(gpu->best_restart, cpu->best_restart);
        assert_same_fit(gpu, cpu->labels, cpu->cluster_sizes, cpu->centroids, cpu->inertia, cpu->iterations,
                        cpu->converged, cpu->reseed_count, largest_magnitude(data, n * d), what);
        statgpu_kmeans_result_destroy(gpu);
        statgpu_kmeans_result_destroy(cpu);
        statgpu_context_destroy(cuda);
        statgpu_context_destroy(cpu_context);
        free(data);
    }
}

static void test_two_runs_same_bits(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    const shape shapes[] = { { 200000, 16, 32 }, { 50000, 3, 7 }, { 30000, 40, 20 } };
    for (size_t s = 0; s < 3; ++s) {
        size_t n = shapes[s].n, d = shapes[s].d, k = shapes[s].k;
        double *data = make_blobs(n, d, k, 1.0, 0.0, 400 + s);  /* overlapping: many iterations */
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.restart_count = 2;
        params.seed = 5;
        statgpu_context *other = make_context(STATGPU_BACKEND_CUDA, 0);
        statgpu_kmeans_result *first = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        statgpu_kmeans_result *second = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        statgpu_kmeans_result *third = fit(other, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        assert_same_bits(first, second);
        assert_same_bits(first, third);
        assert_consistent(first, data, "reproducibility");
        statgpu_kmeans_result_destroy(first);
        statgpu_kmeans_result_destroy(second);
        statgpu_kmeans_result_destroy(third);
        statgpu_context_destroy(other);
        free(data);
    }
}

/* The tensor-core screen (STATGPU_CUDA_KMEANS_SCREEN=1, where it can run),
 * with its bounds and without them (STATGPU_CUDA_KMEANS_BOUNDS=0), its
 * warps claiming chunks (the default) and taking every chunk in the fixed
 * order (STATGPU_CUDA_KMEANS_FIXED=16), and with each pass's totals copied
 * back behind it rather than written into page-locked memory by the GPU,
 * its kernels launched one after the other (STATGPU_CUDA_KMEANS_MAPPED=0), against
 * the difference form alone (=0): the same labels, centroids, sums,
 * inertia and iterations, bit for bit, for every padded width, k below and
 * above the default's threshold, data far from the origin, and exact ties
 * (integer data on a grid, with centroids equally far from many rows, and
 * duplicated centroids that empty and are re-seeded). */
static void test_screen_matches_difference_form(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    const struct {
        size_t n, d, k;
        double offset;
        int grid;  /* integer data in 0..3 and centroids on the grid, pairs duplicated */
        double scale;  /* the data times this: squared distances near 1e303 */
    } cases[] = {
        { 100000, 16, 64, 0.0, 0, 1.0 },  { 60000, 13, 40, 1e6, 0, 1.0 }, { 30000, 3, 33, 0.0, 0, 1.0 },
        { 20000, 32, 50, 5.0, 0, 1.0 },   { 40000, 8, 8, 0.0, 0, 1.0 },   { 5000, 5, 300, 0.0, 0, 1.0 },
        { 20000, 4, 32, 0.0, 1, 1.0 },    { 20000, 7, 36, 0.0, 1, 1.0 },  { 20000, 16, 40, 0.0, 0, 1e150 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        size_t n = cases[c].n, d = cases[c].d, k = cases[c].k;
        double *data = make_blobs(n, d, k / 2 + 1, 2.0, cases[c].offset, 900 + c);
        for (size_t e = 0; e < n * d; ++e)
            data[e] *= cases[c].scale;
        double *initial = pick_rows(data, n, d, k, 950 + c);
        if (cases[c].grid) {
            test_rng rng = { 990 + c };
            for (size_t e = 0; e < n * d; ++e)
                data[e] = (double)(test_rng_next(&rng) % 4);
            for (size_t j = 0; j < k; ++j)
                for (size_t v = 0; v < d; ++v)
                    initial[j + k * v] = (j % 2 == 1 && j > 0) ? initial[j - 1 + k * v]
                                                                 : (double)(test_rng_next(&rng) % 4);
        }
        statgpu_kmeans_params params = given_start(initial, 30);
        char what[160];
        snprintf(what, sizeof what, "n=%zu d=%zu k=%zu offset=%g grid=%d scale=%g", n, d, k, cases[c].offset,
                 cases[c].grid, cases[c].scale);
        setenv("STATGPU_CUDA_KMEANS_SCREEN", "0", 1);
        statgpu_kmeans_result *plain = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        setenv("STATGPU_CUDA_KMEANS_SCREEN", "1", 1);
        statgpu_kmeans_result *screened = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        setenv("STATGPU_CUDA_KMEANS_FIXED", "16", 1);
        statgpu_kmeans_result *fixed = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        unsetenv("STATGPU_CUDA_KMEANS_FIXED");
        setenv("STATGPU_CUDA_KMEANS_BOUNDS", "0", 1);
        statgpu_kmeans_result *unbounded = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        unsetenv("STATGPU_CUDA_KMEANS_BOUNDS");
        setenv("STATGPU_CUDA_KMEANS_MAPPED", "0", 1);
        statgpu_kmeans_result *copied = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        unsetenv("STATGPU_CUDA_KMEANS_MAPPED");
        unsetenv("STATGPU_CUDA_KMEANS_SCREEN");
        print_message("%s: %zu iterations, %zu re-seeds\n", what, plain->iterations, plain->reseed_count);
        assert_consistent(screened, data, what);
        assert_same_bits(plain, screened);
        assert_same_bits(plain, unbounded);
        assert_same_bits(plain, fixed);
        assert_same_bits(plain, copied);
        assert_int_equal(plain->reseed_count, screened->reseed_count);
        assert_int_equal(plain->reseed_count, unbounded->reseed_count);
        assert_int_equal(plain->reseed_count, fixed->reseed_count);
        statgpu_kmeans_result_destroy(plain);
        statgpu_kmeans_result_destroy(screened);
        statgpu_kmeans_result_destroy(fixed);
        statgpu_kmeans_result_destroy(unbounded);
        statgpu_kmeans_result_destroy(copied);
        free(initial);
        free(data);
    }
}

/* A fit on the CUDA backend with STATGPU_CUDA_KMEANS_SCREEN=screen (NULL:
 * the default choice) and STATGPU_CUDA_KMEANS_TRACE=1, the process's stderr
 * in a file meanwhile: the rows the screen screened in each assignment (the
 * others its bounds settled), into screened[0 .. *assignments - 1], and,
 * where summed is not NULL, where the summing pass took the distances from:
 * 1 the last assignment's, 0 the rows, -1 no trace of it. */
static statgpu_kmeans_result *traced_fit(const double *data, size_t n, size_t d, size_t k,
                                         const statgpu_kmeans_params *params, const char *screen, double *screened,
                                         size_t capacity, size_t *assignments, int *summed)
{
    FILE *trace = tmpfile();
    assert_non_null(trace);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(trace), STDERR_FILENO) >= 0);
    if (screen != NULL)
        setenv("STATGPU_CUDA_KMEANS_SCREEN", screen, 1);
    setenv("STATGPU_CUDA_KMEANS_TRACE", "1", 1);
    statgpu_kmeans_result *result = NULL;
    statgpu_status status = statgpu_kmeans(g_cuda, data, n, d, n, k, params, &result);
    unsetenv("STATGPU_CUDA_KMEANS_TRACE");
    unsetenv("STATGPU_CUDA_KMEANS_SCREEN");
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);  /* before any check: a failure's message on stderr */
    close(saved);
    if (status != STATGPU_OK)
        fail_msg("statgpu_kmeans n=%zu d=%zu k=%zu: %s (%s)", n, d, k, statgpu_status_string(status),
                 statgpu_context_last_error(g_cuda));
    assert_ran_on(g_cuda, STATGPU_BACKEND_CUDA);
    rewind(trace);
    char line[256];
    *assignments = 0;
    if (summed != NULL)
        *summed = -1;
    while (fgets(line, sizeof line, trace) != NULL) {
        if (summed != NULL && strstr(line, "statgpu k-means: summing pass") == line)
            *summed = strstr(line, "distances") != NULL ? 1 : 0;
        size_t assignment = 0;
        double rows = 0.0;
        unsigned long long of = 0;
        if (sscanf(line, "statgpu k-means: assignment %zu screened %lf of %llu rows", &assignment, &rows, &of) == 3) {
            assert_int_equal(assignment, *assignments + 1);
            assert_int_equal(of, n);
            assert_true(*assignments < capacity);
            screened[(*assignments)++] = rows;
        }
    }
    fclose(trace);
    return result;
}

/* The bounds at work, at any scale of the data: on blobs at 64 centroids,
 * the data and starting centroids times 1, 2^480 (distances past the floats'
 * range, where the bounds as plain floats would hold FLT_MAX and settle
 * nothing) and 2^-400 (below it): the bounds settle rows in the later
 * assignments (fewer than half the rows screened in at least one), and,
 * the scaling being exact and the bounds kept as multiples of a power of
 * two that follows the data, the same rows at every scale: the same count
 * screened in every assignment, the same labels, and the centroids and
 * inertia scaled exactly. */
static void test_bounds_settle_rows_at_any_scale(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    const size_t n = 60000, d = 16, k = 64, capacity = 64;
    const int exponents[] = { 0, 480, -400 };
    double *data = make_blobs(n, d, k / 2 + 1, 2.0, 0.0, 1200);
    double *initial = pick_rows(data, n, d, k, 1201);
    double *scaled = malloc(n * d * sizeof *scaled);
    double *scaled_initial = malloc(k * d * sizeof *scaled_initial);
    double first_screened[64], screened[64];
    size_t first_assignments = 0;
    statgpu_kmeans_result *first = NULL;
    for (size_t e = 0; e < sizeof exponents / sizeof exponents[0]; ++e) {
        for (size_t i = 0; i < n * d; ++i)
            scaled[i] = ldexp(data[i], exponents[e]);
        for (size_t i = 0; i < k * d; ++i)
            scaled_initial[i] = ldexp(initial[i], exponents[e]);
        statgpu_kmeans_params params = given_start(scaled_initial, 40);
        size_t assignments = 0;
        statgpu_kmeans_result *result =
            traced_fit(scaled, n, d, k, &params, "1", screened, capacity, &assignments, NULL);
        assert_true(assignments >= 3);
        assert_true(assignments >= result->iterations);
        print_message("scale 2^%d: %zu iterations; rows screened:", exponents[e], result->iterations);
        double fewest = (double)n;
        for (size_t a = 0; a < assignments; ++a) {
            print_message(" %.0f", screened[a]);
            if (a > 0 && screened[a] < fewest)
                fewest = screened[a];
        }
        print_message("\n");
        assert_true(screened[0] == (double)n);  /* no bounds yet */
        assert_true(fewest < 0.5 * (double)n);
        if (e == 0) {
            first = result;
            first_assignments = assignments;
            memcpy(first_screened, screened, assignments * sizeof *screened);
            continue;
        }
        assert_int_equal(assignments, first_assignments);
        assert_memory_equal(screened, first_screened, assignments * sizeof *screened);
        assert_int_equal(result->iterations, first->iterations);
        assert_memory_equal(result->labels, first->labels, n * sizeof *result->labels);
        for (size_t i = 0; i < k * d; ++i)
            assert_true(test_same_bits(result->centroids[i], ldexp(first->centroids[i], exponents[e])));
        assert_true(test_same_bits(result->inertia, ldexp(first->inertia, 2 * exponents[e])));
        statgpu_kmeans_result_destroy(result);
    }
    statgpu_kmeans_result_destroy(first);
    free(scaled_initial);
    free(scaled);
    free(initial);
    free(data);
}

/* The summing pass from the distances the last assignment wrote (where the
 * iteration limit ends the run: register and screen kernels) against the
 * summing pass from the rows (STATGPU_CUDA_KMEANS_DISTANCES=0): the same
 * bits, with the passes queued ahead and one at a time (the trace), for the
 * screen at 8, 16 and 32 padded variables, the register kernel at 4 and 16,
 * the generic kernel (which reads the rows either way), a re-seeding in the
 * last iteration, and runs that settle before the limit (which read the
 * rows). */
static void test_summing_pass_reads_distances(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    const struct {
        size_t n, d, k;
        int far;  /* all but the first starting centroid far away: re-seeds */
        size_t iterations;
    } cases[] = {
        { 60000, 16, 64, 0, 1 }, { 60000, 16, 64, 0, 4 }, { 40000, 5, 40, 0, 3 }, { 20000, 20, 33, 0, 2 },
        { 50000, 16, 16, 0, 3 }, { 30000, 3, 4, 0, 2 },   { 20000, 40, 12, 0, 3 }, { 30000, 16, 36, 1, 1 },
        { 30000, 8, 6, 0, 500 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        size_t n = cases[c].n, d = cases[c].d, k = cases[c].k;
        double *data = make_blobs(n, d, k / 2 + 1, cases[c].far ? 8.0 : 2.0, 0.0, 1300 + c);
        double *initial = pick_rows(data, n, d, k, 1350 + c);
        if (cases[c].far)
            for (size_t j = 1; j < k; ++j)
                for (size_t v = 0; v < d; ++v)
                    initial[j + k * v] = 100.0 + (double)j;
        statgpu_kmeans_params params = given_start(initial, cases[c].iterations);
        char what[112];
        snprintf(what, sizeof what, "summing pass n=%zu d=%zu k=%zu far=%d iterations %zu", n, d, k, cases[c].far,
                 cases[c].iterations);
        statgpu_kmeans_result *ahead = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        static double screened[1024];
        size_t assignments = 0;
        int summed = -1;
        statgpu_kmeans_result *traced =
            traced_fit(data, n, d, k, &params, NULL, screened, 1024, &assignments, &summed);
        setenv("STATGPU_CUDA_KMEANS_DISTANCES", "0", 1);
        int summed_rows = -1;
        statgpu_kmeans_result *rows =
            traced_fit(data, n, d, k, &params, NULL, screened, 1024, &assignments, &summed_rows);
        unsetenv("STATGPU_CUDA_KMEANS_DISTANCES");
        print_message("%s: %zu iterations, converged %d, %zu re-seeds, summed from %s\n", what, ahead->iterations,
                      ahead->converged, ahead->reseed_count, summed == 1 ? "the distances" : "the rows");
        /* The limit ends a run that has not settled; then the distances
         * wherever a register or screen kernel assigned the rows. */
        const int expected = !ahead->converged && d <= 32 ? 1 : 0;
        if (summed != expected)
            fail_msg("%s: the summing pass read %s", what, summed == 1 ? "the distances" : "the rows");
        assert_int_equal(summed_rows, 0);
        assert_true(cases[c].iterations > 100 ? ahead->converged : !ahead->converged);
        if (cases[c].far && ahead->reseed_count == 0)
            fail_msg("%s: no re-seeding", what);
        assert_consistent(ahead, data, what);
        assert_same_bits(rows, ahead);
        assert_same_bits(rows, traced);
        statgpu_kmeans_result_destroy(ahead);
        statgpu_kmeans_result_destroy(traced);
        statgpu_kmeans_result_destroy(rows);
        free(initial);
        free(data);
    }
}

/* The CUDA backend's centroid of a cluster, by its rule (kernels/kmeans.cu,
 * "exact sums"): each value x of variable v taken as the integer nearest
 * x 2^shift (ties to even), with shift = 127 - bits(n) - E and 2^E above the
 * variable's largest |x| (0 for a variable of zeros); the cluster's integers
 * summed exactly (128 bits here), the sum rounded once to a double, divided
 * by the size and times 2^-shift. */
__extension__ typedef __int128 exact_int;

static double exact_centroid(const double *column, size_t n, const int32_t *labels, int32_t j)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; ++i)
        largest = fmax(largest, fabs(column[i]));
    int n_bits = 0;
    for (size_t m = n; m != 0; m >>= 1)
        ++n_bits;
    const int shift = largest > 0.0 ? 127 - n_bits - (ilogb(largest) + 1) : 0;
    exact_int sum = 0;
    size_t size = 0;
    for (size_t i = 0; i < n; ++i)
        if (labels[i] == j) {
            sum += (exact_int)nearbyint(scalbn(column[i], shift));
            ++size;
        }
    return scalbn((double)sum / (double)size, -shift);
}

/* The centroids are the exact means by that rule, bit for bit: the
 * assignments add and take away only the rows that change cluster, and any
 * row missed or counted twice would show. Variables of every scale (1e150,
 * 1e-150, values 2^-70 below the largest, which the rule rounds, zeros, a
 * constant), through each assignment kernel (the screen, the difference
 * form alone, the generic kernel beyond 32 variables) and through
 * re-seeding (all but one starting centroid far away). */
static void test_centroids_are_exact_means(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    const struct {
        size_t n, d, k;
        const char *screen;  /* STATGPU_CUDA_KMEANS_SCREEN, or NULL */
        int far;             /* all but the first starting centroid far away: re-seeds */
        size_t pad;          /* the leading dimension n + pad, the pad NaN (never read) */
    } cases[] = {
        { 50000, 6, 40, NULL, 0, 0 }, { 50000, 6, 40, "0", 0, 0 }, { 30000, 16, 36, NULL, 1, 0 },
        { 20000, 40, 12, NULL, 0, 0 }, { 40000, 9, 5, NULL, 1, 0 },
        /* Over the 4 MB a copy takes in chunks: the ranges for the powers of
         * two are taken from each chunk as it arrives, a column at a time
         * where the leading dimension is not n. */
        { 120000, 6, 40, NULL, 0, 0 }, { 120000, 6, 40, NULL, 0, 5 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        size_t n = cases[c].n, d = cases[c].d, k = cases[c].k;
        /* Far apart blobs where the re-seeds are: fewer iterations to the fixed point. */
        double *data = make_blobs(n, d, k / 2 + 1, cases[c].far ? 8.0 : 2.0, 0.0, 1100 + c);
        for (size_t i = 0; i < n; ++i) {
            data[i + n * 1] *= 1e150;
            data[i + n * 2] *= 1e-150;
            data[i + n * 3] = 0.0;
            data[i + n * 4] = 3.0;
            if (i % 3 == 0)
                data[i + n * 5] = ldexp(data[i + n * 5], -70);
        }
        double *initial = pick_rows(data, n, d, k, 1150 + c);
        if (cases[c].far)
            for (size_t j = 1; j < k; ++j)
                for (size_t v = 0; v < d; ++v)
                    initial[j + k * v] = (v == 1 ? 1e152 : 100.0) + (double)j;
        statgpu_kmeans_params params = given_start(initial, 3000);
        char what[112];
        snprintf(what, sizeof what, "exact means n=%zu d=%zu k=%zu screen=%s far=%d pad=%zu", n, d, k,
                 cases[c].screen ? cases[c].screen : "default", cases[c].far, cases[c].pad);
        if (cases[c].screen != NULL)
            setenv("STATGPU_CUDA_KMEANS_SCREEN", cases[c].screen, 1);
        const size_t ld = n + cases[c].pad;
        double *padded = malloc(ld * d * sizeof *padded);
        assert_non_null(padded);
        for (size_t v = 0; v < d; ++v)
            for (size_t i = 0; i < ld; ++i)
                padded[i + ld * v] = i < n ? data[i + n * v] : NAN;
        statgpu_kmeans_result *result = NULL;
        const statgpu_status status = statgpu_kmeans(g_cuda, padded, n, d, ld, k, &params, &result);
        if (status != STATGPU_OK)
            fail_msg("%s: %s (%s)", what, statgpu_status_string(status), statgpu_context_last_error(g_cuda));
        assert_ran_on(g_cuda, STATGPU_BACKEND_CUDA);
        free(padded);
        unsetenv("STATGPU_CUDA_KMEANS_SCREEN");
        print_message("%s: %zu iterations, %zu re-seeds\n", what, result->iterations, result->reseed_count);
        if (!result->converged)
            fail_msg("%s: did not converge in %zu iterations", what, result->iterations);
        if (cases[c].far && result->reseed_count == 0)
            fail_msg("%s: no re-seeding", what);
        for (size_t j = 0; j < k; ++j) {
            size_t size = 0;
            for (size_t i = 0; i < n; ++i)
                size += result->labels[i] == (int32_t)j;
            assert_int_equal(result->cluster_sizes[j], size);
            for (size_t v = 0; v < d; ++v) {
                const double expected = exact_centroid(data + n * v, n, result->labels, (int32_t)j);
                if (memcmp(&expected, &result->centroids[j + k * v], sizeof expected) != 0)
                    fail_msg("%s: centroid %zu, variable %zu: %.17g, the exact mean %.17g", what, j, v,
                             result->centroids[j + k * v], expected);
            }
        }
        statgpu_kmeans_result_destroy(result);
        free(initial);
        free(data);
    }
}

static void test_empty_clusters_are_reseeded(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    const shape shapes[] = { { 3000, 2, 6 }, { 5000, 16, 20 }, { 800, 40, 5 } };
    for (size_t s = 0; s < 3; ++s) {
        size_t n = shapes[s].n, d = shapes[s].d, k = shapes[s].k;
        double *data = make_blobs(n, d, 4, 3.0, 0.0, 500 + s);
        double *initial = pick_rows(data, n, d, k, 600 + s);
        for (size_t j = 1; j < k; ++j)  /* all but one centroid far away: they empty */
            for (size_t v = 0; v < d; ++v)
                initial[j + k * v] = 100.0 + (double)j;
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.init = STATGPU_KMEANS_INIT_GIVEN;
        params.initial_centroids = initial;
        params.tolerance = 0.0;
        reference_fit expected = reference_lloyd(data, n, d, k, initial, params.max_iterations, 0.0);
        statgpu_kmeans_result *gpu = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
        char what[96];
        snprintf(what, sizeof what, "re-seeding n=%zu d=%zu k=%zu", n, d, k);
        assert_true(expected.reseeds >= k - 1);
        assert_consistent(gpu, data, what);
        if (expected.min_gap > TIE_GAP) {
            int32_t *labels = malloc(n * sizeof *labels);
            for (size_t i = 0; i < n; ++i)
                labels[i] = expected.labels[i];
            assert_same_fit(gpu, labels, expected.sizes, expected.centroids, expected.inertia, expected.iterations,
                            expected.converged, expected.reseeds, largest_magnitude(data, n * d), what);
            free(labels);
        } else {
            assert_true(gpu->reseed_count >= k - 1);
        }
        for (size_t j = 0; j < k; ++j)
            assert_true(gpu->cluster_sizes[j] > 0);
        reference_free(&expected);
        statgpu_kmeans_result_destroy(gpu);
        free(initial);
        free(data);
    }
}

static void test_fewer_distinct_rows_than_k(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    size_t n = 600, d = 2, k = 5;
    double *data = malloc(n * d * sizeof *data);
    for (size_t i = 0; i < n; ++i) {
        data[i] = (double)(i % 3);
        data[i + n] = -(double)(i % 3);
    }
    double initial[10] = { 0, 1, 2, 50, 60, 0, -1, -2, 50, 60 };
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = STATGPU_KMEANS_INIT_GIVEN;
    params.initial_centroids = initial;
    statgpu_kmeans_result *result = NULL;
    assert_int_equal(statgpu_kmeans(g_cuda, data, n, d, n, k, &params, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(result);
    assert_non_null(strstr(statgpu_context_last_error(g_cuda), "distinct"));
    free(data);
}

typedef struct progress_log {
    size_t calls, cancel_at;
} progress_log;

static int count_and_cancel(void *user_data, double fraction)
{
    (void)fraction;
    progress_log *log = user_data;
    return ++log->calls == log->cancel_at;
}

static void test_progress_and_cancellation(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    size_t n = 5000, d = 3, k = 8;
    double *data = make_blobs(n, d, 8, 0.8, 0.0, 700);
    double *initial = pick_rows(data, n, d, k, 701);
    progress_log log = { 0, 0 };
    statgpu_context_params context_params;
    statgpu_context_params_init(&context_params);
    context_params.backend = STATGPU_BACKEND_CUDA;
    context_params.progress = count_and_cancel;
    context_params.progress_user_data = &log;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&context_params, &context), STATGPU_OK);
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = STATGPU_KMEANS_INIT_GIVEN;
    params.initial_centroids = initial;
    params.tolerance = 0.0;
    statgpu_kmeans_result *result = fit(context, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
    assert_int_equal(log.calls, result->iterations);  /* once per iteration */
    assert_true(result->iterations > 3);
    statgpu_kmeans_result_destroy(result);

    log = (progress_log){ 0, 3 };
    assert_int_equal(statgpu_kmeans(context, data, n, d, n, k, &params, &result), STATGPU_ERROR_CANCELLED);
    assert_null(result);
    assert_int_equal(log.calls, 3);
    statgpu_context_destroy(context);
    free(initial);
    free(data);
}

static void test_backend_report_and_auto(void **state)
{
    (void)state;
    SKIP_WITHOUT_CUDA();
    size_t n = 100000, d = 16, k = 4;  /* n d k = 6.4e6: AUTO takes the GPU */
    double *data = make_blobs(n, d, k, 3.0, 0.0, 800);
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.restart_count = 1;
    statgpu_kmeans_result *result = fit(g_cuda, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(g_cuda, &report), STATGPU_OK);
    assert_string_equal(report.note, "");
    assert_true(report.last_transfer_seconds > 0.0);
    assert_true(report.last_compute_seconds > 0.0);
    print_message("n=%zu d=%zu k=%zu: %zu iterations, transfer %.3f ms, compute %.3f ms\n", n, d, k,
                  result->iterations, report.last_transfer_seconds * 1e3, report.last_compute_seconds * 1e3);
    statgpu_kmeans_result_destroy(result);

    statgpu_context *automatic = make_context(STATGPU_BACKEND_AUTO, 0);
    result = fit(automatic, STATGPU_BACKEND_CUDA, data, n, d, k, &params);
    statgpu_kmeans_result_destroy(result);
    double *small = make_blobs(100, d, k, 3.0, 0.0, 801);  /* n d k = 6400: the CPU, and the note says why */
    result = fit(automatic, STATGPU_BACKEND_CPU, small, 100, d, k, &params);
    statgpu_kmeans_result_destroy(result);
    assert_int_equal(statgpu_context_backend_report(automatic, &report), STATGPU_OK);
    assert_non_null(strstr(report.note, "AUTO chose the CPU"));
    char text[512];
    assert_int_equal(statgpu_backend_describe(&report, text, sizeof text), STATGPU_OK);
    assert_non_null(strstr(text, "the last call ran on the CPU: AUTO chose the CPU"));
    statgpu_context_destroy(automatic);
    free(small);
    free(data);
}

/* ---------------------------------------------------------------- main */

static int setup(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CUDA;
    if (statgpu_context_create(&params, &g_cuda) != STATGPU_OK)
        return -1;
    params.backend = STATGPU_BACKEND_CPU;
    if (statgpu_context_create(&params, &g_cpu) != STATGPU_OK)
        return -1;
    statgpu_backend_report report;
    statgpu_context_backend_report(g_cuda, &report);
    if (!report.cuda_available)
        snprintf(g_skip_reason, sizeof g_skip_reason, "no usable CUDA backend: %s", report.note);
    else
        printf("# backend cuda: %s (runtime %d, driver %d)\n", report.device_name, report.cuda_runtime_version,
               report.cuda_driver_version);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    statgpu_context_destroy(g_cuda);
    statgpu_context_destroy(g_cpu);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_given_centroids_match_brute_force_and_cpu),
        cmocka_unit_test(test_plus_plus_matches_cpu),
        cmocka_unit_test(test_two_runs_same_bits),
        cmocka_unit_test(test_screen_matches_difference_form),
        cmocka_unit_test(test_bounds_settle_rows_at_any_scale),
        cmocka_unit_test(test_summing_pass_reads_distances),
        cmocka_unit_test(test_centroids_are_exact_means),
        cmocka_unit_test(test_empty_clusters_are_reseeded),
        cmocka_unit_test(test_fewer_distinct_rows_than_k),
        cmocka_unit_test(test_progress_and_cancellation),
        cmocka_unit_test(test_backend_report_and_auto),
    };
    int failures = cmocka_run_group_tests_name("kmeans[cuda]", tests, setup, teardown);
    return test_exit_code(failures, g_skip_reason);
}
