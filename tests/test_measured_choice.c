/*
 * test_measured_choice.c: AUTO's choice between the CPU and CUDA by
 * measurement (backend/measured_choice.c, compiled in): the first calls
 * measure CUDA and the CPU in turn, three on each (the first on each not
 * counted); then the faster by the median of each backend's last five
 * calls runs, and the slower again at the period that keeps the retries
 * under 3% of the time; two slow calls do not turn the choice, three do;
 * zero, infinite and NaN timings still choose.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend/measured_choice.h"

/* Runs the choice's calls, each taking the given seconds a unit on its
 * backend, and counts where they ran and how many were tries. */
static void run_calls(sg_measured_choice *choice, int calls, double cpu_seconds, double cuda_seconds,
                      int *on_cpu, int *on_cuda, int *tries)
{
    *on_cpu = *on_cuda = *tries = 0;
    for (int call = 0; call < calls; ++call) {
        bool trying = false;
        statgpu_backend backend = sg_measured_choose(choice, &trying);
        *tries += trying;
        if (backend == STATGPU_BACKEND_CPU)
            ++*on_cpu;
        else
            ++*on_cuda;
        sg_measured_record(choice, backend, (backend == STATGPU_BACKEND_CPU ? cpu_seconds : cuda_seconds) * 1e6,
                           1e6);
    }
}

/* A class past its measuring calls, measured at the given seconds a unit. */
static void measured_class(sg_measured_choice *choice, double cpu_seconds, double cuda_seconds)
{
    int on_cpu, on_cuda, tries;
    memset(choice, 0, sizeof *choice);
    run_calls(choice, 2 * SG_MEASURED_TRIES, cpu_seconds, cuda_seconds, &on_cpu, &on_cuda, &tries);
    assert_int_equal(tries, 2 * SG_MEASURED_TRIES);
    assert_int_equal(on_cpu, SG_MEASURED_TRIES);
}

static void test_first_calls_measure_both(void **state)
{
    (void)state;
    sg_measured_choice choice;
    memset(&choice, 0, sizeof choice);
    const statgpu_backend expected[] = { STATGPU_BACKEND_CUDA, STATGPU_BACKEND_CPU, STATGPU_BACKEND_CUDA,
                                         STATGPU_BACKEND_CPU,  STATGPU_BACKEND_CUDA, STATGPU_BACKEND_CPU };
    /* CUDA's first call, paying for its allocations, takes 100 times as
     * long: not counted, CUDA is the faster after it. */
    const double seconds[] = { 100.0, 2.0, 1.0, 2.0, 1.0, 2.0 };
    for (int call = 0; call < 6; ++call) {
        bool trying = false;
        assert_int_equal(sg_measured_choose(&choice, &trying), expected[call]);
        assert_true(trying);
        sg_measured_record(&choice, expected[call], seconds[call], 1.0);
    }
    assert_int_equal(choice.measured[0], 3);
    assert_int_equal(choice.measured[1], 3);
    assert_int_equal(choice.kept[0], 2);
    assert_int_equal(choice.kept[1], 2);
    assert_true(sg_measured_estimate(&choice, STATGPU_BACKEND_CUDA) == 1.0);
    assert_true(sg_measured_estimate(&choice, STATGPU_BACKEND_CPU) == 2.0);
    bool trying = true;
    assert_int_equal(sg_measured_choose(&choice, &trying), STATGPU_BACKEND_CUDA);
    assert_false(trying);
}

/* 1.2 times as long: the slower every 16th call; 4 times: every 100th (3
 * more a retry, 30 in 1000 calls: 3%). */
static void test_retry_periods(void **state)
{
    (void)state;
    const struct { double cpu, cuda; int calls, on_slower; } cases[] = {
        { 1.2e-9, 1e-9, 160, 10 }, { 1e-9, 4e-9, 1000, 10 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        sg_measured_choice choice;
        int on_cpu, on_cuda, tries;
        measured_class(&choice, cases[i].cpu, cases[i].cuda);
        run_calls(&choice, cases[i].calls, cases[i].cpu, cases[i].cuda, &on_cpu, &on_cuda, &tries);
        assert_int_equal(cases[i].cpu > cases[i].cuda ? on_cpu : on_cuda, cases[i].on_slower);
        assert_int_equal(tries, cases[i].on_slower);
    }
}

/* Two slow calls on the chosen backend are not enough to leave it; a
 * backend that stays slow for three calls is left at the next. */
static void test_choice_follows_the_measurements(void **state)
{
    (void)state;
    sg_measured_choice choice;
    int on_cpu, on_cuda, tries;
    measured_class(&choice, 2e-9, 1e-9);
    run_calls(&choice, 10, 2e-9, 1e-9, &on_cpu, &on_cuda, &tries);
    assert_int_equal(on_cuda, 10);
    run_calls(&choice, 2, 2e-9, 3e-9, &on_cpu, &on_cuda, &tries);  /* CUDA takes 3 twice: kept 1, 1, 1, 3, 3 */
    assert_int_equal(on_cuda, 2);
    bool trying = true;
    assert_int_equal(sg_measured_choose(&choice, &trying), STATGPU_BACKEND_CUDA);
    assert_false(trying);
    sg_measured_record(&choice, STATGPU_BACKEND_CUDA, 3e-3, 1e6);  /* and again: kept 1, 1, 3, 3, 3 */
    trying = true;
    assert_int_equal(sg_measured_choose(&choice, &trying), STATGPU_BACKEND_CPU);
    assert_false(trying);
}

/* A backend's estimate: none before a counted call, then the median of the
 * last five or fewer (the mean of the middle two of an even count; NaN
 * counted as the largest). */
static void test_estimate_is_the_median_of_the_last_five(void **state)
{
    (void)state;
    sg_measured_choice choice;
    memset(&choice, 0, sizeof choice);
    assert_true(isnan(sg_measured_estimate(&choice, STATGPU_BACKEND_CPU)));
    const struct { double seconds, estimate; } calls[] = {
        { 50.0, NAN },  /* the first call: not counted */
        { 4.0, 4.0 }, { 2.0, 3.0 }, { 9.0, 4.0 }, { 1.0, 3.0 }, { NAN, 4.0 }, /* 4, 2, 9, 1, NaN */
        { 5.0, 5.0 }, { 0.0, 5.0 }, { 0.5, 1.0 },                                /* 5, 0, 0.5, 1, NaN */
    };
    for (size_t i = 0; i < sizeof calls / sizeof *calls; ++i) {
        sg_measured_record(&choice, STATGPU_BACKEND_CPU, calls[i].seconds, 1.0);
        const double estimate = sg_measured_estimate(&choice, STATGPU_BACKEND_CPU);
        if (isnan(calls[i].estimate) ? !isnan(estimate) : estimate != calls[i].estimate)
            fail_msg("after call %zu the estimate is %g, not %g", i, estimate, calls[i].estimate);
    }
    assert_true(isnan(sg_measured_estimate(&choice, STATGPU_BACKEND_CUDA)));
}

static void test_odd_timings_still_choose(void **state)
{
    (void)state;
    const double odd[][2] = { { 0.0, 0.0 }, { 0.0, 1e-9 }, { 1e-9, 0.0 }, { INFINITY, 1e-9 }, { NAN, 1e-9 },
                              { NAN, NAN } };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; ++i) {
        sg_measured_choice choice;
        int on_cpu, on_cuda, tries;
        measured_class(&choice, odd[i][0], odd[i][1]);
        run_calls(&choice, 200, odd[i][0], odd[i][1], &on_cpu, &on_cuda, &tries);
        assert_int_equal(on_cpu + on_cuda, 200);
        assert_true(tries <= 200 / (int)SG_MEASURED_RETRY_MIN_CALLS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_calls_measure_both),
        cmocka_unit_test(test_retry_periods),
        cmocka_unit_test(test_choice_follows_the_measurements),
        cmocka_unit_test(test_estimate_is_the_median_of_the_last_five),
        cmocka_unit_test(test_odd_timings_still_choose),
    };
    return cmocka_run_group_tests_name("measured_choice", tests, NULL, NULL);
}
