/*
 * subset.cu: the branch and bound of best subset regression on the GPU
 * (cuda_module.h's subset table), below the nodes the engine expanded on the
 * host (engine/src/methods/bestsubset_search.c, whose rule this follows).
 *
 * Each warp takes a subtree (a task: a node and the children it has left)
 * and walks it depth first, as the CPU does: a child's triangular block is
 * its parent's without one column, made triangular again by Givens
 * rotations; lane l owns the block's columns l, l + 32, ..., the owner of
 * column i computes rotation i and hands its cosine and sine to the others
 * by a shuffle, so no lane ever reads another's column within a node. The
 * rotations use the CPU's operations without contraction (explicitly
 * rounded products and sums), so every node's block has the CPU's bits.
 *
 * The bounds (one best subset per size) live in device memory: a subset
 * that beats its size's bound lowers it (atomicMin on the bits of a
 * non-negative double, which order as the doubles do) and is written to the
 * found list; each warp re-reads the bounds every few nodes and cuts with
 * what it holds, never with a bound below the true one.
 *
 * Load balance: one launch of resident warps shares a queue of tasks. A warp
 * without a task claims the next ticket and waits for it; a working warp
 * that sees warps waiting gives away the shallowest frame of its stack with
 * children left (the largest subtree it holds) as a new task. The search
 * ends when every task queued has been finished: no warp is working then,
 * so none can queue another.
 */
#include "cuda_state.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstring>
#include <vector>

namespace statgpu_cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
/* Sizes per lane kept in registers: columns + 1 <= 129 sizes. */
constexpr int kBoundSlots = 5;
/* Nodes between re-reads of the bounds and looks at the queue. */
constexpr unsigned kRefresh = 32;
/* The fewest free columns of a frame worth giving away (a subtree of up to
 * 2^8 nodes). */
constexpr unsigned kGiveMinFree = 8;
/* Device memory the queue and the warps' stacks may take. */
constexpr size_t kQueueBytes = size_t(512) << 20;
constexpr size_t kStackBytes = size_t(1) << 30;
constexpr size_t kFoundCapacity = size_t(1) << 20;

/* A node as the warps keep it: the header of a task slot or stack frame. */
struct Frame {
    uint32_t m, k, next, pad;
    unsigned long long mask[2];
    uint8_t vars[STATGPU_CUDA_SUBSET_MOST_COLUMNS];
};

struct Found {
    double rss;
    uint32_t size, pad;
    unsigned long long mask[2];
};

struct Counters {
    unsigned int head;            /* tickets claimed */
    unsigned int tail;            /* tickets given to tasks (their slots being written or ready) */
    unsigned int finished;        /* tasks done */
    unsigned int found_overflow;
    unsigned int cancel;          /* set by the host: every warp stops */
    unsigned int pad;
    unsigned long long found_count;
    unsigned long long nodes;
};

struct Search {
    Frame *frames;                /* capacity task slots: headers */
    double *blocks;               /* capacity x slot_doubles */
    unsigned int *tickets;        /* capacity: t + 1 once ticket t's task is in slot t % capacity */
    unsigned int *consumed;       /* capacity: t + 1 once ticket t's task has been read out of its slot */
    unsigned int capacity;        /* slots, reused round the ring */
    size_t slot_doubles;          /* qmax^2 */
    Frame *stack_frames;          /* per warp: qmax frames */
    double *stack_blocks;         /* per warp: stack_doubles */
    size_t stack_doubles;
    int qmax;
    unsigned long long *bounds;   /* columns + 1 */
    int columns, min_size, max_size;
    double margin;
    Found *found;
    unsigned long long found_capacity;
    Counters *counters;
};

__device__ inline double bound_value(const unsigned long long *bounds, int size)
{
    return __longlong_as_double(static_cast<long long>(__ldcg(bounds + size)));
}

/* The bound of a size from the lanes' registers. */
__device__ inline double held_bound(const double (&held)[kBoundSlots], int size)
{
    const int slot = size / kWarp;
    double mine = held[0];
#pragma unroll
    for (int t = 1; t < kBoundSlots; ++t)
        if (slot == t)
            mine = held[t];
    return __shfl_sync(0xffffffffu, mine, size % kWarp);
}

/* Whether a subtree of subsets of RSS at least `bound`, of sizes lowest ..
 * highest, may hold a best one. */
__device__ inline bool may_hold(const Search &round, const double (&held)[kBoundSlots], double bound, int lowest,
                                int highest, int lane)
{
    lowest = max(lowest, round.min_size);
    highest = min(highest, round.max_size);
    bool mine = false;
#pragma unroll
    for (int t = 0; t < kBoundSlots; ++t) {
        const int size = lane + t * kWarp;
        if (size >= lowest && size <= highest && bound <= __dadd_rn(held[t], round.margin))
            mine = true;
    }
    return __any_sync(0xffffffffu, mine);
}

/* The child of the node (block p of order qp) that drops its column r
 * (relative to k): the block c of order qp - r - 1, by the CPU's rotations
 * (engine/src/methods/bestsubset_search.c, sg_block_drop), in the same
 * order with the same roundings. Lane l owns the child's columns l, l + 32,
 * ...; each carries the row the next rotation works on in a register (the
 * CPU reads it back from the block), so the chain from one rotation to the
 * next never waits for memory: each step reads one entry of the parent,
 * fetched a step ahead. Returns the child's RSS on every lane. */
constexpr int kColumnsPerLane = (STATGPU_CUDA_SUBSET_MOST_COLUMNS + 1 + kWarp - 1) / kWarp;

__device__ double drop_column(const double *p, int qp, int r, double *c, int lane)
{
    const int q = qp - r - 1;
    double carry[kColumnsPerLane], ahead[kColumnsPerLane];
    /* Row 0 of each owned column, and the rows below it one step ahead. */
#pragma unroll
    for (int t = 0; t < kColumnsPerLane; ++t) {
        const int column = lane + t * kWarp;
        carry[t] = column < q ? p[r + qp * (r + 1 + column)] : 0.0;
        ahead[t] = column < q && column >= 1 ? p[(r + 1) + qp * (r + 1 + column)] : 0.0;
    }
    double last = 0.0;
    for (int i = 0; i < q; ++i) {
        const int owner = i % kWarp, owner_slot = i / kWarp;
        double cs = 1.0, sn = 0.0;
        int skip = 0;
        if (lane == owner) {
            double a = carry[0];
#pragma unroll
            for (int t = 1; t < kColumnsPerLane; ++t)
                if (t == owner_slot)
                    a = carry[t];
            const double below = p[(r + 1 + i) + qp * (r + 1 + i)];
            const double rho = __dsqrt_rn(__dadd_rn(__dmul_rn(a, a), __dmul_rn(below, below)));
            if (rho == 0.0) {
                skip = 1;
                c[i + q * i] = a;
                last = a;
            } else {
                const double inverse = __ddiv_rn(1.0, rho);
                cs = __dmul_rn(a, inverse);
                sn = __dmul_rn(below, inverse);
                c[i + q * i] = rho;
                last = rho;
            }
        }
        skip = __shfl_sync(0xffffffffu, skip, owner);
        cs = __shfl_sync(0xffffffffu, cs, owner);
        sn = __shfl_sync(0xffffffffu, sn, owner);
        last = __shfl_sync(0xffffffffu, last, owner);
#pragma unroll
        for (int t = 0; t < kColumnsPerLane; ++t) {
            const int column = lane + t * kWarp;
            if (column <= i || column >= q)
                continue;
            const double upper = carry[t], lower = ahead[t];
            if (skip) {
                c[i + q * column] = upper;
                carry[t] = lower;
            } else {
                c[i + q * column] = __dadd_rn(__dmul_rn(cs, upper), __dmul_rn(sn, lower));
                carry[t] = __dsub_rn(__dmul_rn(cs, lower), __dmul_rn(sn, upper));
            }
            /* Row i + 2 of the column for the next step: still the parent's. */
            ahead[t] = i + 2 <= column ? p[(r + i + 2) + qp * (r + 1 + column)] : 0.0;
        }
    }
    __syncwarp();
    return __dmul_rn(last, last);
}

__device__ inline void copy_frame(Frame *to, const Frame *from, int lane)
{
    if (lane == 0) {
        to->m = from->m;
        to->k = from->k;
        to->next = from->next;
        to->mask[0] = from->mask[0];
        to->mask[1] = from->mask[1];
    }
    for (int v = lane; v < static_cast<int>(from->m); v += kWarp)
        to->vars[v] = from->vars[v];
}

__device__ inline double node_rss(const double *block, int q)
{
    const double last = block[(q - 1) + q * (q - 1)];
    return __dmul_rn(last, last);
}

/* Where the block of stack depth d starts: depth e holds (qmax - e)^2 doubles. */
__device__ inline size_t stack_offset(int qmax, int d)
{
    const auto squares = [](size_t n) { return n * (n + 1) * (2 * n + 1) / 6; };
    return squares(static_cast<size_t>(qmax)) - squares(static_cast<size_t>(qmax - d));
}

/* A view of a warp's stack of blocks, indexed by depth. */
struct StackBlocks {
    double *base;
    int qmax;
    __device__ double *operator[](int d) const { return base + stack_offset(qmax, d); }
};

/* A counter's value as the device's memory holds it (an ordinary load from
 * L2, no atomic: thousands of warps poll these). */
__device__ inline unsigned int load_acquire(const unsigned int *address)
{
    return *static_cast<const volatile unsigned int *>(address);
}

/* Gives a frame of the warp's stack away as a task (its children left),
 * while warps are waiting for one; the frame then has no children left
 * here. The queue's slots are reused round a ring: the task that held this
 * ticket's slot before was claimed (warps are waiting, so every ticket so
 * far is claimed) and is read out at once. */
__device__ void give_away(const Search &search, Frame *frame, const double *block, int lane)
{
    unsigned int ticket = 0xffffffffu;
    if (lane == 0) {
        unsigned int seen = load_acquire(&search.counters->tail);
        while (load_acquire(&search.counters->head) > seen) {
            const unsigned int before = atomicCAS(&search.counters->tail, seen, seen + 1);
            if (before == seen) {
                ticket = seen;
                break;
            }
            seen = before;
        }
        if (ticket != 0xffffffffu && ticket >= search.capacity) {
            const unsigned int previous = ticket - search.capacity + 1;
            while (load_acquire(search.consumed + ticket % search.capacity) != previous)
                __nanosleep(100);
            __threadfence();
        }
    }
    ticket = __shfl_sync(0xffffffffu, ticket, 0);
    if (ticket == 0xffffffffu)
        return;
    const unsigned int slot = ticket % search.capacity;
    copy_frame(search.frames + slot, frame, lane);
    const int q = static_cast<int>(frame->m - frame->k) + 1;
    double *target = search.blocks + slot * search.slot_doubles;
    for (int i = lane; i < q * q; i += kWarp)
        target[i] = block[i];
    __syncwarp();
    if (lane == 0) {
        __threadfence();
        atomicExch(search.tickets + slot, ticket + 1);
        frame->next = frame->k;
    }
    __syncwarp();
}

/* Waits for ticket's task; false when the search has ended first. */
__device__ bool wait_for(const Search &search, unsigned int ticket, int lane)
{
    int ready = 0;
    if (lane == 0) {
        for (;;) {
            if (load_acquire(search.tickets + ticket % search.capacity) == ticket + 1) {
                ready = 1;
                break;
            }
            /* finished first, then tail: equal means nothing is running that could queue more. */
            const unsigned int finished = load_acquire(&search.counters->finished);
            const unsigned int tail = load_acquire(&search.counters->tail);
            if ((finished == tail && ticket >= tail) || load_acquire(&search.counters->cancel) != 0)
                break;
            __nanosleep(2000);
        }
        __threadfence();
    }
    return __shfl_sync(0xffffffffu, ready, 0) != 0;
}

__global__ void __launch_bounds__(kWarp * kWarpsPerBlock) search_tree(Search search)
{
    const int lane = threadIdx.x % kWarp;
    const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
    Frame *frames = search.stack_frames + warp * search.qmax;
    const StackBlocks blocks{ search.stack_blocks + warp * search.stack_doubles, search.qmax };
    double held[kBoundSlots];
    unsigned long long nodes = 0;
    for (;;) {
        unsigned int task = 0;
        if (lane == 0)
            task = atomicAdd(&search.counters->head, 1u);
        task = __shfl_sync(0xffffffffu, task, 0);
        if (!wait_for(search, task, lane))
            break;
#pragma unroll
        for (int t = 0; t < kBoundSlots; ++t) {
            const int size = lane + t * kWarp;
            held[t] = size <= search.columns ? bound_value(search.bounds, size) : 0.0;
        }
        {
            const unsigned int slot = task % search.capacity;
            const Frame *source = search.frames + slot;
            if (lane == 0) {
                frames[0].m = __ldcg(&source->m);
                frames[0].k = __ldcg(&source->k);
                frames[0].next = __ldcg(&source->next);
                frames[0].mask[0] = __ldcg(&source->mask[0]);
                frames[0].mask[1] = __ldcg(&source->mask[1]);
            }
            const int m = static_cast<int>(__ldcg(&source->m)), q = m - static_cast<int>(__ldcg(&source->k)) + 1;
            for (int v = lane; v < m; v += kWarp)
                frames[0].vars[v] = __ldcg(&source->vars[v]);
            const double *block = search.blocks + size_t(slot) * search.slot_doubles;
            for (int i = lane; i < q * q; i += kWarp)
                blocks[0][i] = __ldcg(block + i);
            __syncwarp();
            if (lane == 0) {
                __threadfence();
                atomicExch(search.consumed + slot, task + 1);
            }
        }
        __syncwarp();
        int depth = 0;
        unsigned int spent = 0;
        for (;;) {
            Frame *node = frames + depth;
            const int m = static_cast<int>(node->m), k = static_cast<int>(node->k);
            const int next = static_cast<int>(node->next);
            if (next <= k) {
                if (depth == 0)
                    break;
                --depth;
                continue;
            }
            const int j = next - 1;
            __syncwarp();
            if (lane == 0)
                node->next = static_cast<uint32_t>(j);
            __syncwarp();
            const int qp = m - k + 1;
            if (!may_hold(search, held, node_rss(blocks[depth], qp), j, m - 1, lane))
                continue;
            const double rss = drop_column(blocks[depth], qp, j - k, blocks[depth + 1], lane);
            ++nodes;
            ++spent;
            const int size = m - 1;
            unsigned long long mask[2] = { node->mask[0], node->mask[1] };
            const int removed = node->vars[j];
            mask[removed / 64] &= ~(1ull << (removed % 64));
            if (size >= search.min_size && size <= search.max_size && rss <= held_bound(held, size)) {
                if (lane == 0) {
                    atomicMin(search.bounds + size, static_cast<unsigned long long>(__double_as_longlong(rss)));
                    const unsigned long long at = atomicAdd(&search.counters->found_count, 1ull);
                    if (at < search.found_capacity) {
                        Found entry;
                        entry.rss = rss;
                        entry.size = static_cast<uint32_t>(size);
                        entry.pad = 0;
                        entry.mask[0] = mask[0];
                        entry.mask[1] = mask[1];
                        search.found[at] = entry;
                    } else {
                        atomicExch(&search.counters->found_overflow, 1u);
                    }
                }
                if (lane == size % kWarp) {
#pragma unroll
                    for (int t = 0; t < kBoundSlots; ++t)
                        if (t == size / kWarp && rss < held[t])
                            held[t] = rss;
                }
            }
            if (j + 2 <= m && may_hold(search, held, rss, j, m - 2, lane)) {
                Frame *child = frames + depth + 1;
                if (lane == 0) {
                    child->m = static_cast<uint32_t>(m - 1);
                    child->k = static_cast<uint32_t>(j);
                    child->next = static_cast<uint32_t>(m - 1);
                    child->mask[0] = mask[0];
                    child->mask[1] = mask[1];
                }
                for (int v = lane; v < m - 1; v += kWarp)
                    child->vars[v] = node->vars[v < j ? v : v + 1];
                __syncwarp();
                ++depth;
            }
            if (spent % kRefresh == 0) {
#pragma unroll
                for (int t = 0; t < kBoundSlots; ++t) {
                    const int s = lane + t * kWarp;
                    if (s <= search.columns)
                        held[t] = fmin(held[t], bound_value(search.bounds, s));
                }
                if (load_acquire(&search.counters->cancel) != 0)
                    break;
                /* Warps waiting: give the largest subtree held away. */
                const unsigned int head = load_acquire(&search.counters->head);
                const unsigned int tail = load_acquire(&search.counters->tail);
                if (head > tail) {
                    for (int d = 0; d <= depth; ++d)
                        if (frames[d].next >= frames[d].k + 2 && frames[d].m - frames[d].k >= kGiveMinFree) {
                            give_away(search, frames + d, blocks[d], lane);
                            break;
                        }
                }
            }
        }
        __syncwarp();
        if (lane == 0) {
            __threadfence();
            atomicAdd(&search.counters->finished, 1u);
        }
    }
    if (lane == 0)
        atomicAdd(&search.counters->nodes, nodes);
}

} /* namespace */

statgpu_cuda_status subset_search(statgpu_cuda_state *state, const statgpu_cuda_subset_node *nodes,
                                  size_t node_count, const double *blocks, size_t block_doubles, size_t columns,
                                  size_t min_size, size_t max_size, double margin, double *bounds,
                                  statgpu_cuda_subset_found *found, size_t found_capacity, size_t *found_count,
                                  uint64_t *nodes_evaluated, statgpu_cuda_cancel_fn cancelled,
                                  void *cancel_user_data, statgpu_cuda_timing *timing, char *msg, size_t msg_bytes)
{
    CallStatus call(msg, msg_bytes);
    if (state == nullptr || (nodes == nullptr && node_count > 0) || blocks == nullptr || bounds == nullptr
        || found == nullptr || found_count == nullptr || nodes_evaluated == nullptr || columns == 0
        || columns > STATGPU_CUDA_SUBSET_MOST_COLUMNS || max_size > columns || min_size > max_size) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "subset_search: invalid arguments");
        return call.status();
    }
    *found_count = 0;
    *nodes_evaluated = 0;
    if (timing != nullptr)
        *timing = statgpu_cuda_timing{ 0.0, 0.0 };
    int qmax = 1;
    for (size_t t = 0; t < node_count; ++t) {
        if (nodes[t].m > columns || nodes[t].k > nodes[t].m || nodes[t].child_end > nodes[t].m
            || nodes[t].block_offset + size_t(nodes[t].m - nodes[t].k + 1) * (nodes[t].m - nodes[t].k + 1)
                   > block_doubles) {
            call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "subset_search: a node does not fit its sizes");
            return call.status();
        }
        qmax = std::max(qmax, static_cast<int>(nodes[t].m - nodes[t].k) + 1);
    }
    if (node_count == 0)
        return STATGPU_CUDA_OK;
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();
    cudaStream_t stream = state->stream;
    if (!call.check(cudaEventRecord(state->events[kEventStart], stream), "timing the subset search"))
        return call.status();

    /* The queue's slots: a frame and a block of qmax^2 doubles each. */
    const size_t slot_doubles = size_t(qmax) * qmax;
    const size_t slot_bytes = sizeof(Frame) + slot_doubles * sizeof(double) + 2 * sizeof(unsigned int);
    size_t capacity = std::max(node_count, kQueueBytes / slot_bytes);
    capacity = std::min<size_t>(capacity, 0xfffffff0u);
    size_t stack_doubles = 0;
    for (int d = 0; d < qmax; ++d)
        stack_doubles += size_t(qmax - d) * (qmax - d);
    const size_t warp_bytes = stack_doubles * sizeof(double) + size_t(qmax) * sizeof(Frame);
    /* Only resident warps: a waiting warp must never keep a working one from running. */
    int resident = 0;
    if (!call.check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, search_tree, kWarp * kWarpsPerBlock, 0),
                    "sizing the subset search"))
        return call.status();
    size_t grid = size_t(state->multiprocessor_count) * size_t(std::max(resident, 1));
    grid = std::max<size_t>(1, std::min(grid, kStackBytes / (warp_bytes * kWarpsPerBlock)));
    const size_t warps = grid * kWarpsPerBlock;
    const size_t found_slots = std::max<size_t>(1, std::min(found_capacity, kFoundCapacity));

    Frame *d_frames = nullptr;
    double *d_blocks = nullptr;
    unsigned int *d_tickets = nullptr;
    unsigned int *d_consumed = nullptr;
    Frame *d_stack_frames = nullptr;
    double *d_stack_blocks = nullptr;
    unsigned long long *d_bounds = nullptr;
    Found *d_found = nullptr;
    Counters *d_counters = nullptr;
    /* In the state's workspace, which only grows: no cudaMalloc (nor the
     * cudaFree that waits for the device) once a search this size has run. */
    const SessionArray arrays[] = {
        { reinterpret_cast<void **>(&d_frames), capacity * sizeof(Frame) },
        { reinterpret_cast<void **>(&d_blocks), capacity * slot_doubles * sizeof(double) },
        { reinterpret_cast<void **>(&d_tickets), capacity * sizeof(unsigned int) },
        { reinterpret_cast<void **>(&d_consumed), capacity * sizeof(unsigned int) },
        { reinterpret_cast<void **>(&d_stack_frames), warps * size_t(qmax) * sizeof(Frame) },
        { reinterpret_cast<void **>(&d_stack_blocks), warps * stack_doubles * sizeof(double) },
        { reinterpret_cast<void **>(&d_bounds), (columns + 1) * sizeof(unsigned long long) },
        { reinterpret_cast<void **>(&d_counters), sizeof(Counters) },
        { reinterpret_cast<void **>(&d_found), found_slots * sizeof(Found) },
    };
    if (!call.check(carve_arrays(&state->subset, arrays, sizeof arrays / sizeof *arrays),
                    "allocating the subset search"))
        return call.status();

    /* The engine's nodes as the first tasks, ready. */
    std::vector<Frame> frames(node_count);
    std::vector<double> slot_blocks(node_count * slot_doubles, 0.0);
    std::vector<unsigned int> tickets(node_count);
    for (size_t t = 0; t < node_count; ++t) {
        Frame &frame = frames[t];
        std::memset(&frame, 0, sizeof frame);
        frame.m = nodes[t].m;
        frame.k = nodes[t].k;
        frame.next = nodes[t].child_end;
        frame.mask[0] = nodes[t].mask[0];
        frame.mask[1] = nodes[t].mask[1];
        std::memcpy(frame.vars, nodes[t].vars, sizeof frame.vars);
        const size_t q = nodes[t].m - nodes[t].k + 1;
        std::memcpy(slot_blocks.data() + t * slot_doubles, blocks + nodes[t].block_offset, q * q * sizeof(double));
        tickets[t] = static_cast<unsigned int>(t + 1);
    }
    std::vector<unsigned long long> bound_bits(columns + 1);
    for (size_t s = 0; s <= columns; ++s) {
        const double value = bounds[s] >= 0.0 ? bounds[s] : 0.0;  /* RSS are never negative */
        std::memcpy(&bound_bits[s], &value, sizeof value);
    }
    Counters counters{};
    counters.tail = static_cast<unsigned int>(node_count);
    if (!call.check(cudaMemcpyAsync(d_frames, frames.data(), node_count * sizeof(Frame), cudaMemcpyHostToDevice,
                                    stream), "copying the subset search's tasks")
        || !call.check(cudaMemcpyAsync(d_blocks, slot_blocks.data(), slot_blocks.size() * sizeof(double),
                                       cudaMemcpyHostToDevice, stream), "copying the subset search's tasks")
        || !call.check(cudaMemsetAsync(d_tickets, 0, capacity * sizeof(unsigned int), stream),
                       "clearing the subset search's queue")
        || !call.check(cudaMemsetAsync(d_consumed, 0, capacity * sizeof(unsigned int), stream),
                       "clearing the subset search's queue")
        || !call.check(cudaMemcpyAsync(d_tickets, tickets.data(), node_count * sizeof(unsigned int),
                                       cudaMemcpyHostToDevice, stream), "copying the subset search's tasks")
        || !call.check(cudaMemcpyAsync(d_bounds, bound_bits.data(), bound_bits.size() * sizeof(unsigned long long),
                                       cudaMemcpyHostToDevice, stream), "copying the subset search's bounds")
        || !call.check(cudaMemcpyAsync(d_counters, &counters, sizeof counters, cudaMemcpyHostToDevice, stream),
                       "setting the counters")
        || !call.check(cudaEventRecord(state->events[kEventData], stream), "timing the subset search"))
        return call.status();

    Search search;
    search.frames = d_frames;
    search.blocks = d_blocks;
    search.tickets = d_tickets;
    search.consumed = d_consumed;
    search.capacity = static_cast<unsigned int>(capacity);
    search.slot_doubles = slot_doubles;
    search.stack_frames = d_stack_frames;
    search.stack_blocks = d_stack_blocks;
    search.stack_doubles = stack_doubles;
    search.qmax = qmax;
    search.bounds = d_bounds;
    search.columns = static_cast<int>(columns);
    search.min_size = static_cast<int>(min_size);
    search.max_size = static_cast<int>(max_size);
    search.margin = margin;
    search.found = d_found;
    search.found_capacity = found_slots;
    search.counters = d_counters;
    search_tree<<<static_cast<unsigned int>(grid), kWarp * kWarpsPerBlock, 0, stream>>>(search);
    if (!call.check(cudaGetLastError(), "launching the subset search")
        || !call.check(cudaEventRecord(state->events[kEventEnd], stream), "timing the subset search"))
        return call.status();
    /* Wait, asking the caller now and then whether to stop: a stop is a
     * flag the warps read, written from a stream of its own while the
     * search runs. */
    bool stopped = false;
    for (unsigned polls = 1;; ++polls) {
        const cudaError_t done = cudaEventQuery(state->events[kEventEnd]);
        if (done == cudaSuccess)
            break;
        if (done != cudaErrorNotReady) {
            call.check(done, "running the subset search");
            return call.status();
        }
        if (!stopped && cancelled != nullptr && (polls == 1 || polls % 50 == 0) && cancelled(cancel_user_data)) {
            stopped = true;
            cudaStream_t side = nullptr;
            static const unsigned int one = 1;
            if (!call.check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "stopping the subset search"))
                return call.status();
            const cudaError_t written = cudaMemcpyAsync(&d_counters->cancel, &one, sizeof one, cudaMemcpyHostToDevice,
                                                        side);
            const cudaError_t synced = cudaStreamSynchronize(side);
            cudaStreamDestroy(side);
            if (!call.check(written, "stopping the subset search") || !call.check(synced, "stopping the subset search"))
                return call.status();
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (stopped) {
        (void)cudaStreamSynchronize(stream);
        call.fail(STATGPU_CUDA_CANCELLED, "cancelled");
        return call.status();
    }
    if (!call.check(cudaMemcpyAsync(&counters, d_counters, sizeof counters, cudaMemcpyDeviceToHost, stream),
                    "reading the subset search's counters")
        || !call.check(cudaStreamSynchronize(stream), "running the subset search"))
        return call.status();
    if (counters.found_overflow != 0) {
        call.fail(STATGPU_CUDA_OUT_OF_MEMORY, "the GPU's subset search met more candidates than it can hold");
        return call.status();
    }
    const size_t count = static_cast<size_t>(std::min<unsigned long long>(counters.found_count, found_slots));
    std::vector<Found> entries(count);
    if (count > 0
        && !call.check(cudaMemcpyAsync(entries.data(), d_found, count * sizeof(Found), cudaMemcpyDeviceToHost, stream),
                       "reading the subsets found"))
        return call.status();
    if (!call.check(cudaMemcpyAsync(bound_bits.data(), d_bounds, bound_bits.size() * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream), "reading the bounds")
        || !call.check(cudaStreamSynchronize(stream), "running the subset search"))
        return call.status();
    if (count > found_capacity) {
        call.fail(STATGPU_CUDA_OUT_OF_MEMORY, "the GPU's subset search met more candidates than the engine holds");
        return call.status();
    }
    for (size_t i = 0; i < count; ++i) {
        found[i].rss = entries[i].rss;
        found[i].size = entries[i].size;
        found[i].mask[0] = entries[i].mask[0];
        found[i].mask[1] = entries[i].mask[1];
    }
    for (size_t s = 0; s <= columns; ++s)
        std::memcpy(&bounds[s], &bound_bits[s], sizeof(double));
    *found_count = count;
    *nodes_evaluated = counters.nodes;
    if (timing != nullptr) {
        timing->transfer_seconds = elapsed_ms(state->events[kEventStart], state->events[kEventData]) / 1e3;
        timing->compute_seconds = elapsed_ms(state->events[kEventData], state->events[kEventEnd]) / 1e3;
    }
    return STATGPU_CUDA_OK;
}

} /* namespace statgpu_cuda */
