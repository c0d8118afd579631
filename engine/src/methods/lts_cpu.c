/*
 * lts_cpu.c: least trimmed squares' passes over the rows on the CPU
 * (contracts in lts.h). The C-step primitive: for each coefficient vector,
 * the residuals of every row, the h-th smallest squared residual, the
 * h-subset it defines and that subset's cross products X_H^T X_H and
 * X_H^T y. And the passes lts.c runs around the C-steps on either backend:
 * the finiteness check, the standardisation, residuals, trimmed sums and
 * weights.
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

/* ============================================ the passes around the C-steps */

/* Rows per block of the passes below: sums add their blocks in block order. */
#define SG_LTS_PASS_ROWS ((size_t)65536)

static size_t sg_pass_blocks(size_t n)
{
    return (n + SG_LTS_PASS_ROWS - 1) / SG_LTS_PASS_ROWS;
}

static void sg_pass_rows(size_t n, size_t b, size_t *begin, size_t *end)
{
    *begin = b * SG_LTS_PASS_ROWS;
    *end = *begin + SG_LTS_PASS_ROWS < n ? *begin + SG_LTS_PASS_ROWS : n;
}

/* The team for a pass of `operations_per_row` over n rows. */
static int sg_pass_team(int thread_count, size_t n, double operations_per_row)
{
    return sg_threads_for(thread_count > 0 ? thread_count : 1, sg_pass_blocks(n), (double)n * operations_per_row);
}

/* -------------------------------------------------------- standardisation */

static inline double sg_window_value(const double *source, size_t i, bool absolute, double centre)
{
    return absolute ? fabs(source[i] - centre) : source[i];
}

/* One pass for the median: a sample's order statistics bound a window of
 * keys around the middle ranks; the values inside it are copied to scratch
 * (branch-free: every value is written, the count moves only for those
 * inside) and counted below it. About three times fewer passes over the
 * column than selecting over all of it, which reads it several times and
 * writes the deviations first (10^6 rows x 11 columns on 16 threads:
 * 75 ms for the whole standardisation on the H100 machine's host, bound by
 * its memory). */
statgpu_status sg_lts_median_window(const double *source, size_t n, bool absolute, double centre, size_t sample_count,
                                    double *scratch, double *median, double *low, double *high)
{
    size_t rank = (n + 1) / 2, last = n % 2 ? rank : rank + 1;  /* the middle ranks, 1-based */
    uint64_t key_low = 0, key_high = UINT64_MAX;
    if (sample_count >= 2 && n >= 4 * sample_count) {
        uint64_t *sample = malloc(sample_count * sizeof *sample);
        if (sample == NULL)
            return STATGPU_ERROR_OUT_OF_MEMORY;
        for (size_t j = 0; j < sample_count; ++j) {
            size_t row = (size_t)(((uint64_t)j * n + n / 2) / sample_count);
            sample[j] = sg_key_from_double(sg_window_value(source, row, absolute, centre));
        }
        qsort(sample, sample_count, sizeof *sample, sg_compare_keys);
        /* Four standard deviations of a sample quantile's position, and a
         * few places more, either side. */
        double m = (double)sample_count, q = (double)rank / (double)n;
        double margin = 4.0 * sqrt(m * q * (1.0 - q)) + 4.0;
        double first = q * m - margin, end = (double)last / (double)n * m + margin;
        if (first >= 1.0)
            key_low = sample[(size_t)first];
        if (end < m - 1.0)
            key_high = sample[(size_t)end + 1];
        free(sample);
    }
    size_t below = 0, inside = 0;
    double lows[4], highs[4];
    for (int lane = 0; lane < 4; ++lane)
        lows[lane] = highs[lane] = sg_window_value(source, 0, absolute, centre);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int lane = 0; lane < 4; ++lane) {
            double value = sg_window_value(source, i + (size_t)lane, absolute, centre);
            uint64_t key = sg_key_from_double(value);
            lows[lane] = value < lows[lane] ? value : lows[lane];
            highs[lane] = value > highs[lane] ? value : highs[lane];
            below += key < key_low;
            scratch[inside] = value;
            inside += key >= key_low && key <= key_high;
        }
    for (; i < n; ++i) {
        double value = sg_window_value(source, i, absolute, centre);
        uint64_t key = sg_key_from_double(value);
        lows[0] = value < lows[0] ? value : lows[0];
        highs[0] = value > highs[0] ? value : highs[0];
        below += key < key_low;
        scratch[inside] = value;
        inside += key >= key_low && key <= key_high;
    }
    for (int lane = 1; lane < 4; ++lane) {
        lows[0] = lows[lane] < lows[0] ? lows[lane] : lows[0];
        highs[0] = highs[lane] > highs[0] ? highs[lane] : highs[0];
    }
    if (low != NULL)
        *low = lows[0];
    if (high != NULL)
        *high = highs[0];
    size_t ranks[2] = { rank, last };
    size_t rank_count = n % 2 ? 1 : 2;
    double middle[2];
    statgpu_status status;
    if (below < rank && last <= below + inside) {
        ranks[0] -= below;
        ranks[1] -= below;
        status = sg_cpu_select_ranks_in_place(scratch, inside, ranks, rank_count, STATGPU_SELECT_AUTO, middle, 1);
    } else if (!absolute) {
        status = sg_cpu_select_ranks(source, STATGPU_DTYPE_FLOAT64, n, ranks, rank_count, STATGPU_SELECT_AUTO,
                                     middle, 1);
    } else {
        for (i = 0; i < n; ++i)
            scratch[i] = sg_window_value(source, i, absolute, centre);
        status = sg_cpu_select_ranks_in_place(scratch, n, ranks, rank_count, STATGPU_SELECT_AUTO, middle, 1);
    }
    if (status != STATGPU_OK)
        return status;
    *median = n % 2 ? middle[0] : middle[0] / 2 + middle[1] / 2;
    return STATGPU_OK;
}

typedef struct sg_standardise_pass {
    const double  *y, *x;
    size_t         n, n_vars, ld;
    int            intercept;
    double        *z, *zy;
    sg_lts_column *columns;
} sg_standardise_pass;

/* Column `column` (a predictor, or y after the last one), on one thread;
 * its part of z serves as the scratch of its absolute deviations. */
static void sg_standardise_column(void *context, size_t column, int slot)
{
    (void)slot;
    const sg_standardise_pass *pass = context;
    size_t n = pass->n;
    if (column > pass->n_vars) {
        /* The task after y's: the intercept's column of ones. */
        for (size_t i = 0; i < n; ++i)
            pass->z[i] = 1.0;
        return;
    }
    bool predictor = column < pass->n_vars, centre = pass->intercept != 0;
    const double *source = predictor ? pass->x + pass->ld * column : pass->y;
    double *target = predictor ? pass->z + n * (column + (size_t)pass->intercept) : pass->zy;
    sg_lts_column *out = &pass->columns[column];
    memset(out, 0, sizeof *out);
    out->status = STATGPU_OK;
    /* The location's pass gives the column's range; without an intercept
     * the scale's pass gives the largest |x|, 0 for a column of zeros. */
    double location = 0.0, low = 0.0, high = 0.0, spread = 0.0;
    if (centre) {
        out->status = sg_lts_median_window(source, n, false, 0.0, SG_LTS_MEDIAN_SAMPLE, target, &location, &low, &high);
        if (out->status != STATGPU_OK)
            return;
        if (predictor && low == high) {
            out->fault = SG_LTS_COLUMN_CONSTANT;
            out->value = source[0];
            return;
        }
    }
    out->status = sg_lts_median_window(source, n, true, location, SG_LTS_MEDIAN_SAMPLE, target, &spread, NULL, &high);
    if (out->status != STATGPU_OK)
        return;
    if (predictor && !centre && high == 0.0) {
        out->fault = SG_LTS_COLUMN_ZEROS;
        return;
    }
    if (!(spread > 0.0) || !isfinite(spread)) {
        /* The deviations' mean, summed in row order. */
        double mean_deviation = 0.0;
        for (size_t i = 0; i < n; ++i)
            mean_deviation += fabs(source[i] - location);
        mean_deviation /= (double)n;
        spread = mean_deviation > 0.0 && isfinite(mean_deviation) ? mean_deviation : 1.0;
    }
    out->location = location;
    out->scale = spread;
    bool within = true;
    for (size_t i = 0; i < n; ++i) {
        target[i] = (source[i] - location) / spread;
        within &= fabs(target[i]) <= SG_LTS_MAX_STANDARDISED;
    }
    if (within)
        return;
    for (size_t i = 0; i < n; ++i)
        if (!(fabs(target[i]) <= SG_LTS_MAX_STANDARDISED)) {
            out->fault = SG_LTS_COLUMN_TOO_FAR;
            out->row = i;
            out->value = source[i];
            return;
        }
}

void sg_lts_standardise(const double *y, const double *x, size_t n, size_t n_vars, size_t ld, int intercept,
                        int thread_count, double *z, double *zy, sg_lts_column *columns)
{
    sg_standardise_pass pass = { y, x, n, n_vars, ld, intercept, z, zy, columns };
    /* About ten passes over a column: two selections and four scans. */
    size_t tasks = n_vars + 1 + (size_t)(intercept != 0);
    int team = sg_threads_for(thread_count > 0 ? thread_count : 1, tasks, 10.0 * (double)n * (double)(n_vars + 1));
    sg_parallel_for(team, tasks, sg_standardise_column, &pass);
}

/* -------------------------------------------------------------- residuals */

typedef struct sg_residual_pass {
    const double *y, *x;
    size_t        n, n_vars, ld;
    int           intercept;
    const double *coef;
    double       *residuals, *squared;
} sg_residual_pass;

static void sg_residual_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_residual_pass *pass = context;
    size_t begin, end, first = (size_t)pass->intercept;
    sg_pass_rows(pass->n, b, &begin, &end);
    for (size_t i = begin; i < end; ++i) {
        double fit = pass->intercept ? pass->coef[0] : 0.0;
        for (size_t v = 0; v < pass->n_vars; ++v)
            fit += pass->x[i + pass->ld * v] * pass->coef[v + first];
        double r = pass->y[i] - fit;
        if (pass->residuals != NULL)
            pass->residuals[i] = r;
        if (pass->squared != NULL)
            pass->squared[i] = r * r;
    }
}

void sg_lts_residuals(const double *y, const double *x, size_t n, size_t n_vars, size_t ld, int intercept,
                      const double *coef, int thread_count, double *residuals, double *squared)
{
    sg_residual_pass pass = { y, x, n, n_vars, ld, intercept, coef, residuals, squared };
    sg_parallel_for(sg_pass_team(thread_count, n, 2.0 * (double)(n_vars + 1)), sg_pass_blocks(n), sg_residual_block,
                    &pass);
}

/* ---------------------------------------------------------- trimmed sums */

typedef struct sg_trimmed_pass {
    const double *squared;
    size_t        n;
    double        kth;
    size_t       *below, *equal;  /* per block; equal becomes the block's share of the ties */
    size_t       *offset;         /* per block: the subset's rows before it */
    double       *sums;           /* per block */
    size_t       *subset;
} sg_trimmed_pass;

static void sg_trimmed_count_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_trimmed_pass *pass = context;
    size_t begin, end;
    sg_pass_rows(pass->n, b, &begin, &end);
    sg_block_counts(pass->squared, begin, end, pass->kth, &pass->below[b], &pass->equal[b]);
}

static void sg_trimmed_sum_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_trimmed_pass *pass = context;
    size_t begin, end, quota = pass->equal[b], taken = pass->offset[b];
    sg_pass_rows(pass->n, b, &begin, &end);
    double sum = 0.0, kth = pass->kth;
    for (size_t i = begin; i < end; ++i) {
        double value = pass->squared[i];
        bool in = value < kth || (value == kth && quota > 0 && (quota--, true));
        if (!in)
            continue;
        sum += value;
        if (pass->subset != NULL)
            pass->subset[taken] = i;
        ++taken;
    }
    pass->sums[b] = sum;
}

statgpu_status sg_lts_trimmed(const double *squared, size_t n, size_t h, int thread_count, double *kth, double *sum,
                              size_t *subset)
{
    double value;
    statgpu_status status = sg_cpu_select_ranks(squared, STATGPU_DTYPE_FLOAT64, n, &h, 1, STATGPU_SELECT_AUTO,
                                                &value, thread_count > 0 ? thread_count : 1);
    if (status != STATGPU_OK)
        return status;
    size_t block_count = sg_pass_blocks(n);
    size_t *counts = malloc(3 * block_count * sizeof *counts);
    double *sums = malloc(block_count * sizeof *sums);
    if (counts == NULL || sums == NULL) {
        free(counts);
        free(sums);
        return STATGPU_ERROR_OUT_OF_MEMORY;
    }
    sg_trimmed_pass pass = { squared, n, value, counts, counts + block_count, counts + 2 * block_count, sums, subset };
    int team = sg_pass_team(thread_count, n, 2.0);
    sg_parallel_for(team, block_count, sg_trimmed_count_block, &pass);
    size_t below_total = 0;
    for (size_t b = 0; b < block_count; ++b)
        below_total += pass.below[b];
    /* Rows equal to the h-th value go in row order: block b takes what the
     * blocks before it left of the quota. */
    size_t quota = h - below_total, taken = 0;
    for (size_t b = 0; b < block_count; ++b) {
        size_t take = pass.equal[b] < quota ? pass.equal[b] : quota;
        quota -= take;
        pass.equal[b] = take;
        pass.offset[b] = taken;
        taken += pass.below[b] + take;
    }
    sg_parallel_for(team, block_count, sg_trimmed_sum_block, &pass);
    double total = 0.0;
    for (size_t b = 0; b < block_count; ++b)
        total += sums[b];
    *kth = value;
    *sum = total;
    free(counts);
    free(sums);
    return STATGPU_OK;
}

/* ---------------------------------------------------------------- weights */

typedef struct sg_flag_pass {
    const double *residuals;
    size_t        n;
    double        scale, limit;
    int32_t      *weights;
    size_t       *counts;   /* per block, then the rows before it */
    size_t       *rows;
} sg_flag_pass;

static void sg_flag_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_flag_pass *pass = context;
    size_t begin, end, count = 0;
    sg_pass_rows(pass->n, b, &begin, &end);
    const double *r = pass->residuals;
    double scale = pass->scale, limit = pass->limit;
    for (size_t i = begin; i < end; ++i) {
        int32_t w = scale != 0.0 ? fabs(r[i] / scale) <= limit : fabs(r[i]) <= limit;
        pass->weights[i] = w;
        count += (size_t)w;
    }
    pass->counts[b] = count;
}

static void sg_list_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_flag_pass *pass = context;
    size_t begin, end, at = pass->counts[b];
    sg_pass_rows(pass->n, b, &begin, &end);
    for (size_t i = begin; i < end; ++i)
        if (pass->weights[i])
            pass->rows[at++] = i;
}

size_t sg_lts_flag_rows(const double *residuals, size_t n, double scale, double limit, int thread_count,
                        int32_t *weights, size_t *rows)
{
    size_t block_count = sg_pass_blocks(n);
    size_t *counts = malloc(block_count * sizeof *counts);
    if (counts == NULL)
        return (size_t)-1;
    sg_flag_pass pass = { residuals, n, scale, limit, weights, counts, rows };
    int team = sg_pass_team(thread_count, n, 2.0);
    sg_parallel_for(team, block_count, sg_flag_block, &pass);
    size_t total = 0;
    for (size_t b = 0; b < block_count; ++b) {
        size_t count = counts[b];
        counts[b] = total;
        total += count;
    }
    if (rows != NULL)
        sg_parallel_for(team, block_count, sg_list_block, &pass);
    free(counts);
    return total;
}

typedef struct sg_weighted_pass {
    const double  *residuals;
    const int32_t *weights;
    size_t         n;
    double        *sums;  /* per block */
} sg_weighted_pass;

/* The sum of residuals[i]^2 over the weighted rows of block b. */
static double sg_weighted_rows(const double *residuals, const int32_t *weights, size_t n, size_t b)
{
    size_t begin, end;
    sg_pass_rows(n, b, &begin, &end);
    double sum = 0.0;
    for (size_t i = begin; i < end; ++i)
        if (weights[i])
            sum += residuals[i] * residuals[i];
    return sum;
}

static void sg_weighted_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_weighted_pass *pass = context;
    pass->sums[b] = sg_weighted_rows(pass->residuals, pass->weights, pass->n, b);
}

double sg_lts_weighted_squares(const double *residuals, const int32_t *weights, size_t n, int thread_count)
{
    size_t block_count = sg_pass_blocks(n);
    double *sums = malloc(block_count * sizeof *sums);
    sg_weighted_pass pass = { residuals, weights, n, sums };
    double total = 0.0;
    if (sums == NULL) {
        /* No memory for the blocks' sums: the same blocks in turn here. */
        for (size_t b = 0; b < block_count; ++b)
            total += sg_weighted_rows(residuals, weights, n, b);
        return total;
    }
    sg_parallel_for(sg_pass_team(thread_count, n, 2.0), block_count, sg_weighted_block, &pass);
    for (size_t b = 0; b < block_count; ++b)
        total += sums[b];
    free(sums);
    return total;
}
