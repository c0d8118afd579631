/*
 * kmeans_screen.c: the product-form screen of Lloyd's assignment
 * (kmeans_screen.h): the nearest centroid of each row by
 * ||c~||^2 - 2 x~.c~ on shifted rows and centroids, in a register-tiled
 * kernel, and whether that choice is certain under the exact difference form
 * sum_v (x_v - c_v)^2 that kmeans_cpu.c computes.
 *
 * Why the product form: it costs one multiply-add a term where the
 * difference form costs a subtraction, a multiplication and an addition, and
 * its terms tile into registers as a matrix product does (rows x centroids
 * accumulators, each loaded value used several times).
 *
 * Why a kernel of our own and not BLAS's dgemm: the engine links no BLAS
 * (math/dense.h: a static OpenBLAS would add 26 MB to statgpu.oxt) and the
 * reference BLAS that could be linked is a triple loop. Measured by
 * bench/bench_kmeans_screen.sh on a 2-core AMD EPYC (Zen 3), one tile of 96
 * rows x 16 variables, microseconds (medians, the range over 3 runs):
 * against 64 centroids this screen (AVX2 + FMA: packing, scores, best and
 * second best, the bound) 6.4-8.3, the product alone by reference BLAS's
 * dgemm 71-74 and by OpenBLAS's (1 thread) 8.4-10.0; against 16 centroids
 * 2.0-3.0, 16-19 and 2.1-2.8.
 *
 * The bound. u = 2^-53, gamma_n = n u / (1 - n u). The rows and centroids
 * are shifted by a vector m (the centroids' mean, so that data far from 0
 * do not cancel): x~ = fl(x - m), c~ = fl(c - m), each within
 * u' = u / (1 - u) of its magnitude. For row x and centroid c let
 * r = ||x~|| + ||c~||, S the computed score fl(||c~||^2 + sum_v x~_v (-2 c~_v))
 * (in any order, with fused multiply-adds or without), and D the exact
 * form's computed distance (on x and c unshifted). Then
 *   |S - (||x~ - c~||^2 - ||x~||^2)| <= 2 gamma_{d+1} (1 + gamma_d) r^2
 *       (the norm within gamma_d ||c~||^2, then d + 1 terms summed with
 *       sum |terms| <= (1 + gamma_d) ||c~||^2 + 2 ||x~|| ||c~||),
 *   | ||x~ - c~||^2 - ||x - c||^2 | <= u' (2 + 3 u') r^2
 *       (x~ - c~ = (x - c) + e with ||e|| <= u' r),
 *   |D - ||x - c||^2| <= gamma_{d+2} ||x - c||^2 <= gamma_{d+2} (1 + u')^2 r^2
 *       (one rounding in each difference, square and addition),
 * so |S - (D - ||x~||^2)| <= 3 gamma_{d+3} r^2 =: T(r), the higher-order
 * terms inside the spare 3 u r^2 for any d below 10^7. With
 * r <= ||x~|| + max_j ||c~_j|| for every centroid of the row, a centroid j1
 * with the smallest score is the exact form's unique nearest when every
 * other score exceeds S_j1 by more than 2 T: then D_j - D_j1 > 0. The
 * bound is used with a factor 2 to spare for the rounding of the norms
 * and of T itself; the difference of the two scores is computed in
 * floating point, and fl(a - b) > t implies a - b > t. Rows whose r^2
 * exceeds 2^1021 (where a score could overflow) are never certain.
 */
#include "methods/kmeans_screen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define SG_SCREEN_X86 1
#include <immintrin.h>
#endif

bool sg_kmeans_screen_create(sg_kmeans_screen *screen, size_t k, size_t n_vars)
{
    memset(screen, 0, sizeof *screen);
    screen->k = k;
    screen->n_vars = n_vars;
    screen->panel_count = (k + SG_SCREEN_PANEL - 1) / SG_SCREEN_PANEL;
    screen->kernel = sg_kmeans_screen_best_kernel();
    size_t padded = screen->panel_count * SG_SCREEN_PANEL;
    screen->shift = malloc(n_vars * sizeof *screen->shift);
    screen->panels = malloc(padded * n_vars * sizeof *screen->panels);
    screen->norms = malloc(padded * sizeof *screen->norms);
    if (screen->shift == NULL || screen->panels == NULL || screen->norms == NULL) {
        sg_kmeans_screen_destroy(screen);
        return false;
    }
    return true;
}

void sg_kmeans_screen_destroy(sg_kmeans_screen *screen)
{
    free(screen->shift);
    free(screen->panels);
    free(screen->norms);
    memset(screen, 0, sizeof *screen);
}

sg_screen_kernel sg_kmeans_screen_best_kernel(void)
{
#ifdef SG_SCREEN_X86
    __builtin_cpu_init();
    /* libgcc's answer includes the operating system's support of the
     * 256-bit registers (XGETBV). */
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return SG_SCREEN_AVX2;
    return SG_SCREEN_SSE2;
#else
    return SG_SCREEN_SCALAR;
#endif
}

void sg_kmeans_screen_prepare(sg_kmeans_screen *screen, const double *centroids)
{
    const size_t k = screen->k, d = screen->n_vars, padded = screen->panel_count * SG_SCREEN_PANEL;
    for (size_t v = 0; v < d; ++v) {
        double sum = 0.0;
        for (size_t j = 0; j < k; ++j)
            sum += centroids[j + k * v];
        screen->shift[v] = sum / (double)k;
    }
    memset(screen->panels, 0, padded * d * sizeof *screen->panels);
    double largest = 0.0;
    for (size_t j = 0; j < padded; ++j) {
        if (j >= k) {
            screen->norms[j] = INFINITY;  /* never nearer, unless every real score overflowed */
            continue;
        }
        double *panel = screen->panels + (j / SG_SCREEN_PANEL) * d * SG_SCREEN_PANEL + j % SG_SCREEN_PANEL;
        double norm = 0.0;
        for (size_t v = 0; v < d; ++v) {
            double shifted = centroids[j + k * v] - screen->shift[v];
            panel[v * SG_SCREEN_PANEL] = -2.0 * shifted;
            norm += shifted * shifted;
        }
        screen->norms[j] = norm;
        largest = norm > largest ? norm : largest;
    }
    screen->largest_norm = sqrt(largest);
}

size_t sg_kmeans_screen_scratch_count(size_t n_vars) { return SG_SCREEN_TILE_ROWS * (n_vars + 4); }

/* ----------------------------------------------------------- the kernels */

/* The rows shifted (variable v of row i at tile[v * SG_SCREEN_TILE_ROWS + i]),
 * padded with zero rows up to padded, and their squared norms after the
 * tile. Inlined into each kernel, so compiled for its instruction set. */
static inline __attribute__((always_inline)) void sg_screen_pack(const sg_kmeans_screen *screen,
                                                                 const double *data, size_t ld, size_t rows,
                                                                 size_t padded, double *tile)
{
    const size_t d = screen->n_vars, tile_rows = SG_SCREEN_TILE_ROWS;
    double *row_norms = tile + tile_rows * d;
    for (size_t i = 0; i < padded; ++i)
        row_norms[i] = 0.0;
    for (size_t v = 0; v < d; ++v) {
        const double *column = data + ld * v;
        double *packed = tile + tile_rows * v, shift = screen->shift[v];
        /* The next tile's lines of this column, on their way from memory
         * while this tile is screened (a line of 8 doubles per prefetch). */
        for (size_t i = tile_rows; i < 2 * tile_rows; i += 8)
            __builtin_prefetch(column + i);
        for (size_t i = 0; i < rows; ++i) {
            packed[i] = column[i] - shift;
            row_norms[i] += packed[i] * packed[i];
        }
        for (size_t i = rows; i < padded; ++i)
            packed[i] = 0.0;
    }
}

#define SG_KERNEL_NAME sg_screen_scalar
#define SG_TARGET
#define SG_VEC double
#define SG_MASK int
#define SG_WIDTH 1
#define SG_ROW_VECTORS 4
#define SG_LOAD(p) (*(p))
#define SG_STORE(p, value) (*(p) = (value))
#define SG_SET1(x) (x)
#define SG_MULADD(a, b, c) ((a) * (b) + (c))
#define SG_NEARER(a, b) ((a) < (b))
#define SG_SELECT(mask, a, b) ((mask) ? (a) : (b))
#define SG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SG_MAX(a, b) ((a) > (b) ? (a) : (b))
#include "methods/kmeans_screen_kernel.h"

#ifdef SG_SCREEN_X86
#define SG_KERNEL_NAME sg_screen_sse2
#define SG_TARGET
#define SG_VEC __m128d
#define SG_MASK __m128d
#define SG_WIDTH 2
#define SG_ROW_VECTORS 2
#define SG_LOAD(p) _mm_load_pd(p)
#define SG_STORE(p, value) _mm_store_pd((p), (value))
#define SG_SET1(x) _mm_set1_pd(x)
#define SG_MULADD(a, b, c) _mm_add_pd(_mm_mul_pd((a), (b)), (c))
#define SG_NEARER(a, b) _mm_cmplt_pd((a), (b))
#define SG_SELECT(mask, a, b) _mm_or_pd(_mm_and_pd((mask), (a)), _mm_andnot_pd((mask), (b)))
#define SG_MIN(a, b) _mm_min_pd((a), (b))
#define SG_MAX(a, b) _mm_max_pd((a), (b))
#include "methods/kmeans_screen_kernel.h"

#define SG_KERNEL_NAME sg_screen_avx2
#define SG_TARGET __attribute__((target("avx2,fma")))
#define SG_VEC __m256d
#define SG_MASK __m256d
#define SG_WIDTH 4
#define SG_ROW_VECTORS 2
#define SG_LOAD(p) _mm256_load_pd(p)
#define SG_STORE(p, value) _mm256_store_pd((p), (value))
#define SG_SET1(x) _mm256_set1_pd(x)
#define SG_MULADD(a, b, c) _mm256_fmadd_pd((a), (b), (c))
/* The sign of a - b: set where a < b (a - b is never -0 for a != b without
 * flush to zero, and +0 where a == b), computed on the adders, which the
 * multiply-adds leave free. */
#define SG_NEARER(a, b) _mm256_sub_pd((a), (b))
#define SG_SELECT(mask, a, b) _mm256_blendv_pd((b), (a), (mask))
#define SG_MIN(a, b) _mm256_min_pd((a), (b))
#define SG_MAX(a, b) _mm256_max_pd((a), (b))
#include "methods/kmeans_screen_kernel.h"
#endif

/* The rows a kernel's step covers divide this: 4, 4 and 8 rows. */
#define SG_SCREEN_STEP_LCM ((size_t)8)

void sg_kmeans_screen_rows(const sg_kmeans_screen *screen, const double *data, size_t ld, size_t rows,
                           double *scratch, int32_t *nearest, bool *certain)
{
    const size_t d = screen->n_vars, tile_rows = SG_SCREEN_TILE_ROWS;
    const double *row_norms = scratch + tile_rows * d;
    double *best = scratch + tile_rows * (d + 1), *second = best + tile_rows, *index = second + tile_rows;
    size_t padded = (rows + SG_SCREEN_STEP_LCM - 1) / SG_SCREEN_STEP_LCM * SG_SCREEN_STEP_LCM;

    switch (screen->kernel) {
#ifdef SG_SCREEN_X86
    case SG_SCREEN_AVX2:
        sg_screen_avx2(screen, data, ld, rows, padded, scratch);
        break;
    case SG_SCREEN_SSE2:
        sg_screen_sse2(screen, data, ld, rows, padded, scratch);
        break;
#endif
    default:
        sg_screen_scalar(screen, data, ld, rows, padded, scratch);
        break;
    }

    /* 2 T(r) with the factor 2 to spare: 12 gamma_{d+3} r^2. */
    const double n_gamma = (double)(d + 3) * 0x1p-53;
    const double bound_factor = 12.0 * n_gamma / (1.0 - n_gamma);
    for (size_t i = 0; i < rows; ++i) {
        double r = sqrt(row_norms[i]) + screen->largest_norm;
        double r_squared = r * r;
        /* A padding column wins only where every score overflowed. */
        bool real = index[i] < (double)screen->k;
        nearest[i] = real ? (int32_t)index[i] : 0;
        certain[i] = real && r_squared <= 0x1p1021 && second[i] - best[i] > bound_factor * r_squared;
    }
}
