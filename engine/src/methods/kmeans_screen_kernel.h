/*
 * kmeans_screen_kernel.h: the register-tiled product-form kernel of
 * kmeans_screen.c, written once for vectors of any width. kmeans_screen.c
 * includes it once per instruction set, after defining:
 *   SG_KERNEL_NAME          the function's name
 *   SG_TARGET               its attributes (the instruction set)
 *   SG_VEC, SG_MASK, SG_WIDTH  a vector of SG_WIDTH doubles, a comparison's result
 *   SG_ROW_VECTORS          vectors of rows per step (the step is SG_WIDTH x this many rows)
 *   SG_LOAD(p), SG_STORE(p, v), SG_SET1(x)   aligned load and store, broadcast
 *   SG_MULADD(a, b, c)      a * b + c (one rounding or two: the bound allows both)
 *   SG_NEARER(a, b)         a mask whose lanes are set where a < b (a comparison, or
 *                           a - b whose sign bit SG_SELECT reads)
 *   SG_SELECT(mask, a, b)   mask ? a : b lane by lane
 *   SG_MIN(a, b), SG_MAX(a, b)
 * A step holds SG_ROW_VECTORS x SG_SCREEN_PANEL accumulators: with 4-wide
 * vectors 2 x 4 = 8 of them, as many as the two FMA pipes of a core need to
 * hide their latency, and the rest of the 16 registers for the rows and the
 * broadcast centroid value.
 */

/* Packs rows 0 .. rows-1 of data (leading dimension ld) into scratch's tile
 * (sg_screen_pack), then for every packed row (padded, a multiple of the
 * step) writes after the tile's row norms the smallest and second smallest
 * product-form score over the centroids and the index of the smallest (the
 * lower on ties), as doubles. */
SG_TARGET static void SG_KERNEL_NAME(const sg_kmeans_screen *screen, const double *data, size_t ld, size_t rows,
                                     size_t padded, double *scratch)
{
    const size_t d = screen->n_vars, panel_count = screen->panel_count;
    const double *tile = scratch;
    double *best_out = scratch + SG_SCREEN_TILE_ROWS * (d + 1), *second_out = best_out + SG_SCREEN_TILE_ROWS;
    double *index_out = second_out + SG_SCREEN_TILE_ROWS;
    sg_screen_pack(screen, data, ld, rows, padded, scratch);
    const size_t step = SG_WIDTH * SG_ROW_VECTORS;
    for (size_t row = 0; row < padded; row += step) {
        SG_VEC best[SG_ROW_VECTORS], second[SG_ROW_VECTORS], index[SG_ROW_VECTORS];
        for (int a = 0; a < SG_ROW_VECTORS; ++a) {
            best[a] = SG_SET1(INFINITY);
            second[a] = SG_SET1(INFINITY);
            index[a] = SG_SET1(0.0);
        }
        for (size_t p = 0; p < panel_count; ++p) {
            const double *panel = screen->panels + p * d * SG_SCREEN_PANEL;
            const double *norm = screen->norms + p * SG_SCREEN_PANEL;
            SG_VEC acc[SG_ROW_VECTORS][SG_SCREEN_PANEL];
            for (size_t c = 0; c < SG_SCREEN_PANEL; ++c)
                for (int a = 0; a < SG_ROW_VECTORS; ++a)
                    acc[a][c] = SG_SET1(norm[c]);
            const double *x = tile + row;
            for (size_t v = 0; v < d; ++v, x += SG_SCREEN_TILE_ROWS, panel += SG_SCREEN_PANEL) {
                SG_VEC rows_v[SG_ROW_VECTORS];
                for (int a = 0; a < SG_ROW_VECTORS; ++a)
                    rows_v[a] = SG_LOAD(x + a * SG_WIDTH);
                for (size_t c = 0; c < SG_SCREEN_PANEL; ++c) {
                    SG_VEC centre = SG_SET1(panel[c]);
                    for (int a = 0; a < SG_ROW_VECTORS; ++a)
                        acc[a][c] = SG_MULADD(rows_v[a], centre, acc[a][c]);
                }
            }
            for (size_t c = 0; c < SG_SCREEN_PANEL; ++c) {
                SG_VEC label = SG_SET1((double)(p * SG_SCREEN_PANEL + c));
                for (int a = 0; a < SG_ROW_VECTORS; ++a) {
                    SG_VEC score = acc[a][c];
                    SG_MASK nearer = SG_NEARER(score, best[a]);
                    second[a] = SG_MIN(second[a], SG_MAX(best[a], score));
                    best[a] = SG_SELECT(nearer, score, best[a]);
                    index[a] = SG_SELECT(nearer, label, index[a]);
                }
            }
        }
        for (int a = 0; a < SG_ROW_VECTORS; ++a) {
            SG_STORE(best_out + row + a * SG_WIDTH, best[a]);
            SG_STORE(second_out + row + a * SG_WIDTH, second[a]);
            SG_STORE(index_out + row + a * SG_WIDTH, index[a]);
        }
    }
}

#undef SG_KERNEL_NAME
#undef SG_TARGET
#undef SG_VEC
#undef SG_MASK
#undef SG_WIDTH
#undef SG_ROW_VECTORS
#undef SG_LOAD
#undef SG_STORE
#undef SG_SET1
#undef SG_MULADD
#undef SG_NEARER
#undef SG_SELECT
#undef SG_MIN
#undef SG_MAX
