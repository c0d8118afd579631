/*
 * total_order.h: doubles as unsigned 64-bit keys whose unsigned order is IEEE 754
 * total order (-Inf < negatives < -0.0 < +0.0 < positives < +Inf), shared by the
 * host planner and the device kernels.
 *
 * Sorting these keys with a radix sort gives exactly the order that a CPU sort
 * with a total-order comparison gives, bit for bit: -0.0 before +0.0, infinities
 * at the ends, subnormals in place. NaNs land outside [key(-Inf), key(+Inf)],
 * which is how the planner recognises and drops them.
 */
#ifndef STATGPU_KERNELS_TOTAL_ORDER_H
#define STATGPU_KERNELS_TOTAL_ORDER_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#  define STATGPU_HOST_DEVICE __host__ __device__
#else
#  define STATGPU_HOST_DEVICE
#endif

namespace statgpu_cuda {

constexpr uint64_t kSignBit = 0x8000000000000000ull;

STATGPU_HOST_DEVICE inline uint64_t double_to_bits(double value)
{
#if defined(__CUDA_ARCH__)
    return static_cast<uint64_t>(__double_as_longlong(value));
#else
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
#endif
}

STATGPU_HOST_DEVICE inline double bits_to_double(uint64_t bits)
{
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
#endif
}

/* Negative numbers have all bits flipped (a larger magnitude must give a smaller
 * key); non-negative numbers only the sign bit (so they sort above every
 * negative). */
STATGPU_HOST_DEVICE inline uint64_t total_order_key(double value)
{
    const uint64_t bits = double_to_bits(value);
    const uint64_t mask = static_cast<uint64_t>(static_cast<int64_t>(bits) >> 63) | kSignBit;
    return bits ^ mask;
}

STATGPU_HOST_DEVICE inline double total_order_value(uint64_t key)
{
    const uint64_t mask = (key & kSignBit) ? kSignBit : ~uint64_t{0};
    return bits_to_double(key ^ mask);
}

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_TOTAL_ORDER_H */
