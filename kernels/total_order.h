/*
 * total_order.h: floating-point numbers as unsigned keys whose unsigned order
 * is IEEE 754 total order (-Inf < negatives < -0.0 < +0.0 < positives < +Inf):
 * 64-bit keys for doubles, 32-bit keys for floats. Shared by the host planners
 * and the device kernels.
 *
 * Sorting these keys with a radix sort gives exactly the order that a CPU sort
 * with a total-order comparison gives, bit for bit: -0.0 before +0.0,
 * infinities at the ends, subnormals in place. NaNs land outside
 * [key(-Inf), key(+Inf)], which is how the kernels recognise them.
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
constexpr uint32_t kSignBit32 = 0x80000000u;

/* Keys of -Inf and +Inf; every NaN's key lies outside this range. */
constexpr uint64_t kKeyNegativeInfinity = 0x000FFFFFFFFFFFFFull;
constexpr uint64_t kKeyPositiveInfinity = 0xFFF0000000000000ull;
constexpr uint32_t kKeyNegativeInfinity32 = 0x007FFFFFu;
constexpr uint32_t kKeyPositiveInfinity32 = 0xFF800000u;

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

STATGPU_HOST_DEVICE inline uint32_t float_to_bits(float value)
{
#if defined(__CUDA_ARCH__)
    return static_cast<uint32_t>(__float_as_uint(value));
#else
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
#endif
}

STATGPU_HOST_DEVICE inline float bits_to_float(uint32_t bits)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
#endif
}

/* Negative numbers have all bits flipped (a larger magnitude must give a
 * smaller key); non-negative numbers only the sign bit (so they sort above
 * every negative). These take the raw bit patterns, so kernels can key data
 * without going through a floating-point register. */
STATGPU_HOST_DEVICE inline uint64_t key_from_bits(uint64_t bits)
{
    const uint64_t mask = static_cast<uint64_t>(static_cast<int64_t>(bits) >> 63) | kSignBit;
    return bits ^ mask;
}

STATGPU_HOST_DEVICE inline uint32_t key_from_bits(uint32_t bits)
{
    const uint32_t mask = static_cast<uint32_t>(static_cast<int32_t>(bits) >> 31) | kSignBit32;
    return bits ^ mask;
}

STATGPU_HOST_DEVICE inline uint64_t bits_from_key(uint64_t key)
{
    const uint64_t mask = (key & kSignBit) ? kSignBit : ~uint64_t{0};
    return key ^ mask;
}

STATGPU_HOST_DEVICE inline uint32_t bits_from_key(uint32_t key)
{
    const uint32_t mask = (key & kSignBit32) ? kSignBit32 : ~uint32_t{0};
    return key ^ mask;
}

STATGPU_HOST_DEVICE inline uint64_t total_order_key(double value) { return key_from_bits(double_to_bits(value)); }
STATGPU_HOST_DEVICE inline uint32_t total_order_key(float value) { return key_from_bits(float_to_bits(value)); }

STATGPU_HOST_DEVICE inline double total_order_value(uint64_t key) { return bits_to_double(bits_from_key(key)); }
STATGPU_HOST_DEVICE inline float total_order_float(uint32_t key) { return bits_to_float(bits_from_key(key)); }

STATGPU_HOST_DEVICE inline bool key_is_nan(uint64_t key)
{
    return key < kKeyNegativeInfinity || key > kKeyPositiveInfinity;
}

STATGPU_HOST_DEVICE inline bool key_is_nan(uint32_t key)
{
    return key < kKeyNegativeInfinity32 || key > kKeyPositiveInfinity32;
}

/* The value of a key of the given width (32: a float's key), widened exactly
 * to double. Planners carry every key in 64 bits. */
STATGPU_HOST_DEVICE inline double key_to_double(uint64_t key, uint32_t key_bits)
{
    if (key_bits == 32)
        return static_cast<double>(total_order_float(static_cast<uint32_t>(key)));
    return total_order_value(key);
}

/* The largest key of the given width. */
STATGPU_HOST_DEVICE inline uint64_t max_key(uint32_t key_bits)
{
    return key_bits == 32 ? uint64_t{0xFFFFFFFFu} : ~uint64_t{0};
}

/* Number of bits needed to write x: 0 for 0, 64 for values with the top bit set. */
STATGPU_HOST_DEVICE inline int bit_length(uint64_t x)
{
#if defined(__CUDA_ARCH__)
    return 64 - __clzll(static_cast<long long>(x));
#else
    return x == 0 ? 0 : 64 - __builtin_clzll(x);
#endif
}

/* Key type and width of each element type the kernels take. */
template <typename Value> struct KeyOf;
template <> struct KeyOf<double> { using type = uint64_t; static constexpr uint32_t bits = 64; };
template <> struct KeyOf<float>  { using type = uint32_t; static constexpr uint32_t bits = 32; };

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_TOTAL_ORDER_H */
