/*
 * lts_cpu.c: the C-step primitive of least trimmed squares on the CPU
 * (contract in internal.h): for each coefficient vector, the residuals of
 * every row, the h-th smallest squared residual, the h-subset it defines and
 * that subset's cross products X_H^T X_H and X_H^T y.
 *
 * Determinism: every sum runs over fixed blocks of SG_LTS_BLOCK_ROWS rows,
 * in row order inside a block and in block order across blocks, whether the
 * threads share out the coefficient vectors (many vectors, few rows: the
 * starts) or the blocks of one vector (few vectors, many rows: the final
 * iterations). The result is the same bits at any thread count.
 */
#include "internal.h"
#include "core/pool.h"
#include "core/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows summed together; also the unit of work of the row-parallel mode. */
#define SG_LTS_BLOCK_ROWS ((size_t)4096)

/* Below this many rows the threads share out the vectors, each evaluated
 * by one thread; from here on they share out the blocks of each vector. */
#define SG_LTS_ROW_PARALLEL_MIN_ROWS ((size_t)65536)

/* ------------------------------------------------------------- selection */

/* The k-th smallest (0-based) of values[0 .. count-1], which it reorders.
 * The values are squared residuals: non-negative, possibly +Inf, never NaN;
 * for them the order of doubles is the order of their bit patterns, so
 * comparisons are exact. Quickselect with a median-of-three pivot and a
 * three-way partition, insertion sort for short ranges. */
static double sg_select_in_place(double *values, size_t count, size_t k)
{
    size_t low = 0, high = count - 1;
    unsigned rounds = 0;
    while (high > low) {
        if (high - low < 16) {
            for (size_t i = low + 1; i <= high; ++i) {
                double value = values[i];
                size_t j = i;
                while (j > low && values[j - 1] > value) {
                    values[j] = values[j - 1];
                    --j;
                }
                values[j] = value;
            }
            return values[k];
        }
        size_t middle = low + (high - low) / 2;
        /* After many poor splits (an adversarial order), pivots from
         * scrambled positions keep the expected cost linear. */
        if (++rounds > 32) {
            uint64_t z = (uint64_t)rounds * 0x9E3779B97F4A7C15ull;
            z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
            middle = low + (size_t)((z ^ (z >> 29)) % (uint64_t)(high - low + 1));
        }
        double a = values[low], b = values[middle], c = values[high];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        /* Three-way partition: < pivot | == pivot | > pivot. Ties (many equal
         * residuals, as on an exact fit) then cost no extra rounds. */
        size_t lt = low, i = low, gt = high;
        while (i <= gt) {
            double value = values[i];
            if (value < pivot) {
                values[i] = values[lt];
                values[lt] = value;
                ++lt;
                ++i;
            } else if (value > pivot) {
                values[i] = values[gt];
                values[gt] = value;
                if (gt == 0)
                    break;
                --gt;
            } else {
                ++i;
            }
        }
        if (k < lt)
            high = lt - 1;
        else if (k > gt)
            low = gt + 1;
        else
            return pivot;
    }
    return values[k];
}

/* ------------------------------------------------------ per-block kernels */

/* Squared residuals of rows [begin, end) for the vector coef. */
static void sg_block_residuals(const sg_lts_problem *problem, const double *coef, size_t begin, size_t end,
                               double *squared /* indexed by row */)
{
    const double *x = problem->x, *y = problem->y;
    size_t n = problem->n, p = problem->p;
    for (size_t i = begin; i < end; ++i)
        squared[i] = y[i];
    for (size_t v = 0; v < p; ++v) {
        const double *column = x + n * v;
        double c = coef[v];
        for (size_t i = begin; i < end; ++i)
            squared[i] -= column[i] * c;
    }
    for (size_t i = begin; i < end; ++i)
        squared[i] *= squared[i];
}

/* How many rows of [begin, end) lie below kth and how many equal it. */
static void sg_block_counts(const double *squared, size_t begin, size_t end, double kth, size_t *below,
                            size_t *equal)
{
    size_t b = 0, e = 0;
    for (size_t i = begin; i < end; ++i) {
        b += squared[i] < kth;
        e += squared[i] == kth;
    }
    *below = b;
    *equal = e;
}

/* A dot product in a fixed order: four interleaved partial sums, combined
 * the same way every time. */
static double sg_dot(const double *a, const double *b, size_t count)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < count; ++i)
        s0 += a[i] * b[i];
    return (s0 + s2) + (s1 + s3);
}

/* The h-subset's rows of one block and their sums. equal_quota is how many
 * rows equal to kth this block may still take (in row order). gather holds
 * SG_LTS_BLOCK_ROWS x (p + 1) doubles. Writes the block's objective, and,
 * where asked, the upper triangle of its gram (p x p) and its xty (p). */
static void sg_block_sums(const sg_lts_problem *problem, const double *squared, size_t begin, size_t end,
                          double kth, size_t equal_quota, double *gather, bool want_cross, double *objective,
                          double *gram, double *xty)
{
    size_t n = problem->n, p = problem->p;
    size_t rows[SG_LTS_BLOCK_ROWS];
    size_t taken = 0;
    double sum = 0.0;
    for (size_t i = begin; i < end; ++i) {
        double value = squared[i];
        bool in = value < kth;
        if (!in && value == kth && equal_quota > 0) {
            in = true;
            --equal_quota;
        }
        if (in) {
            rows[taken++] = i;
            sum += value;
        }
    }
    *objective = sum;
    if (!want_cross)
        return;
    /* Gathered column by column so that every product below is a
     * contiguous dot product. */
    for (size_t v = 0; v < p; ++v) {
        const double *column = problem->x + n * v;
        double *target = gather + SG_LTS_BLOCK_ROWS * v;
        for (size_t r = 0; r < taken; ++r)
            target[r] = column[rows[r]];
    }
    double *gathered_y = gather + SG_LTS_BLOCK_ROWS * p;
    for (size_t r = 0; r < taken; ++r)
        gathered_y[r] = problem->y[rows[r]];
    for (size_t a = 0; a < p; ++a) {
        const double *column_a = gather + SG_LTS_BLOCK_ROWS * a;
        for (size_t b = a; b < p; ++b)
            gram[a + p * b] = sg_dot(column_a, gather + SG_LTS_BLOCK_ROWS * b, taken);
        xty[a] = sg_dot(column_a, gathered_y, taken);
    }
}

/* ------------------------------------------------------------ one vector */

typedef struct sg_lts_outputs {
    double *kth, *objective, *gram, *xty;
} sg_lts_outputs;

/* Adds the blocks' sums in block order and writes vector j's outputs.
 * block_sums holds, per block, 1 + p*p + p doubles: objective, gram (upper
 * triangle used), xty. */
static void sg_combine_blocks(size_t p, size_t block_count, const double *block_sums, bool want_cross,
                              double kth, size_t j, const sg_lts_outputs *out)
{
    size_t stride = 1 + p * p + p;
    double objective = 0.0;
    for (size_t b = 0; b < block_count; ++b)
        objective += block_sums[stride * b];
    if (out->kth)
        out->kth[j] = kth;
    if (out->objective)
        out->objective[j] = objective;
    if (!want_cross)
        return;
    double *gram = out->gram ? out->gram + p * p * j : NULL;
    double *xty = out->xty ? out->xty + p * j : NULL;
    for (size_t a = 0; a < p; ++a) {
        for (size_t c = a; c < p; ++c) {
            double sum = 0.0;
            for (size_t b = 0; b < block_count; ++b)
                sum += block_sums[stride * b + 1 + a + p * c];
            if (gram) {
                gram[a + p * c] = sum;
                gram[c + p * a] = sum;
            }
        }
        if (xty) {
            double sum = 0.0;
            for (size_t b = 0; b < block_count; ++b)
                sum += block_sums[stride * b + 1 + p * p + a];
            xty[a] = sum;
        }
    }
}

/* Vector j evaluated by the calling thread alone. */
static void sg_one_vector_serial(const sg_lts_problem *problem, size_t h, const double *coef, double *squared,
                                 double *scratch, double *gather, double *block_sums, size_t *block_equal,
                                 bool want_cross, size_t j, const sg_lts_outputs *out)
{
    size_t n = problem->n, p = problem->p;
    size_t block_count = (n + SG_LTS_BLOCK_ROWS - 1) / SG_LTS_BLOCK_ROWS;
    sg_block_residuals(problem, coef, 0, n, squared);
    memcpy(scratch, squared, n * sizeof *scratch);
    double kth = sg_select_in_place(scratch, n, h - 1);
    size_t below_total = 0;
    for (size_t b = 0; b < block_count; ++b) {
        size_t begin = b * SG_LTS_BLOCK_ROWS, end = begin + SG_LTS_BLOCK_ROWS < n ? begin + SG_LTS_BLOCK_ROWS : n;
        size_t below, equal;
        sg_block_counts(squared, begin, end, kth, &below, &equal);
        below_total += below;
        block_equal[b] = equal;
    }
    size_t quota = h - below_total;
    size_t stride = 1 + p * p + p;
    for (size_t b = 0; b < block_count; ++b) {
        size_t begin = b * SG_LTS_BLOCK_ROWS, end = begin + SG_LTS_BLOCK_ROWS < n ? begin + SG_LTS_BLOCK_ROWS : n;
        size_t take = block_equal[b] < quota ? block_equal[b] : quota;
        double *sums = block_sums + stride * b;
        sg_block_sums(problem, squared, begin, end, kth, take, gather, want_cross, &sums[0], &sums[1],
                      &sums[1 + p * p]);
        quota -= take;
    }
    sg_combine_blocks(p, block_count, block_sums, want_cross, kth, j, out);
}

/* Many vectors, few rows: each thread evaluates whole vectors in its own scratch. */
typedef struct sg_vector_pass {
    const sg_lts_problem *problem;
    size_t                h;
    const double         *coef;          /* m x p */
    bool                  want_cross;
    const sg_lts_outputs *out;
    double               *scratch;       /* team x scratch_doubles */
    size_t                scratch_doubles;
} sg_vector_pass;

static void sg_vector_serial(void *context, size_t j, int slot)
{
    const sg_vector_pass *pass = context;
    size_t n = pass->problem->n, p = pass->problem->p;
    size_t block_count = (n + SG_LTS_BLOCK_ROWS - 1) / SG_LTS_BLOCK_ROWS;
    double *squared = pass->scratch + (size_t)slot * pass->scratch_doubles;
    double *scratch = squared + n;
    double *gather = scratch + n;
    double *block_sums = gather + (pass->want_cross ? SG_LTS_BLOCK_ROWS * (p + 1) : 0);
    size_t *block_equal = (size_t *)(block_sums + block_count * (1 + p * p + p));
    sg_one_vector_serial(pass->problem, pass->h, pass->coef + p * j, squared, scratch,
                         pass->want_cross ? gather : NULL, block_sums, block_equal, pass->want_cross, j, pass->out);
}

/* Few vectors, many rows: the threads share the blocks of one vector. */
typedef struct sg_row_pass {
    const sg_lts_problem *problem;
    const double         *coef;          /* the vector */
    double               *squared;       /* n */
    double                value;         /* its h-th smallest squared residual */
    size_t               *block_below, *block_equal;
    double               *block_sums;
    double               *gathers;       /* per thread, when want_cross */
    bool                  want_cross;
} sg_row_pass;

static void sg_block_rows(const sg_row_pass *pass, size_t b, size_t *begin, size_t *end)
{
    size_t n = pass->problem->n;
    *begin = b * SG_LTS_BLOCK_ROWS;
    *end = *begin + SG_LTS_BLOCK_ROWS < n ? *begin + SG_LTS_BLOCK_ROWS : n;
}

static void sg_residual_rows(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_row_pass *pass = context;
    size_t begin, end;
    sg_block_rows(pass, b, &begin, &end);
    sg_block_residuals(pass->problem, pass->coef, begin, end, pass->squared);
}

static void sg_count_rows(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_row_pass *pass = context;
    size_t begin, end;
    sg_block_rows(pass, b, &begin, &end);
    sg_block_counts(pass->squared, begin, end, pass->value, &pass->block_below[b], &pass->block_equal[b]);
}

static void sg_sum_rows_block(void *context, size_t b, int slot)
{
    const sg_row_pass *pass = context;
    size_t p = pass->problem->p, begin, end;
    sg_block_rows(pass, b, &begin, &end);
    double *gather = pass->want_cross ? pass->gathers + (size_t)slot * SG_LTS_BLOCK_ROWS * (p + 1) : NULL;
    double *sums = pass->block_sums + (1 + p * p + p) * b;
    sg_block_sums(pass->problem, pass->squared, begin, end, pass->value, pass->block_equal[b], gather,
                  pass->want_cross, &sums[0], &sums[1], &sums[1 + p * p]);
}

/* ------------------------------------------------------------- the entry */

statgpu_status sg_cpu_lts_csteps(const sg_lts_problem *problem, size_t h, const double *coef, size_t m,
                                 double *kth, double *objective, double *gram, double *xty)
{
    size_t n = problem->n, p = problem->p;
    if (m == 0)
        return STATGPU_OK;
    if (h < 1 || h > n)
        return STATGPU_ERROR_INTERNAL;
    int threads = problem->thread_count > 0 ? problem->thread_count : 1;
    size_t block_count = (n + SG_LTS_BLOCK_ROWS - 1) / SG_LTS_BLOCK_ROWS;
    size_t stride = 1 + p * p + p;
    bool want_cross = gram != NULL || xty != NULL;
    sg_lts_outputs out = { kth, objective, gram, xty };
    statgpu_status status = STATGPU_OK;

    if (n < SG_LTS_ROW_PARALLEL_MIN_ROWS) {
        /* One coefficient vector per thread, each about 2 n p operations. */
        int team = sg_threads_for(threads, m, 2.0 * (double)m * (double)n * (double)p);
        sg_vector_pass pass = { problem, h, coef, want_cross, &out, NULL, 0 };
        /* Per thread: squared and a copy to select in (n each), the gathered
         * rows, the blocks' sums, the blocks' counts of ties. */
        pass.scratch_doubles = 2 * n + (want_cross ? SG_LTS_BLOCK_ROWS * (p + 1) : 0) + block_count * stride
                               + block_count;
        pass.scratch = malloc((size_t)team * pass.scratch_doubles * sizeof(double));
        if (pass.scratch == NULL)
            return STATGPU_ERROR_OUT_OF_MEMORY;
        sg_parallel_for(team, m, sg_vector_serial, &pass);
        free(pass.scratch);
        return status;
    }

    /* Many rows: the threads share the blocks of each vector. */
    threads = sg_threads_for(threads, block_count, 2.0 * (double)n * (double)p);
    double *squared = malloc(n * sizeof *squared);
    double *block_sums = malloc(block_count * stride * sizeof *block_sums);
    size_t *block_below = malloc(block_count * sizeof *block_below);
    size_t *block_equal = malloc(block_count * sizeof *block_equal);
    double *gathers = want_cross ? malloc((size_t)threads * SG_LTS_BLOCK_ROWS * (p + 1) * sizeof *gathers) : NULL;
    if (!squared || !block_sums || !block_below || !block_equal || (want_cross && !gathers)) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    sg_row_pass rows = { problem, NULL, squared, 0.0, block_below, block_equal, block_sums, gathers, want_cross };
    for (size_t j = 0; j < m && status == STATGPU_OK; ++j) {
        const double *c = coef + p * j;
        rows.coef = c;
        sg_parallel_for(threads, block_count, sg_residual_rows, &rows);
        double value;
        status = sg_cpu_select_ranks(squared, STATGPU_DTYPE_FLOAT64, n, &h, 1, STATGPU_SELECT_AUTO, &value,
                                     threads);
        if (status != STATGPU_OK)
            break;
        rows.value = value;
        sg_parallel_for(threads, block_count, sg_count_rows, &rows);
        size_t below_total = 0;
        for (size_t b = 0; b < block_count; ++b)
            below_total += block_below[b];
        /* Rows equal to the h-th value go in row order: block b may take
         * what the blocks before it left of the quota. */
        size_t quota = h - below_total;
        for (size_t b = 0; b < block_count; ++b) {
            size_t take = block_equal[b] < quota ? block_equal[b] : quota;
            quota -= take;
            block_equal[b] = take;
        }
        sg_parallel_for(threads, block_count, sg_sum_rows_block, &rows);
        sg_combine_blocks(p, block_count, block_sums, want_cross, value, j, &out);
    }
done:
    free(squared);
    free(block_sums);
    free(block_below);
    free(block_equal);
    free(gathers);
    return status;
}
