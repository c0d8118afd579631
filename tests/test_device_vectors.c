/*
 * test_device_vectors.c: order statistics of data already in GPU memory
 * (statgpu_vector with STATGPU_MEMORY_CUDA_DEVICE), float64 and float32, with
 * every selection method, against a sort on the host; NaN on the device; the
 * device data left unchanged; k-means and LTS on device matrices; AUTO's
 * measured choice for large host data. Part of the GPU tier: where no CUDA device is
 * usable every test is reported as skipped and the binary exits 77.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "statgpu.h"
#include "test_support.h"

static char g_skip_reason[256];

#define SKIP_WITHOUT_DEVICE() TEST_SKIP_IF(g_skip_reason)

static statgpu_context *make_context(statgpu_select_method method)
{
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CUDA;
    params.select_method = method;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    return context;
}

/* Copies host values of the given type to a new device buffer. */
static void *to_device(const void *host, size_t bytes)
{
    void *device = NULL;
    assert_int_equal(cudaMalloc(&device, bytes > 0 ? bytes : 1), cudaSuccess);
    assert_int_equal(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    return device;
}

static void check_device_vector(statgpu_context *context, const double *wide, size_t count,
                                statgpu_dtype dtype, const char *what)
{
    size_t element_bytes = dtype == STATGPU_DTYPE_FLOAT32 ? sizeof(float) : sizeof(double);
    void *host = malloc(count * element_bytes);
    double *exact = malloc(count * sizeof *exact);
    for (size_t i = 0; i < count; ++i) {
        if (dtype == STATGPU_DTYPE_FLOAT32) {
            ((float *)host)[i] = (float)wide[i];
            exact[i] = ((float *)host)[i];
        } else {
            ((double *)host)[i] = wide[i];
            exact[i] = wide[i];
        }
    }
    double *sorted = test_sorted_copy(exact, count);
    void *device = to_device(host, count * element_bytes);
    statgpu_vector vector = { device, count, dtype, STATGPU_MEMORY_CUDA_DEVICE };

    size_t ranks[5] = { 1, count, (count + 1) / 2, count / 2 + 1, count / 5 + 1 };
    double results[5];
    assert_int_equal(statgpu_vector_select(context, &vector, ranks, 5, results), STATGPU_OK);
    for (int j = 0; j < 5; ++j)
        if (!test_same_bits(results[j], sorted[ranks[j] - 1]))
            fail_msg("%s n=%zu k=%zu: got %.17g, expected %.17g (%s)", what, count, ranks[j], results[j],
                     sorted[ranks[j] - 1], statgpu_context_last_error(context));

    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    assert_int_equal(report.last_used, STATGPU_BACKEND_CUDA);
    assert_true(report.last_transfer_seconds == 0.0);  /* nothing to copy: the data were there */

    /* 101 percentiles agree with the same quantiles of the host data: the same
     * status (interpolating between -Inf and +Inf is an error on both) and,
     * when they succeed, the same bits. */
    double p[101], on_device[101], on_host[101];
    for (int j = 0; j <= 100; ++j)
        p[j] = j / 100.0;
    statgpu_status device_status = statgpu_vector_quantiles(context, &vector, p, 101, on_device);
    statgpu_vector host_vector = { host, count, dtype, STATGPU_MEMORY_HOST };
    statgpu_status host_status = statgpu_vector_quantiles(context, &host_vector, p, 101, on_host);
    if (device_status != host_status)
        fail_msg("%s n=%zu: percentiles status %d on the device, %d on the host", what, count,
                 (int)device_status, (int)host_status);
    for (int j = 0; j <= 100 && device_status == STATGPU_OK; ++j)
        if (!test_same_bits(on_device[j], on_host[j]))
            fail_msg("%s n=%zu p=%g: device %.17g, host %.17g", what, count, p[j], on_device[j], on_host[j]);

    /* The device data are untouched. */
    void *back = malloc(count * element_bytes);
    assert_int_equal(cudaMemcpy(back, device, count * element_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(back, host, count * element_bytes);
    free(back);
    cudaFree(device);
    free(sorted);
    free(exact);
    free(host);
}

static void test_device_data_every_method(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    const size_t sizes[] = { 1, 2, 3, 1000, 65537, 1000000, (1u << 24) + 3 };
    for (statgpu_select_method method = STATGPU_SELECT_AUTO; method <= STATGPU_SELECT_SORT; ++method) {
        statgpu_context *context = make_context(method);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
            size_t count = sizes[s];
            double *wide = malloc(count * sizeof *wide);
            for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
                if (count > 1000000 && pattern % 4 != 0)
                    continue;  /* the largest size on every fourth pattern keeps the run short */
                test_fill(wide, count, (test_pattern)pattern, 900 + s);
                char what[96];
                snprintf(what, sizeof what, "method %d, %s, float64", (int)method, test_pattern_names[pattern]);
                check_device_vector(context, wide, count, STATGPU_DTYPE_FLOAT64, what);
                snprintf(what, sizeof what, "method %d, %s, float32", (int)method, test_pattern_names[pattern]);
                check_device_vector(context, wide, count, STATGPU_DTYPE_FLOAT32, what);
            }
            free(wide);
        }
        statgpu_context_destroy(context);
    }
}

static void test_nan_on_the_device(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    statgpu_context *context = make_context(STATGPU_SELECT_AUTO);
    const size_t sizes[] = { 1, 7, 300000 };
    for (size_t s = 0; s < 3; ++s) {
        size_t count = sizes[s];
        double *data = malloc(count * sizeof *data);
        float *floats = malloc(count * sizeof *floats);
        test_fill(data, count, PATTERN_NORMAL, s);
        data[count / 2] = NAN;
        for (size_t i = 0; i < count; ++i)
            floats[i] = (float)data[i];
        void *device = to_device(data, count * sizeof *data);
        void *device_floats = to_device(floats, count * sizeof *floats);
        double result = 42.0;
        statgpu_vector vector = { device, count, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_CUDA_DEVICE };
        assert_int_equal(statgpu_vector_median(context, &vector, &result), STATGPU_ERROR_NAN_IN_DATA);
        statgpu_vector float_vector = { device_floats, count, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_CUDA_DEVICE };
        assert_int_equal(statgpu_vector_median(context, &float_vector, &result), STATGPU_ERROR_NAN_IN_DATA);
        assert_true(result == 42.0);
        cudaFree(device);
        cudaFree(device_floats);
        free(floats);
        free(data);
    }
    statgpu_context_destroy(context);
}

/* Host data on the CUDA backend report their copy to the device separately. */
static void test_host_data_report_transfer(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    statgpu_context *context = make_context(STATGPU_SELECT_AUTO);
    size_t count = 1u << 22;
    double *data = malloc(count * sizeof *data);
    test_fill(data, count, PATTERN_UNIFORM, 8);
    double median = 0;
    assert_int_equal(statgpu_median(context, data, count, &median), STATGPU_OK);
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    assert_int_equal(report.last_used, STATGPU_BACKEND_CUDA);
    assert_true(report.last_transfer_seconds > 0.0);
    assert_true(report.last_compute_seconds > 0.0);
    free(data);
    statgpu_context_destroy(context);
}

/* The backend and note of the context's last call. */
static statgpu_backend last_backend(statgpu_context *context, char *note, size_t note_bytes)
{
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    snprintf(note, note_bytes, "%s", report.note);
    return report.last_used;
}

/* Under AUTO, order statistics of 2^20 values or more of host data run on
 * the backend measured faster: after the call that sets CUDA up, CUDA and
 * the CPU in turn, three calls each (each such CPU call says so in the
 * note), then
 * whichever took less, the other now and then; each power of two, element
 * type and rank count (one or two, more) measured on its own; every result
 * exact. A context with a select method of its own keeps to CUDA. */
static void test_auto_measures_large_host_data(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_AUTO;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    const size_t count = ((size_t)1 << 22) + 3;
    double *data = malloc(count * sizeof *data);
    float *narrow = malloc(count * sizeof *narrow);
    test_fill(data, count, PATTERN_NORMAL, 31);
    for (size_t i = 0; i < count; ++i)
        narrow[i] = (float)data[i];
    double *sorted = test_sorted_copy(data, count);
    const double expected = sorted[count / 2];
    char note[256];

    const statgpu_backend warm_up[] = { STATGPU_BACKEND_CUDA, STATGPU_BACKEND_CUDA, STATGPU_BACKEND_CPU,
                                        STATGPU_BACKEND_CUDA, STATGPU_BACKEND_CPU,  STATGPU_BACKEND_CUDA,
                                        STATGPU_BACKEND_CPU };
    for (size_t call = 0; call < sizeof warm_up / sizeof *warm_up; ++call) {
        double median = 0;
        assert_int_equal(statgpu_median(context, data, count, &median), STATGPU_OK);
        assert_true(test_same_bits(median, expected));
        statgpu_backend used = last_backend(context, note, sizeof note);
        if (used != warm_up[call])
            fail_msg("call %zu ran on %s: %s", call, statgpu_backend_name(used), note);
        if (used == STATGPU_BACKEND_CPU && strstr(note, "AUTO tried the CPU") == NULL)
            fail_msg("call %zu: the note says %s", call, note);
    }
    int on_cpu = 0, on_cuda = 0;
    for (int call = 0; call < 40; ++call) {
        double median = 0;
        assert_int_equal(statgpu_median(context, data, count, &median), STATGPU_OK);
        assert_true(test_same_bits(median, expected));
        if (last_backend(context, note, sizeof note) == STATGPU_BACKEND_CPU) {
            ++on_cpu;
            if (strncmp(note, "AUTO chose the CPU", 18) != 0 && strncmp(note, "AUTO tried the CPU", 18) != 0)
                fail_msg("a call on the CPU says: %s", note);
        } else {
            ++on_cuda;
        }
    }
    print_message("after the warm-up: %d calls on the CPU, %d on CUDA\n", on_cpu, on_cuda);

    /* float32 data of the same count: a class of their own, CUDA first. */
    statgpu_vector vector = { narrow, count, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
    size_t rank = count / 2 + 1;
    double value = 0;
    assert_int_equal(statgpu_vector_select(context, &vector, &rank, 1, &value), STATGPU_OK);
    assert_int_equal(last_backend(context, note, sizeof note), STATGPU_BACKEND_CUDA);
    assert_true(test_same_bits(value, (double)(float)expected));
    assert_int_equal(statgpu_vector_select(context, &vector, &rank, 1, &value), STATGPU_OK);
    assert_int_equal(last_backend(context, note, sizeof note), STATGPU_BACKEND_CPU);
    assert_true(test_same_bits(value, (double)(float)expected));

    /* Three ranks of the same doubles: a class of their own too. */
    statgpu_vector wide = { data, count, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    size_t three[3] = { 1, count / 2 + 1, count };
    const statgpu_backend three_first[] = { STATGPU_BACKEND_CUDA, STATGPU_BACKEND_CPU };
    for (int call = 0; call < 2; ++call) {
        double values[3];
        assert_int_equal(statgpu_vector_select(context, &wide, three, 3, values), STATGPU_OK);
        assert_int_equal(last_backend(context, note, sizeof note), three_first[call]);
        for (int j = 0; j < 3; ++j)
            assert_true(test_same_bits(values[j], sorted[three[j] - 1]));
    }
    statgpu_context_destroy(context);

    params.select_method = STATGPU_SELECT_RADIX;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    for (int call = 0; call < 4; ++call) {
        double median = 0;
        assert_int_equal(statgpu_median(context, data, count, &median), STATGPU_OK);
        assert_true(test_same_bits(median, expected));
        assert_int_equal(last_backend(context, note, sizeof note), STATGPU_BACKEND_CUDA);
    }
    statgpu_context_destroy(context);
    free(sorted);
    free(narrow);
    free(data);
}

/* Matrices in device memory (statgpu_matrix): k-means and LTS on float64
 * and float32 device data, with a leading dimension, give the bits of the
 * same calls on the same values in host memory; a context that asks for the
 * CPU refuses device data with STATGPU_ERROR_BACKEND. */
static void test_device_matrices(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    statgpu_context *context = make_context(STATGPU_SELECT_AUTO);
    enum { n = 4000, d = 3, ld = 4003, k = 5 };
    test_rng rng = { 19 };
    double *host = malloc(ld * d * sizeof *host);
    float *narrow = malloc(ld * d * sizeof *narrow);
    for (size_t c = 0; c < (size_t)ld * d; ++c) {
        host[c] = 3.0 * (double)(c % k) + test_rng_normal(&rng);
        narrow[c] = (float)host[c];
    }
    for (int as_float = 0; as_float < 2; ++as_float) {
        size_t bytes = (size_t)ld * d * (as_float ? sizeof(float) : sizeof(double));
        const void *values = as_float ? (const void *)narrow : (const void *)host;
        void *device = to_device(values, bytes);
        statgpu_dtype dtype = as_float ? STATGPU_DTYPE_FLOAT32 : STATGPU_DTYPE_FLOAT64;
        statgpu_matrix on_host = { values, n, d, ld, dtype, STATGPU_MEMORY_HOST };
        statgpu_matrix on_device = { device, n, d, ld, dtype, STATGPU_MEMORY_CUDA_DEVICE };

        statgpu_kmeans_result *a = NULL, *b = NULL;
        assert_int_equal(statgpu_kmeans_matrix(context, &on_host, k, NULL, &a), STATGPU_OK);
        assert_int_equal(statgpu_kmeans_matrix(context, &on_device, k, NULL, &b), STATGPU_OK);
        assert_memory_equal(a->labels, b->labels, n * sizeof *a->labels);
        assert_memory_equal(a->centroids, b->centroids, k * d * sizeof *a->centroids);
        assert_true(test_same_bits(a->inertia, b->inertia));
        statgpu_kmeans_result_destroy(a);
        statgpu_kmeans_result_destroy(b);

        /* LTS of column 0 on columns 1 and 2, from the same device buffer. */
        statgpu_vector y_host = { values, n, dtype, STATGPU_MEMORY_HOST };
        statgpu_vector y_device = { device, n, dtype, STATGPU_MEMORY_CUDA_DEVICE };
        size_t item = as_float ? sizeof(float) : sizeof(double);
        statgpu_matrix x_host = { (const char *)values + ld * item, n, d - 1, ld, dtype, STATGPU_MEMORY_HOST };
        statgpu_matrix x_device = { (const char *)device + ld * item, n, d - 1, ld, dtype,
                                    STATGPU_MEMORY_CUDA_DEVICE };
        statgpu_lts_result *c = NULL, *e = NULL;
        assert_int_equal(statgpu_lts_matrix(context, &y_host, &x_host, NULL, &c), STATGPU_OK);
        assert_int_equal(statgpu_lts_matrix(context, &y_device, &x_device, NULL, &e), STATGPU_OK);
        assert_memory_equal(c->coefficients, e->coefficients, c->p * sizeof *c->coefficients);
        assert_memory_equal(c->weights, e->weights, n * sizeof *c->weights);
        statgpu_lts_result_destroy(c);
        statgpu_lts_result_destroy(e);

        /* A Gaussian mixture of the same buffer: the host matrix's bits. */
        statgpu_gmm_result *f = NULL, *g = NULL;
        assert_int_equal(statgpu_gmm_matrix(context, &on_host, k, NULL, &f), STATGPU_OK);
        assert_int_equal(statgpu_gmm_matrix(context, &on_device, k, NULL, &g), STATGPU_OK);
        assert_memory_equal(f->means, g->means, k * d * sizeof *f->means);
        assert_memory_equal(f->labels, g->labels, n * sizeof *f->labels);
        assert_true(test_same_bits(f->log_likelihood, g->log_likelihood));
        statgpu_gmm_result_destroy(f);
        statgpu_gmm_result_destroy(g);
        assert_int_equal(cudaFree(device), cudaSuccess);
    }
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    statgpu_context *cpu = NULL;
    assert_int_equal(statgpu_context_create(&params, &cpu), STATGPU_OK);
    void *device = to_device(host, (size_t)ld * d * sizeof(double));
    statgpu_matrix on_device = { device, n, d, ld, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_CUDA_DEVICE };
    statgpu_kmeans_result *none = NULL;
    assert_int_equal(statgpu_kmeans_matrix(cpu, &on_device, k, NULL, &none), STATGPU_ERROR_BACKEND);
    assert_null(none);
    assert_int_equal(cudaFree(device), cudaSuccess);
    statgpu_context_destroy(cpu);
    statgpu_context_destroy(context);
    free(host);
    free(narrow);
}

static int setup(void **state)
{
    (void)state;
    int devices = 0;
    cudaError_t error = cudaGetDeviceCount(&devices);
    if (error != cudaSuccess || devices == 0) {
        snprintf(g_skip_reason, sizeof g_skip_reason, "no CUDA device (%s)",
                 error != cudaSuccess ? cudaGetErrorString(error) : "none found");
        return 0;
    }
    statgpu_context *context = make_context(STATGPU_SELECT_AUTO);
    statgpu_backend_report report;
    statgpu_context_backend_report(context, &report);
    if (!report.cuda_available)
        snprintf(g_skip_reason, sizeof g_skip_reason, "no usable CUDA backend: %s", report.note);
    statgpu_context_destroy(context);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_data_every_method),
        cmocka_unit_test(test_nan_on_the_device),
        cmocka_unit_test(test_host_data_report_transfer),
        cmocka_unit_test(test_auto_measures_large_host_data),
        cmocka_unit_test(test_device_matrices),
    };
    int failures = cmocka_run_group_tests_name("device_vectors[cuda]", tests, setup, NULL);
    return test_exit_code(failures, g_skip_reason);
}
