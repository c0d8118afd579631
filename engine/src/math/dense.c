/*
 * dense.c: the dense linear algebra of the methods (see dense.h).
 */
#include "math/dense.h"

#include "core/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows per independent Householder QR in the chunked least squares. */
#define SG_DENSE_QR_CHUNK_ROWS ((size_t)2048)

/* Householder QR with dependent columns dropped, in place on a (rows x
 * cols+1, column-major, leading dimension lda): the last column is the
 * right-hand side. A column whose remaining norm is at most tolerance times
 * norms[j] (its norm in the original problem; computed here when NULL) is
 * dependent on the kept ones before it: its coefficient is 0, as R's lm.fit
 * gives NA. Writes coef (cols) and returns the number of kept columns. */
size_t sg_qr_solve(double *a, size_t rows, size_t cols, size_t lda, double tolerance,
                          const double *norms, double *coef, bool *kept)
{
    size_t rank = 0;
    size_t kept_index[64];
    size_t *index = cols <= 64 ? kept_index : malloc(cols * sizeof *index);
    if (index == NULL)
        return 0;
    for (size_t j = 0; j < cols; ++j) {
        double *column = a + lda * j;
        double original = 0.0;
        if (norms != NULL)
            original = norms[j];
        double tail = 0.0;
        for (size_t i = rank; i < rows; ++i)
            tail += column[i] * column[i];
        tail = sqrt(tail);
        if (norms == NULL) {
            /* Before any reflection touched it the column is original;
             * afterwards the rows above `rank` still hold its projection. */
            double head = 0.0;
            for (size_t i = 0; i < rank; ++i)
                head += column[i] * column[i];
            original = sqrt(head + tail * tail);
        }
        bool independent = rank < rows && tail > tolerance * original && tail > 0.0;
        kept[j] = independent;
        coef[j] = 0.0;
        if (!independent)
            continue;
        /* Reflect rows rank.. of this column onto its first entry. */
        double alpha = column[rank] > 0 ? -tail : tail;
        double v0 = column[rank] - alpha;
        double beta = tail * tail - column[rank] * alpha;  /* = v^T v / 2 */
        for (size_t c = j + 1; c <= cols; ++c) {
            double *target = a + lda * c;
            double dot = v0 * target[rank];
            for (size_t i = rank + 1; i < rows; ++i)
                dot += column[i] * target[i];
            double scale = dot / beta;
            target[rank] -= scale * v0;
            for (size_t i = rank + 1; i < rows; ++i)
                target[i] -= scale * column[i];
        }
        column[rank] = alpha;
        for (size_t i = rank + 1; i < rows; ++i)
            column[i] = 0.0;
        index[rank++] = j;
    }
    /* Back substitution over the kept columns. */
    const double *rhs = a + lda * cols;
    for (size_t r = rank; r-- > 0;) {
        double sum = rhs[r];
        for (size_t s = r + 1; s < rank; ++s)
            sum -= a[r + lda * index[s]] * coef[index[s]];
        coef[index[r]] = sum / a[r + lda * index[r]];
    }
    if (index != kept_index)
        free(index);
    return rank;
}

void sg_upper_inverse(const double *r, size_t ldr, size_t size, double *inverse)
{
    memset(inverse, 0, size * size * sizeof *inverse);
    for (size_t c = 0; c < size; ++c) {
        inverse[c + size * c] = 1.0 / r[c + ldr * c];
        for (size_t i = c; i-- > 0;) {
            double sum = 0.0;
            for (size_t t = i + 1; t <= c; ++t)
                sum += r[i + ldr * t] * inverse[t + size * c];
            inverse[i + size * c] = -sum / r[i + ldr * i];
        }
    }
}

/* Columns whose products with a reflector are summed in one sweep of the
 * rows (sg_reflector_dots). */
#define SG_DENSE_REFLECT_GROUP ((size_t)8)

/* dots[q] = v0 * targets[j + lda*q] + sum over i > j of column[i] *
 * targets[i + lda*q], for q < group (at most SG_DENSE_REFLECT_GROUP). Each
 * dot adds its terms in row order, as one dot at a time would: the same
 * bits. The dots of a group advance together, so their additions overlap
 * instead of each waiting for the one before: a 10^6-row least squares of
 * width 12 reduces its chunks in 0.08 s instead of 0.11 s on one thread.
 * Inlined, so that a full group's loop, and a lone column's, are compiled
 * for their constant sizes. */
static inline __attribute__((always_inline)) void sg_reflector_dots(const double *column, double v0, size_t j,
                                                                    size_t rows, const double *targets, size_t lda,
                                                                    size_t group, double *dots)
{
    for (size_t q = 0; q < group; ++q)
        dots[q] = v0 * targets[j + lda * q];
    for (size_t i = j + 1; i < rows; ++i) {
        double v = column[i];
        for (size_t q = 0; q < group; ++q)
            dots[q] += v * targets[i + lda * q];
    }
}

/* Reduces a (rows x width, column-major, leading dimension lda) in place to
 * its triangular factor R (the first min(rows, width) rows), no columns
 * dropped: a zero column is simply left alone. */
void sg_qr_reduce(double *a, size_t rows, size_t width, size_t lda)
{
    size_t steps = rows < width ? rows : width;
    for (size_t j = 0; j < steps; ++j) {
        double *column = a + lda * j;
        double norm = 0.0;
        for (size_t i = j; i < rows; ++i)
            norm += column[i] * column[i];
        norm = sqrt(norm);
        if (norm == 0.0)
            continue;
        double alpha = column[j] > 0 ? -norm : norm;
        double v0 = column[j] - alpha;
        double beta = norm * norm - column[j] * alpha;
        for (size_t c = j + 1; c < width; c += SG_DENSE_REFLECT_GROUP) {
            size_t group = width - c < SG_DENSE_REFLECT_GROUP ? width - c : SG_DENSE_REFLECT_GROUP;
            double dots[SG_DENSE_REFLECT_GROUP];
            if (group == SG_DENSE_REFLECT_GROUP)
                sg_reflector_dots(column, v0, j, rows, a + lda * c, lda, SG_DENSE_REFLECT_GROUP, dots);
            else if (group == 1)
                sg_reflector_dots(column, v0, j, rows, a + lda * c, lda, 1, dots);
            else
                sg_reflector_dots(column, v0, j, rows, a + lda * c, lda, group, dots);
            for (size_t q = 0; q < group; ++q) {
                double *target = a + lda * (c + q);
                double scale = dots[q] / beta;
                target[j] -= scale * v0;
                for (size_t i = j + 1; i < rows; ++i)
                    target[i] -= scale * column[i];
            }
        }
        column[j] = alpha;
        for (size_t i = j + 1; i < rows; ++i)
            column[i] = 0.0;
    }
}

/* The chunks of a factorisation, each reduced to its R factor. */
typedef struct sg_qr_chunks {
    const double *const *columns;
    const double        *shift, *scale;
    size_t               width;
    const size_t        *rows;
    size_t               row_count;
    double              *factors;        /* chunk_count x width x width */
    double              *blocks;         /* per thread: the chunk's rows, then its reduction */
    size_t               block_doubles;
} sg_qr_chunks;

static void sg_qr_chunk(void *context, size_t c, int slot)
{
    const sg_qr_chunks *work = context;
    size_t width = work->width;
    double *block = work->blocks + (size_t)slot * work->block_doubles;
    size_t begin = c * SG_DENSE_QR_CHUNK_ROWS;
    size_t end = begin + SG_DENSE_QR_CHUNK_ROWS < work->row_count ? begin + SG_DENSE_QR_CHUNK_ROWS : work->row_count;
    size_t m = end - begin, ld = SG_DENSE_QR_CHUNK_ROWS;
    for (size_t v = 0; v < width; ++v) {
        const double *source = work->columns[v];
        double shift = work->shift ? work->shift[v] : 0.0, scale = work->scale ? work->scale[v] : 1.0;
        double *target = block + ld * v;
        for (size_t r = 0; r < m; ++r) {
            size_t row = work->rows ? work->rows[begin + r] : begin + r;
            target[r] = source == NULL ? 1.0 : (source[row] - shift) * scale;
        }
    }
    sg_qr_reduce(block, m, width, ld);
    double *factor = work->factors + c * width * width;
    for (size_t v = 0; v < width; ++v)
        for (size_t r = 0; r <= v && r < m; ++r)
            factor[r + width * v] = block[r + ld * v];
}

bool sg_qr_factor_columns(const double *const *columns, const double *shift, const double *scale, size_t width,
                          const size_t *rows, size_t row_count, int thread_count, double *r)
{
    size_t chunk_count = (row_count + SG_DENSE_QR_CHUNK_ROWS - 1) / SG_DENSE_QR_CHUNK_ROWS;
    if (chunk_count == 0)
        chunk_count = 1;
    double *factors = calloc(chunk_count * width * width, sizeof *factors);
    double *stack = malloc(2 * width * width * sizeof *stack);
    int team = thread_count > 0 ? thread_count : 1;
    if ((size_t)team > chunk_count)
        team = (int)chunk_count;
    size_t block_doubles = (SG_DENSE_QR_CHUNK_ROWS + width) * width;
    double *blocks = malloc((size_t)team * block_doubles * sizeof *blocks);
    bool failed = factors == NULL || stack == NULL || blocks == NULL;
    if (!failed) {
        sg_qr_chunks work = { columns, shift, scale, width, rows, row_count, factors, blocks, block_doubles };
        sg_parallel_for(team, chunk_count, sg_qr_chunk, &work);
        /* Fold the chunks' factors in order: R = qr([R; R_c]). */
        double *total = factors;  /* chunk 0's factor */
        for (size_t c = 1; c < chunk_count; ++c) {
            for (size_t v = 0; v < width; ++v) {
                for (size_t i = 0; i < width; ++i) {
                    stack[i + 2 * width * v] = total[i + width * v];
                    stack[width + i + 2 * width * v] = factors[c * width * width + i + width * v];
                }
            }
            sg_qr_reduce(stack, 2 * width, width, 2 * width);
            for (size_t v = 0; v < width; ++v)
                for (size_t i = 0; i < width; ++i)
                    total[i + width * v] = i <= v ? stack[i + 2 * width * v] : 0.0;
        }
        memcpy(r, total, width * width * sizeof *r);
    }
    free(blocks);
    free(factors);
    free(stack);
    return !failed;
}

size_t sg_least_squares_rows(const double *x, const double *y, size_t n, size_t p, const size_t *rows,
                             size_t row_count, double tolerance, int thread_count, double *coef, bool *kept,
                             double *rss)
{
    size_t width = p + 1;
    const double **columns = malloc(width * sizeof *columns);
    double *total = malloc(width * width * sizeof *total);
    double *norms = calloc(width, sizeof *norms);
    if (columns == NULL || total == NULL || norms == NULL) {
        free(columns);
        free(total);
        free(norms);
        return (size_t)-1;
    }
    for (size_t v = 0; v < p; ++v)
        columns[v] = x + n * v;
    columns[p] = y;
    bool factored = sg_qr_factor_columns(columns, NULL, NULL, width, rows, row_count, thread_count, total);
    free(columns);
    if (!factored) {
        free(total);
        free(norms);
        return (size_t)-1;
    }
    /* Column norms of the augmented rows: those of the factor. */
    for (size_t v = 0; v < width; ++v) {
        for (size_t i = 0; i <= v; ++i)
            norms[v] += total[i + width * v] * total[i + width * v];
        norms[v] = sqrt(norms[v]);
    }
    size_t rank = sg_qr_solve(total, width, p, width, tolerance, norms, coef, kept);
    if (rss != NULL) {
        /* What the kept columns leave of y: rows rank.. of the last column. */
        double sum = 0.0;
        for (size_t i = rank; i < width; ++i)
            sum += total[i + width * p] * total[i + width * p];
        *rss = sum;
    }
    free(total);
    free(norms);
    return rank;
}

/* Solves gram coef = xty (p x p, symmetric) by Cholesky, dropping a column
 * whose pivot falls to pivot_tolerance of its diagonal: the
 * least-squares solution on the independent columns. work holds p*p.
 * Returns false when the solution is not finite or absurdly large. */
bool sg_solve_normal_equations(const double *gram, const double *xty, size_t p, double pivot_tolerance,
                               double max_coefficient, double *work, double *coef)
{
    bool dropped[64];
    bool *drop = p <= 64 ? dropped : malloc(p * sizeof *drop);
    if (drop == NULL)
        return false;
    double *l = work;
    for (size_t j = 0; j < p; ++j) {
        double diagonal = gram[j + p * j];
        double d = diagonal;
        for (size_t k = 0; k < j; ++k)
            if (!drop[k])
                d -= l[j + p * k] * l[j + p * k];
        drop[j] = !(diagonal > 0.0) || !(d > pivot_tolerance * diagonal);
        double root = drop[j] ? 0.0 : sqrt(d);
        l[j + p * j] = root;
        for (size_t i = j + 1; i < p; ++i) {
            if (drop[j]) {
                l[i + p * j] = 0.0;
                continue;
            }
            double s = gram[i + p * j];
            for (size_t k = 0; k < j; ++k)
                if (!drop[k])
                    s -= l[i + p * k] * l[j + p * k];
            l[i + p * j] = s / root;
        }
    }
    /* L z = xty, then L^T coef = z, over the kept columns. */
    for (size_t i = 0; i < p; ++i) {
        if (drop[i]) {
            coef[i] = 0.0;
            continue;
        }
        double s = xty[i];
        for (size_t k = 0; k < i; ++k)
            if (!drop[k])
                s -= l[i + p * k] * coef[k];
        coef[i] = s / l[i + p * i];
    }
    for (size_t i = p; i-- > 0;) {
        if (drop[i])
            continue;
        double s = coef[i];
        for (size_t k = i + 1; k < p; ++k)
            if (!drop[k])
                s -= l[k + p * i] * coef[k];
        coef[i] = s / l[i + p * i];
    }
    bool ok = true;
    for (size_t i = 0; i < p; ++i)
        if (!(fabs(coef[i]) <= max_coefficient))
            ok = false;
    if (drop != dropped)
        free(drop);
    return ok;
}
