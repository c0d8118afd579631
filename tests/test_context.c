/*
 * test_context.c: the engine's context, version, status texts and backend
 * report. Run a second time by ctest with STATGPU_CUDA_MODULE pointing at a
 * file that does not exist, to check that asking for CUDA without its module
 * runs on the CPU and says so.
 */
#define _GNU_SOURCE  /* mkdtemp, setenv */
#include <locale.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "statgpu.h"

static void test_version_matches_header(void **state)
{
    (void)state;
    assert_int_equal(statgpu_version_number(), STATGPU_VERSION_NUMBER);
    assert_string_equal(statgpu_version_string(), STATGPU_VERSION_STRING);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", STATGPU_VERSION_MAJOR, STATGPU_VERSION_MINOR,
             STATGPU_VERSION_PATCH);
    assert_string_equal(statgpu_version_string(), expected);
}

static void test_status_strings(void **state)
{
    (void)state;
    assert_string_equal(statgpu_status_string(STATGPU_OK), "success");
    assert_string_equal(statgpu_status_string(STATGPU_ERROR_INVALID_ARGUMENT), "invalid argument");
    assert_string_equal(statgpu_status_string(STATGPU_ERROR_NAN_IN_DATA), "the data contain NaN");
    /* Pinned values: the add-in and saved programs rely on them. */
    assert_int_equal(STATGPU_ERROR_INVALID_ARGUMENT, 1);
    assert_int_equal(STATGPU_ERROR_EMPTY_INPUT, 2);
    assert_int_equal(STATGPU_ERROR_NAN_IN_DATA, 3);
    assert_int_equal(STATGPU_ERROR_OUT_OF_MEMORY, 4);
    assert_int_equal(STATGPU_ERROR_NO_CONVERGENCE, 5);
    assert_int_equal(STATGPU_ERROR_CANCELLED, 6);
    assert_int_equal(STATGPU_ERROR_BACKEND, 7);
    assert_int_equal(STATGPU_ERROR_INTERNAL, 8);
    for (int code = 0; code <= 8; ++code)
        assert_string_not_equal(statgpu_status_string((statgpu_status)code), "unknown status");
    assert_string_equal(statgpu_status_string((statgpu_status)999), "unknown status");
    assert_string_equal(statgpu_backend_name(STATGPU_BACKEND_CUDA), "cuda");
    assert_string_equal(statgpu_backend_name(STATGPU_BACKEND_CPU), "cpu");
    assert_string_equal(statgpu_backend_name(STATGPU_BACKEND_AUTO), "auto");
}

static void test_params_defaults(void **state)
{
    (void)state;
    statgpu_context_params params;
    memset(&params, 0xAB, sizeof params);
    statgpu_context_params_init(&params);
    assert_int_equal(params.struct_bytes, sizeof params);
    assert_int_equal(params.backend, STATGPU_BACKEND_AUTO);
    assert_int_equal(params.device, 0);
    assert_int_equal(params.thread_count, 0);
    assert_null(params.progress);
    statgpu_context_params_init(NULL);  /* harmless */
}

static void test_create_and_destroy(void **state)
{
    (void)state;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(NULL, &context), STATGPU_OK);
    assert_non_null(context);
    assert_string_equal(statgpu_context_last_error(context), "");
    statgpu_context_destroy(context);
    statgpu_context_destroy(NULL);  /* a no-op */

    assert_int_equal(statgpu_context_create(NULL, NULL), STATGPU_ERROR_INVALID_ARGUMENT);

    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = (statgpu_backend)7;
    context = (statgpu_context *)&params;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(context);

    statgpu_context_params_init(&params);
    params.thread_count = -1;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_context_params_init(&params);
    params.struct_bytes = 3;  /* not a params struct of any version */
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_string_equal(statgpu_context_last_error(NULL), "no context");
}

/* The thread policy: a bound that no request passes (5,000 threads ended the
 * host process, 100,000 crashed it in libgomp), and a default that respects
 * OMP_NUM_THREADS and the CPU affinity. ctest
 * runs this test again under OMP_NUM_THREADS=3 and under taskset -c 0, with
 * STATGPU_TEST_DEFAULT_THREADS naming the count the default must be. */
static void test_thread_policy(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context *context = NULL;
    int refused[3] = { STATGPU_MAX_THREAD_COUNT + 1, 5000, 100000 };
    for (int j = 0; j < 3; ++j) {
        statgpu_context_params_init(&params);
        params.thread_count = refused[j];
        assert_int_equal(statgpu_context_create(&params, &context), STATGPU_ERROR_INVALID_ARGUMENT);
        assert_null(context);
    }
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    params.thread_count = STATGPU_MAX_THREAD_COUNT;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    double data[5] = { 3, 1, 4, 1, 5 }, median = 0.0;
    assert_int_equal(statgpu_median(context, data, 5, &median), STATGPU_OK);
    assert_true(median == 3.0);
    statgpu_context_destroy(context);

    params.thread_count = 0;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    assert_true(report.cpu_thread_count >= 1 && report.cpu_thread_count <= STATGPU_MAX_THREAD_COUNT);
    const char *expected = getenv("STATGPU_TEST_DEFAULT_THREADS");
    if (expected != NULL) {
        printf("# default threads %d, expected %s\n", report.cpu_thread_count, expected);
        assert_int_equal(report.cpu_thread_count, atoi(expected));
    }
    statgpu_context_destroy(context);
}

static void test_last_error_is_cleared_by_success(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    double data[3] = { 3, 1, 2 }, result = 0;
    assert_int_equal(statgpu_kth_smallest(context, data, 3, 4, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(context), "k = 4"));
    assert_int_equal(statgpu_kth_smallest(context, data, 3, 3, &result), STATGPU_OK);
    assert_string_equal(statgpu_context_last_error(context), "");
    statgpu_context_destroy(context);
}

/* A locale whose decimal separator is a comma, as the office's process has
 * under a German desktop: the installed one, else one compiled into a
 * temporary folder by localedef (package locales); NULL where neither can
 * be had. */
static const char *comma_locale(void)
{
    static const char *names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (setlocale(LC_NUMERIC, names[i]) != NULL)
            return names[i];
    char folder[] = "/tmp/statgpu-locale-XXXXXX";
    if (mkdtemp(folder) == NULL)
        return NULL;
    char command[256];
    snprintf(command, sizeof command, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", folder);
    if (system(command) == -1)
        return NULL;
    setenv("LOCPATH", folder, 1);
    const bool made = setlocale(LC_NUMERIC, "de_DE.UTF-8") != NULL;
    /* Loaded: the folder can go. */
    snprintf(command, sizeof command, "rm -rf %s", folder);
    if (system(command) == -1)
        print_message("could not remove %s\n", folder);
    return made ? "de_DE.UTF-8" : NULL;
}

/* Messages write numbers with '.' whatever the process's locale (inside the
 * office it is the desktop's): "1.5 lies outside [0, 1]", not "1,5". */
static void test_messages_in_any_locale(void **state)
{
    (void)state;
    const char *name = comma_locale();
    if (name == NULL) {
        print_message("no locale with a decimal comma could be made (localedef, package locales)\n");
        skip();
    }
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 1.5);
    assert_string_equal(probe, "1,5");  /* the process's locale is one of commas */
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    double data[3] = { 3, 1, 2 }, result = 0;
    assert_int_equal(statgpu_quantile(context, data, 3, 1.5, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    const char *message = statgpu_context_last_error(context);
    setlocale(LC_NUMERIC, "C");
    assert_non_null(strstr(message, "1.5 lies outside [0, 1]"));
    statgpu_context_destroy(context);
}

static void test_cpu_report(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    params.thread_count = 3;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    assert_int_equal(report.requested, STATGPU_BACKEND_CPU);
    assert_int_equal(report.last_used, STATGPU_BACKEND_AUTO);  /* nothing ran yet */
    assert_int_equal(report.cpu_thread_count, 3);
    assert_int_equal(report.cuda_available, 0);

    double data[4] = { 4, 3, 2, 1 }, result = 0;
    assert_int_equal(statgpu_median(context, data, 4, &result), STATGPU_OK);
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    assert_int_equal(report.last_used, STATGPU_BACKEND_CPU);
    assert_int_equal(statgpu_context_backend_report(context, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_context_backend_report(NULL, &report), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_context_destroy(context);
}

/* Without a usable CUDA backend (no module, no driver or no device), a context
 * that asks for CUDA still computes, on the CPU, and its report says why. On a
 * machine where CUDA works this checks the opposite: the call ran on CUDA. */
static void test_cuda_request_reports_backend(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CUDA;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);

    double data[5] = { 5, -1, 3, 2, 4 }, result = 0;
    assert_int_equal(statgpu_median(context, data, 5, &result), STATGPU_OK);
    assert_true(result == 3.0);

    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    assert_int_equal(report.requested, STATGPU_BACKEND_CUDA);
    const char *expect = getenv("STATGPU_EXPECT_CUDA");
    if (report.cuda_available) {
        assert_int_equal(report.last_used, STATGPU_BACKEND_CUDA);
        assert_true(report.device_name[0] != '\0');
        assert_true(report.cuda_runtime_version > 0);
        char text[512];
        statgpu_backend_describe(&report, text, sizeof text);
        printf("# GPUINFO would show: %s\n", text);
    } else {
        assert_true(expect == NULL || strcmp(expect, "1") != 0);
        assert_int_equal(report.last_used, STATGPU_BACKEND_CPU);
        assert_true(report.note[0] != '\0');
        assert_non_null(strstr(report.note, "ran on the CPU"));
        printf("# no CUDA: %s\n", report.note);
    }
    if (expect != NULL && strcmp(expect, "0") == 0)
        assert_false(report.cuda_available);
    statgpu_context_destroy(context);
}

static int cancel_always(void *user_data, double fraction_done)
{
    (void)fraction_done;
    ++*(int *)user_data;
    return 1;
}

static void test_describe_report(void **state)
{
    (void)state;
    statgpu_backend_report report;
    memset(&report, 0, sizeof report);
    report.requested = STATGPU_BACKEND_AUTO;
    report.cuda_available = 1;
    report.cuda_runtime_version = 13000;
    report.cuda_driver_version = 13020;
    report.cpu_thread_count = 16;
    snprintf(report.device_name, sizeof report.device_name, "NVIDIA H100 80GB HBM3");
    char text[256];
    assert_int_equal(statgpu_backend_describe(&report, text, sizeof text), STATGPU_OK);
    assert_string_equal(text, "CUDA: NVIDIA H100 80GB HBM3 (runtime 13.0, driver 13.2)");

    report.last_used = STATGPU_BACKEND_CPU;
    snprintf(report.note, sizeof report.note, "CUDA failed (out of memory); ran on the CPU");
    assert_int_equal(statgpu_backend_describe(&report, text, sizeof text), STATGPU_OK);
    assert_string_equal(text, "CUDA: NVIDIA H100 80GB HBM3 (runtime 13.0, driver 13.2); the last call ran on the "
                              "CPU: CUDA failed (out of memory); ran on the CPU");

    report.cuda_available = 0;
    snprintf(report.note, sizeof report.note, "no CUDA driver");
    assert_int_equal(statgpu_backend_describe(&report, text, sizeof text), STATGPU_OK);
    assert_string_equal(text, "CPU: 16 threads (CUDA not available: no CUDA driver)");
    report.requested = STATGPU_BACKEND_CPU;
    assert_int_equal(statgpu_backend_describe(&report, text, sizeof text), STATGPU_OK);
    assert_string_equal(text, "CPU: 16 threads (CPU backend requested)");

    char tiny[8];
    assert_int_equal(statgpu_backend_describe(&report, tiny, sizeof tiny), STATGPU_OK);
    assert_string_equal(tiny, "CPU: 16");  /* truncated, still terminated */
    assert_int_equal(statgpu_backend_describe(NULL, text, sizeof text), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_backend_describe(&report, NULL, 8), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_backend_describe(&report, text, 0), STATGPU_ERROR_INVALID_ARGUMENT);
}

static void test_progress_can_cancel(void **state)
{
    (void)state;
    int calls = 0;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    params.progress = cancel_always;
    params.progress_user_data = &calls;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    double data[3] = { 1, 2, 3 }, result = -1;
    assert_int_equal(statgpu_median(context, data, 3, &result), STATGPU_ERROR_CANCELLED);
    assert_true(calls >= 1);
    statgpu_context_destroy(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_matches_header),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_params_defaults),
        cmocka_unit_test(test_create_and_destroy),
        cmocka_unit_test(test_last_error_is_cleared_by_success),
        cmocka_unit_test(test_messages_in_any_locale),
        cmocka_unit_test(test_cpu_report),
        cmocka_unit_test(test_thread_policy),
        cmocka_unit_test(test_cuda_request_reports_backend),
        cmocka_unit_test(test_describe_report),
        cmocka_unit_test(test_progress_can_cancel),
    };
    return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
