/*
 * test_lts_csteps_cuda.c: the CUDA module's C-step primitive (lts_csteps,
 * cuda_module.h) against a brute-force reference on the CPU: every squared
 * residual, a full sort by (value, row), the first h rows.
 *
 * The reference forms each residual as the module does, r = y, then
 * r = fma(-x_v, b_v, r) over the coefficients in order, and r^2 rounded
 * once; the h-th smallest squared residual must therefore be the same bits.
 * The sums (objective, cross products) are compared to a long double sum
 * within 1e-12 of the sum of magnitudes; on integer data every sum is exact
 * and must be the same bits, which checks which tied rows were taken.
 *
 * argv[1] is the module. Without a usable GPU the test exits 77 (skipped),
 * unless STATGPU_EXPECT_CUDA=1 says a GPU must be there.
 */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cuda_module.h"
#include "test_support.h"

static const statgpu_cuda_module_i *g_module;
static statgpu_cuda_state *g_state;

typedef struct problem {
    size_t n, p, m, h;
    double *x, *y, *coef;
} problem;

typedef struct reference {
    double *kth, *objective, *gram, *xty;
} reference;

static double residual_squared(const problem *pr, size_t i, const double *b)
{
    double r = pr->y[i];
    for (size_t v = 0; v < pr->p; ++v)
        r = fma(-pr->x[i + pr->n * v], b[v], r);
    return r * r;
}

typedef struct keyed { double key; size_t row; } keyed;

static int keyed_compare(const void *a, const void *b)
{
    const keyed *ka = a, *kb = b;
    if (ka->key != kb->key)
        return ka->key < kb->key ? -1 : 1;
    return ka->row < kb->row ? -1 : ka->row > kb->row;
}

static reference reference_csteps(const problem *pr)
{
    const size_t n = pr->n, p = pr->p, m = pr->m, h = pr->h;
    reference ref = {malloc(m * sizeof(double)), malloc(m * sizeof(double)), malloc(m * p * p * sizeof(double)),
                     malloc(m * p * sizeof(double))};
    keyed *order = malloc(n * sizeof *order);
    long double *g = malloc(p * p * sizeof *g), *c = malloc(p * sizeof *c);
    for (size_t j = 0; j < m; ++j) {
        const double *b = pr->coef + j * p;
        for (size_t i = 0; i < n; ++i)
            order[i] = (keyed){residual_squared(pr, i, b), i};
        qsort(order, n, sizeof *order, keyed_compare);
        ref.kth[j] = order[h - 1].key;
        long double objective = 0.0L;
        memset(g, 0, p * p * sizeof *g);
        memset(c, 0, p * sizeof *c);
        for (size_t t = 0; t < h; ++t) {
            const size_t i = order[t].row;
            objective += order[t].key;
            for (size_t a = 0; a < p; ++a) {
                c[a] += (long double)pr->x[i + n * a] * pr->y[i];
                for (size_t bb = 0; bb < p; ++bb)
                    g[a + p * bb] += (long double)pr->x[i + n * a] * pr->x[i + n * bb];
            }
        }
        ref.objective[j] = (double)objective;
        for (size_t e = 0; e < p * p; ++e)
            ref.gram[j * p * p + e] = (double)g[e];
        for (size_t a = 0; a < p; ++a)
            ref.xty[j * p + a] = (double)c[a];
    }
    free(order);
    free(g);
    free(c);
    return ref;
}

static void reference_free(reference *ref)
{
    free(ref->kth);
    free(ref->objective);
    free(ref->gram);
    free(ref->xty);
}

/* Magnitude scales of the sums, for the tolerance: sum over the h-subset of
 * |terms| is at most the sum over all rows. */
static void check_close(double got, double want, double scale, const char *what, size_t j)
{
    const double tolerance = 1e-12 * (scale > 0.0 ? scale : 1.0);
    if (!(fabs(got - want) <= tolerance))
        fail_msg("%s of vector %zu: GPU %.17g, reference %.17g (tolerance %.3g)", what, j, got, want, tolerance);
}

static void run_problem(const problem *pr, int exact_sums)
{
    const size_t n = pr->n, p = pr->p, m = pr->m;
    statgpu_cuda_lts_session *session = NULL;
    char msg[256] = "";
    statgpu_cuda_status status = g_module->lts->begin(g_state, pr->x, n, p, n, pr->y, &session, NULL, msg, sizeof msg);
    if (status != STATGPU_CUDA_OK)
        fail_msg("lts_begin: %s", msg);
    double *kth = malloc(m * sizeof(double)), *objective = malloc(m * sizeof(double));
    double *gram = malloc(m * p * p * sizeof(double)), *xty = malloc(m * p * sizeof(double));
    status = g_module->lts->csteps(session, pr->h, pr->coef, m, kth, objective, gram, xty, NULL, msg, sizeof msg);
    if (status != STATGPU_CUDA_OK)
        fail_msg("lts_csteps: %s", msg);

    /* Only the threshold, as least median of squares asks. */
    double *kth_only = malloc(m * sizeof(double));
    status = g_module->lts->csteps(session, pr->h, pr->coef, m, kth_only, NULL, NULL, NULL, NULL, msg, sizeof msg);
    if (status != STATGPU_CUDA_OK)
        fail_msg("lts_csteps (threshold only): %s", msg);

    /* Twice the same call: the same bits. */
    double *objective_again = malloc(m * sizeof(double)), *gram_again = malloc(m * p * p * sizeof(double));
    status = g_module->lts->csteps(session, pr->h, pr->coef, m, NULL, objective_again, gram_again, NULL, NULL, msg,
                                  sizeof msg);
    if (status != STATGPU_CUDA_OK)
        fail_msg("lts_csteps (again): %s", msg);

    reference ref = reference_csteps(pr);
    double x_scale = 0.0, y_scale = 0.0;
    for (size_t e = 0; e < n * p; ++e)
        x_scale = fmax(x_scale, fabs(pr->x[e]));
    for (size_t i = 0; i < n; ++i)
        y_scale = fmax(y_scale, fabs(pr->y[i]));
    for (size_t j = 0; j < m; ++j) {
        if (!test_same_bits(kth[j], ref.kth[j]) || !test_same_bits(kth_only[j], ref.kth[j]))
            fail_msg("h-th squared residual of vector %zu: GPU %.17g / %.17g, reference %.17g", j, kth[j],
                     kth_only[j], ref.kth[j]);
        if (!test_same_bits(objective[j], objective_again[j]))
            fail_msg("vector %zu: two calls gave objectives %.17g and %.17g", j, objective[j], objective_again[j]);
        if (memcmp(gram + j * p * p, gram_again + j * p * p, p * p * sizeof(double)) != 0)
            fail_msg("vector %zu: two calls gave different cross products", j);
        if (exact_sums) {
            if (!test_same_bits(objective[j], ref.objective[j]))
                fail_msg("objective of vector %zu: GPU %.17g, exact %.17g", j, objective[j], ref.objective[j]);
            for (size_t e = 0; e < p * p; ++e)
                if (!test_same_bits(gram[j * p * p + e], ref.gram[j * p * p + e]))
                    fail_msg("X'X[%zu] of vector %zu: GPU %.17g, exact %.17g", e, j, gram[j * p * p + e],
                             ref.gram[j * p * p + e]);
            for (size_t a = 0; a < p; ++a)
                if (!test_same_bits(xty[j * p + a], ref.xty[j * p + a]))
                    fail_msg("X'y[%zu] of vector %zu: GPU %.17g, exact %.17g", a, j, xty[j * p + a],
                             ref.xty[j * p + a]);
        } else {
            check_close(objective[j], ref.objective[j], ref.objective[j] * 4.0, "objective", j);
            for (size_t e = 0; e < p * p; ++e)
                check_close(gram[j * p * p + e], ref.gram[j * p * p + e], (double)pr->h * x_scale * x_scale, "X'X",
                            j);
            for (size_t a = 0; a < p; ++a)
                check_close(xty[j * p + a], ref.xty[j * p + a], (double)pr->h * x_scale * y_scale, "X'y", j);
        }
    }
    reference_free(&ref);
    free(kth);
    free(kth_only);
    free(objective);
    free(objective_again);
    free(gram);
    free(gram_again);
    free(xty);
    g_module->lts->end(session);
}

/* y = x b_true + noise, with a share of gross outliers; an intercept column
 * of ones first; coefficient vectors near b_true. Integer data when
 * `integers` (then every sum is exact and ties are many). */
static problem make_problem(size_t n, size_t p, size_t m, uint64_t seed, int integers)
{
    problem pr = {n, p, m, (n + p + 1) / 2, malloc(n * p * sizeof(double)), malloc(n * sizeof(double)),
                  malloc(m * p * sizeof(double))};
    test_rng rng = {seed};
    for (size_t i = 0; i < n; ++i) {
        double fit = 0.0;
        for (size_t v = 0; v < p; ++v) {
            double value = v == 0 ? 1.0
                                  : (integers ? (double)(int)(test_rng_next(&rng) % 7) - 3.0 : test_rng_normal(&rng));
            pr.x[i + n * v] = value;
            fit += value * (double)(v + 1);
        }
        double noise = integers ? (double)(int)(test_rng_next(&rng) % 5) - 2.0 : test_rng_normal(&rng);
        if (test_rng_uniform(&rng) < 0.2)
            noise += integers ? 40.0 : 50.0 * test_rng_normal(&rng);
        pr.y[i] = fit + noise;
    }
    for (size_t j = 0; j < m; ++j)
        for (size_t v = 0; v < p; ++v)
            pr.coef[j * p + v] = integers ? (double)(v + 1) + (double)(int)(test_rng_next(&rng) % 3) - 1.0
                                          : (double)(v + 1) + 0.3 * test_rng_normal(&rng);
    return pr;
}

static void problem_free(problem *pr)
{
    free(pr->x);
    free(pr->y);
    free(pr->coef);
}

static void check_shape(size_t n, size_t p, size_t m, uint64_t seed, int integers)
{
    problem pr = make_problem(n, p, m, seed, integers);
    run_problem(&pr, integers);
    problem_free(&pr);
}

static void test_tiny(void **state)
{
    (void)state;
    check_shape(1, 1, 1, 1, 0);
    check_shape(37, 1, 3, 2, 0);
    check_shape(100, 4, 9, 3, 0);
}

static void test_small_all_rows_candidates(void **state)
{
    (void)state;
    check_shape(1000, 3, 7, 4, 0);
    check_shape(32768, 11, 40, 5, 0);
}

static void test_ties_on_integer_data(void **state)
{
    (void)state;
    check_shape(999, 3, 17, 6, 1);
    check_shape(50001, 4, 20, 7, 1);  /* the sampled bracket, thousands of ties at the threshold */
}

static void test_sampled_bracket(void **state)
{
    (void)state;
    check_shape(40000, 11, 40, 8, 0);
    check_shape(200003, 5, 33, 9, 0);
}

static void test_more_vectors_than_a_batch(void **state)
{
    (void)state;
    check_shape(5000, 3, 600, 10, 0);
}

static void test_many_coefficients(void **state)
{
    (void)state;
    check_shape(3000, 20, 5, 11, 0);    /* beyond the 16-register row */
    check_shape(50000, 40, 3, 12, 0);
    /* Every width of the cross products' tiles (16, 32, ... 80 products a
     * tile, 8, 16 and 32 vectors): p = 7, 9, 10 and the most, 64. */
    check_shape(5000, 7, 12, 14, 1);
    check_shape(70000, 9, 25, 15, 0);
    check_shape(9001, 10, 8, 16, 1);
    check_shape(4000, 64, 2, 17, 0);
}

/* More than h rows fit exactly: the threshold is 0, tied over most rows; the
 * bracket cannot serve and the exact fallback takes over. */
static void test_exact_fit_fallback(void **state)
{
    (void)state;
    const size_t n = 60000, p = 3, m = 4;
    problem pr = make_problem(n, p, m, 13, 1);
    for (size_t i = 0; i < n; ++i)
        if (i % 5 != 0)
            pr.y[i] = pr.x[i] * 1.0 + pr.x[i + n] * 2.0 + pr.x[i + 2 * n] * 3.0;
    for (size_t v = 0; v < p; ++v)
        pr.coef[v] = (double)(v + 1);  /* vector 0 is the exact fit */
    run_problem(&pr, 1);
    problem_free(&pr);
}

static int setup(void **state)
{
    (void)state;
    return 0;
}

int main(int argc, char **argv)
{
    const char *expect = getenv("STATGPU_EXPECT_CUDA");
    const int must_run = expect != NULL && strcmp(expect, "1") == 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s libstatgpu_cuda.so\n", argv[0]);
        return 2;
    }
    void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
        return must_run ? 1 : 77;
    }
    statgpu_cuda_module_init_fn init = (statgpu_cuda_module_init_fn)dlsym(handle, STATGPU_CUDA_MODULE_INIT_SYMBOL);
    g_module = init != NULL ? init(STATGPU_CUDA_MODULE_API_VERSION) : NULL;
    if (g_module == NULL) {
        fprintf(stderr, "the module does not offer API version %u\n", STATGPU_CUDA_MODULE_API_VERSION);
        return 1;
    }
    char msg[256] = "";
    statgpu_cuda_device_info info;
    const statgpu_cuda_status status = g_module->state_create(0, 1, &g_state, &info, msg, sizeof msg);
    if (status != STATGPU_CUDA_OK) {
        printf("SKIPPED: no usable CUDA device (%s)\n", msg);
        return must_run ? 1 : 77;
    }
    printf("# on %s\n", info.name);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_small_all_rows_candidates),
        cmocka_unit_test(test_ties_on_integer_data),
        cmocka_unit_test(test_sampled_bracket),
        cmocka_unit_test(test_more_vectors_than_a_batch),
        cmocka_unit_test(test_many_coefficients),
        cmocka_unit_test(test_exact_fit_fallback),
    };
    const int failed = cmocka_run_group_tests_name("lts_csteps_cuda", tests, setup, NULL);
    g_module->state_destroy(g_state);
    return failed;
}
