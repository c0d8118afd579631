/*
 * mma_f64.cuh: FP64 tensor-core matrix products (mma.sync m8n8k4, sm_80 and
 * later) for one warp: D = A B + C with A 8 x 4 (row-major), B 4 x 8
 * (column-major) and C, D 8 x 8, each element of D rounded as IEEE fused
 * multiply-adds are. The lane (g = lane / 4, t = lane % 4) holds
 *   a = A[g][t],  b = B[t][g],  {d0, d1} = D[g][2t], D[g][2t + 1].
 * Callers launch the kernels that use these only where the kernel's binary
 * was built for a GPU that has them (cudaFuncGetAttributes' binaryVersion):
 * code compiled for an older GPU traps.
 */
#ifndef STATGPU_KERNELS_MMA_F64_CUH
#define STATGPU_KERNELS_MMA_F64_CUH

namespace statgpu_cuda {

__device__ __forceinline__ void mma_8x8x4(double &d0, double &d1, double a, double b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
#else
    (void)d0;
    (void)d1;
    (void)a;
    (void)b;
    __trap();
#endif
}

/* D = A B + D with A 16 x K (row-major), B K x 8 (column-major), D 16 x 8,
 * for K = 4, 8 or 16 (mma.sync m16n8k4, m16n8k8, m16n8k16: sm_90 and later).
 * The lane (g, t) holds
 *   a[h + 2 s] = A[g + 8 h][t + 4 s],  b[s] = B[t + 4 s][g]   (s < K / 4),
 *   d[2 h + i] = D[g + 8 h][2 t + i]                            (h, i < 2). */
template <int K>
__device__ __forceinline__ void mma_16x8(double (&d)[4], const double (&a)[K / 2], const double (&b)[K / 4])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (K == 4)
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(b[0]));
    else if constexpr (K == 8)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                       "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
    (void)d;
    (void)a;
    (void)b;
    __trap();
#endif
}

} /* namespace statgpu_cuda */

#endif
