// bench_mstep.cu: the GMM M-step's factorisations, k Cholesky factors of d x d
// covariances, three ways, for the notes (bench/NOTES.md, GMM): on the host
// as the engine does them (one thread), cuSOLVER's batched potrf on the
// device (cusolverDnDpotrfBatched, with the copies of the k matrices in and
// out an M-step would need), and the same device call without the copies.
//
//   nvcc -O3 -arch=sm_90 bench/bench_mstep.cu -lcusolver -o bench_mstep && ./bench_mstep
//
// Medians of 200 repeats after 20 warm-up calls; device times with CUDA events.
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

static bool host_cholesky(const double *a, int d, double *l)
{
    for (int i = 0; i < d * d; ++i)
        l[i] = 0.0;
    for (int j = 0; j < d; ++j) {
        double diagonal = a[j + d * j];
        for (int p = 0; p < j; ++p)
            diagonal -= l[j + d * p] * l[j + d * p];
        if (!(diagonal > 0.0))
            return false;
        const double root = std::sqrt(diagonal);
        l[j + d * j] = root;
        for (int i = j + 1; i < d; ++i) {
            double s = a[j + d * i];
            for (int p = 0; p < j; ++p)
                s -= l[i + d * p] * l[j + d * p];
            l[i + d * j] = s / root;
        }
    }
    return true;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main()
{
    cusolverDnHandle_t handle;
    if (cusolverDnCreate(&handle) != CUSOLVER_STATUS_SUCCESS) {
        std::printf("no cuSOLVER\n");
        return 1;
    }
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cusolverDnSetStream(handle, stream);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::printf("| d | k | host, one thread (us) | cuSOLVER potrfBatched with copies (us) | cuSOLVER alone (us) |\n");
    std::printf("|---|---|---|---|---|\n");
    const int shapes[][2] = { {2, 8}, {8, 8}, {16, 16}, {16, 64}, {8, 256} };
    for (const auto &shape : shapes) {
        const int d = shape[0], k = shape[1];
        std::vector<double> a(static_cast<size_t>(k) * d * d), l(a.size());
        for (int j = 0; j < k; ++j)
            for (int r = 0; r < d; ++r)
                for (int c = 0; c < d; ++c)
                    a[static_cast<size_t>(j) * d * d + r + d * c] = (r == c ? d + 1.0 : 0.0) + 1.0 / (1.0 + r + c + j);
        double *d_a = nullptr, **d_pointers = nullptr;
        int *d_info = nullptr;
        cudaMalloc(&d_a, a.size() * sizeof(double));
        cudaMalloc(&d_pointers, k * sizeof(double *));
        cudaMalloc(&d_info, k * sizeof(int));
        std::vector<double *> pointers(k);
        for (int j = 0; j < k; ++j)
            pointers[j] = d_a + static_cast<size_t>(j) * d * d;
        cudaMemcpy(d_pointers, pointers.data(), k * sizeof(double *), cudaMemcpyHostToDevice);
        double *h_pinned = nullptr;
        cudaMallocHost(&h_pinned, a.size() * sizeof(double));
        std::copy(a.begin(), a.end(), h_pinned);

        std::vector<double> host_us, with_copies_us, alone_us;
        for (int repeat = 0; repeat < 220; ++repeat) {
            auto t0 = std::chrono::steady_clock::now();
            for (int j = 0; j < k; ++j)
                host_cholesky(a.data() + static_cast<size_t>(j) * d * d, d, l.data() + static_cast<size_t>(j) * d * d);
            auto t1 = std::chrono::steady_clock::now();
            cudaEventRecord(start, stream);
            cudaMemcpyAsync(d_a, h_pinned, a.size() * sizeof(double), cudaMemcpyHostToDevice, stream);
            cusolverDnDpotrfBatched(handle, CUBLAS_FILL_MODE_LOWER, d, d_pointers, d, d_info, k);
            cudaMemcpyAsync(h_pinned, d_a, a.size() * sizeof(double), cudaMemcpyDeviceToHost, stream);
            cudaEventRecord(stop, stream);
            cudaEventSynchronize(stop);
            float with_copies = 0.0f;
            cudaEventElapsedTime(&with_copies, start, stop);
            std::copy(a.begin(), a.end(), h_pinned);
            cudaMemcpy(d_a, h_pinned, a.size() * sizeof(double), cudaMemcpyHostToDevice);
            cudaEventRecord(start, stream);
            cusolverDnDpotrfBatched(handle, CUBLAS_FILL_MODE_LOWER, d, d_pointers, d, d_info, k);
            cudaEventRecord(stop, stream);
            cudaEventSynchronize(stop);
            float alone = 0.0f;
            cudaEventElapsedTime(&alone, start, stop);
            if (repeat >= 20) {
                host_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                with_copies_us.push_back(with_copies * 1e3);
                alone_us.push_back(alone * 1e3);
            }
        }
        std::printf("| %d | %d | %.2f | %.2f | %.2f |\n", d, k, median(host_us), median(with_copies_us),
                    median(alone_us));
        cudaFree(d_a);
        cudaFree(d_pointers);
        cudaFree(d_info);
        cudaFreeHost(h_pinned);
    }
    cusolverDnDestroy(handle);
    return 0;
}
