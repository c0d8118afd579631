/*
 * kmeans_screen.h: the screen of Lloyd's assignment (kmeans_screen.c). For a
 * tile of rows it finds the nearest centroid by the product form
 * ||c||^2 - 2 x.c, register-tiled, and says for each row whether that choice
 * is certain: whether every other centroid is farther by more than the
 * form's rigorous rounding error bound. kmeans_cpu.c then computes the
 * chosen centroid's distance by the exact difference form and rechecks every
 * row that is not certain by that form, so labels and every sum keep the
 * bits of the difference form alone.
 */
#ifndef STATGPU_METHODS_KMEANS_SCREEN_H
#define STATGPU_METHODS_KMEANS_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows of one tile: a multiple of every kernel's rows per step (4, 8, 12). */
#define SG_SCREEN_TILE_ROWS ((size_t)96)
/* Centroids per panel of the packed centroids. */
#define SG_SCREEN_PANEL ((size_t)4)

/* The kernels: the same arithmetic in vectors of 1, 2 or 4 doubles. */
typedef enum sg_screen_kernel {
    SG_SCREEN_SCALAR = 0,  /* plain C, every architecture */
    SG_SCREEN_SSE2   = 1,  /* x86-64's baseline */
    SG_SCREEN_AVX2   = 2,  /* AVX2 and FMA, where the processor has them */
} sg_screen_kernel;

/* The centroids as the screen reads them, made again for each pass. */
typedef struct sg_kmeans_screen {
    size_t           k, n_vars, panel_count;
    sg_screen_kernel kernel;         /* the fastest this processor runs; tests may choose another */
    double          *shift;          /* n_vars: the centroids' mean, taken from rows and centroids alike */
    double          *panels;         /* panel_count x n_vars x SG_SCREEN_PANEL: -2 (c_j - shift) */
    double          *norms;          /* panel_count x SG_SCREEN_PANEL: ||c_j - shift||^2; +inf pads */
    double           largest_norm;   /* the largest ||c_j - shift|| */
} sg_kmeans_screen;

/* Allocates for k centroids of n_vars variables; false when out of memory
 * (then the screen is freed). */
bool sg_kmeans_screen_create(sg_kmeans_screen *screen, size_t k, size_t n_vars);
/* A zeroed screen is a no-op. */
void sg_kmeans_screen_destroy(sg_kmeans_screen *screen);

/* The fastest kernel this processor runs. */
sg_screen_kernel sg_kmeans_screen_best_kernel(void);

/* Packs centroids (k x n_vars, leading dimension k) for the rows' passes. */
void sg_kmeans_screen_prepare(sg_kmeans_screen *screen, const double *centroids);

/* Doubles of scratch one tile needs (one set per thread). */
size_t sg_kmeans_screen_scratch_count(size_t n_vars);

/* Rows 0 .. rows-1 of data (column-major, leading dimension ld; rows at
 * most SG_SCREEN_TILE_ROWS): each row's nearest centroid by the product
 * form (the lower index on ties) into nearest, and into certain whether
 * no other centroid can be as near by the exact difference form. scratch
 * holds sg_kmeans_screen_scratch_count(n_vars) doubles, 32-byte aligned. */
void sg_kmeans_screen_rows(const sg_kmeans_screen *screen, const double *data, size_t ld, size_t rows,
                           double *scratch, int32_t *nearest /* out */, bool *certain /* out */);

#endif
