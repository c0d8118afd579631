/*
 * host_transfer.cpp: staged copies between pageable host memory and the
 * device through a team of host threads (see host_transfer.h).
 */
#include "host_transfer.h"
#include "cuda_state.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace statgpu_cuda {

namespace {

/* Bytes of a chunk, and of each of a lane's two page-locked slots: small
 * enough that the first chunks reach the bus early, large enough that a
 * lane's bookkeeping (an event wait, a copy call) is a small part of its
 * time; eight lanes hold 64 MB of page-locked memory. */
constexpr size_t kChunkBytes = size_t(4) << 20;

/* Below this, a copy takes the driver's path: one call, no threads woken. */
constexpr size_t kDriverPathBytes = size_t(4) << 20;

/* A lane: its stream, its two slots and their events. */
struct Lane {
    cudaStream_t stream = nullptr;
    char *slot[2] = {};
    cudaEvent_t slot_done[2] = {};   /* the slot's last bus copy */
    cudaEvent_t finished = nullptr;  /* the lane's last copy of a transfer */
    cudaError_t error = cudaSuccess;
};

/* The pieces of one transfer as one run of bytes cut into chunks. */
class Plan {
public:
    Plan(const StagedPiece *pieces, size_t count) : pieces_(pieces), count_(count), starts_(count + 1, 0)
    {
        for (size_t p = 0; p < count; ++p)
            starts_[p + 1] = starts_[p] + pieces[p].bytes;
    }

    size_t total() const { return starts_[count_]; }
    size_t chunk_count() const { return (total() + kChunkBytes - 1) / kChunkBytes; }

    /* Calls visit(piece, offset in the piece, bytes, offset in the chunk)
     * for the parts of the pieces that chunk c covers, in order. */
    template <typename Visit> void each_part(size_t c, Visit &&visit) const
    {
        const size_t begin = c * kChunkBytes, end = std::min(begin + kChunkBytes, total());
        size_t p = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), begin) - starts_.begin()) - 1;
        for (size_t at = begin; at < end; ++p) {
            const size_t piece_end = std::min(starts_[p + 1], end);
            if (piece_end > at)
                visit(pieces_[p], at - starts_[p], piece_end - at, at - begin);
            at = std::max(at, piece_end);
        }
    }

    /* Issues the bus copies of chunk c between slot and the device on
     * stream, one per run of parts that follow each other on the device. */
    cudaError_t copy_chunk(size_t c, char *slot, cudaMemcpyKind kind, cudaStream_t stream) const
    {
        cudaError_t error = cudaSuccess;
        char *run_device = nullptr;
        size_t run_at = 0, run_bytes = 0;
        auto flush = [&]() {
            if (run_bytes > 0 && error == cudaSuccess)
                error = kind == cudaMemcpyHostToDevice
                            ? cudaMemcpyAsync(run_device, slot + run_at, run_bytes, kind, stream)
                            : cudaMemcpyAsync(slot + run_at, run_device, run_bytes, kind, stream);
            run_bytes = 0;
        };
        each_part(c, [&](const StagedPiece &piece, size_t offset, size_t bytes, size_t at) {
            char *device = static_cast<char *>(piece.device) + offset;
            if (run_bytes > 0 && run_device + run_bytes == device) {
                run_bytes += bytes;
                return;
            }
            flush();
            run_device = device;
            run_at = at;
            run_bytes = bytes;
        });
        flush();
        return error;
    }

private:
    const StagedPiece *pieces_;
    size_t count_;
    std::vector<size_t> starts_;  /* piece p covers [starts_[p], starts_[p + 1]) */
};

} /* namespace */

/* The host threads of a state's transfers: lane 0 is the calling thread,
 * lane l > 0 a thread of its own that sleeps between transfers. */
class TransferTeam {
public:
    explicit TransferTeam(int device) : device_(device) {}

    ~TransferTeam()
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread &thread : threads_)
            thread.join();
        for (Lane &lane : lanes_) {
            for (int s = 0; s < 2; ++s) {
                if (lane.slot_done[s] != nullptr)
                    (void)cudaEventSynchronize(lane.slot_done[s]);
                if (lane.slot[s] != nullptr)
                    (void)cudaFreeHost(lane.slot[s]);
                if (lane.slot_done[s] != nullptr)
                    (void)cudaEventDestroy(lane.slot_done[s]);
            }
            if (lane.finished != nullptr)
                (void)cudaEventDestroy(lane.finished);
            if (lane.stream != nullptr)
                (void)cudaStreamDestroy(lane.stream);
        }
        if (ready_ != nullptr)
            (void)cudaEventDestroy(ready_);
    }

    /* Makes up to `wanted` lanes; at least one, or the first failure. */
    cudaError_t open(int wanted)
    {
        cudaError_t error = cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming);
        if (error != cudaSuccess) {
            ready_ = nullptr;
            return error;
        }
        lanes_.reserve(static_cast<size_t>(wanted));
        for (int l = 0; l < wanted; ++l) {
            lanes_.emplace_back();
            Lane &lane = lanes_.back();
            error = cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking);
            if (error != cudaSuccess)
                lane.stream = nullptr;
            for (int s = 0; s < 2 && error == cudaSuccess; ++s) {
                void *slot = nullptr;
                error = cudaMallocHost(&slot, kChunkBytes);
                lane.slot[s] = error == cudaSuccess ? static_cast<char *>(slot) : nullptr;
                if (error == cudaSuccess)
                    error = cudaEventCreateWithFlags(&lane.slot_done[s], cudaEventDisableTiming);
                if (error != cudaSuccess)
                    lane.slot_done[s] = nullptr;
            }
            if (error == cudaSuccess)
                error = cudaEventCreateWithFlags(&lane.finished, cudaEventDisableTiming);
            if (error != cudaSuccess) {
                lane.finished = nullptr;
                break;
            }
            if (l > 0) {
                try {
                    threads_.emplace_back([this, l]() { work(l); });
                } catch (const std::system_error &) {
                    break;  /* no more threads: the lanes so far will do */
                }
            }
        }
        /* A lane that failed half-made is dropped; with none left, fail. */
        const size_t usable = threads_.size() + 1;
        if (lanes_.size() > usable || error != cudaSuccess) {
            if (usable == 1 && error != cudaSuccess)
                return error;
            (void)cudaGetLastError();
        }
        lane_count_ = static_cast<int>(std::min(lanes_.size(), usable));
        return cudaSuccess;
    }

    int lane_count() const { return lane_count_; }
    Lane &lane(int l) { return lanes_[static_cast<size_t>(l)]; }
    cudaEvent_t ready() const { return ready_; }

    /* Runs job(l) for every lane l below used, lane 0 on the calling
     * thread; returns when all have returned. */
    void run(int used, const std::function<void(int)> &job)
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &job;
            used_ = used;
            running_ = used - 1;
            ++round_;
        }
        wake_.notify_all();
        job(0);
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this]() { return running_ == 0; });
        job_ = nullptr;
    }

private:
    void work(int l)
    {
        (void)cudaSetDevice(device_);
        uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&]() { return stop_ || round_ != seen; });
            if (stop_)
                return;
            seen = round_;
            if (l >= used_)
                continue;
            const std::function<void(int)> *job = job_;
            lock.unlock();
            (*job)(l);
            lock.lock();
            if (--running_ == 0)
                done_.notify_all();
        }
    }

    int device_;
    std::vector<Lane> lanes_;
    int lane_count_ = 0;
    cudaEvent_t ready_ = nullptr;
    std::vector<std::thread> threads_;  /* threads_[l - 1] runs lane l */
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(int)> *job_ = nullptr;
    int used_ = 0;
    int running_ = 0;
    uint64_t round_ = 0;
    bool stop_ = false;
};

namespace {

/* The lanes a state's transfers use: its host threads, at most
 * kMostTransferLanes; STATGPU_CUDA_TRANSFER_THREADS sets them for
 * measurements. */
int wanted_lanes(const statgpu_cuda_state *state)
{
    int wanted = state->host_threads;
    if (const char *text = std::getenv("STATGPU_CUDA_TRANSFER_THREADS")) {
        const int asked = std::atoi(text);
        if (asked >= 1)
            wanted = asked;
    }
    return std::max(1, std::min(wanted, kMostTransferLanes));
}

cudaError_t ensure_team(statgpu_cuda_state *state)
{
    if (state->transfer != nullptr)
        return cudaSuccess;
    TransferTeam *team = new (std::nothrow) TransferTeam(state->device);
    if (team == nullptr)
        return cudaErrorMemoryAllocation;
    const cudaError_t error = team->open(wanted_lanes(state));
    if (error != cudaSuccess) {
        delete team;
        return error;
    }
    state->transfer = team;
    return cudaSuccess;
}

/* True when every piece's host memory is page-locked already (the bus
 * reads it directly) or the copy is too small to share. */
bool driver_path(const StagedPiece *pieces, size_t count, size_t total)
{
    if (total < kDriverPathBytes)
        return true;
    for (size_t p = 0; p < count; ++p) {
        cudaPointerAttributes attributes;
        if (cudaPointerGetAttributes(&attributes, pieces[p].host) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        if (attributes.type != cudaMemoryTypeHost)
            return false;
    }
    return true;
}

/* Each piece by the driver's own path, on stream. */
cudaError_t driver_copy(const StagedPiece *pieces, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)cudaGetLastError();  /* a failure to make the lanes is not the copy's */
    cudaError_t error = cudaSuccess;
    for (size_t p = 0; p < count && error == cudaSuccess; ++p)
        error = kind == cudaMemcpyHostToDevice
                    ? cudaMemcpyAsync(pieces[p].device, pieces[p].host, pieces[p].bytes, kind, stream)
                    : cudaMemcpyAsync(pieces[p].host, pieces[p].device, pieces[p].bytes, kind, stream);
    return error;
}

/* Runs lane_job on as many lanes as there are chunks (at most all of them),
 * after the work queued on stream; returns the first lane's failure. */
cudaError_t run_lanes(statgpu_cuda_state *state, size_t chunks, cudaStream_t stream,
                      const std::function<void(Lane &, int, int)> &lane_job)
{
    TransferTeam &team = *state->transfer;
    const int used = static_cast<int>(std::min<size_t>(static_cast<size_t>(team.lane_count()), chunks));
    cudaError_t error = cudaEventRecord(team.ready(), stream);
    if (error != cudaSuccess)
        return error;
    team.run(used, [&](int l) {
        Lane &lane = team.lane(l);
        lane.error = cudaStreamWaitEvent(lane.stream, team.ready(), 0);
        if (lane.error == cudaSuccess)
            lane_job(lane, l, used);
    });
    for (int l = 0; l < used && error == cudaSuccess; ++l)
        error = team.lane(l).error;
    return error;
}

} /* namespace */

void add_columns(std::vector<StagedPiece> *pieces, const double *host, size_t n_rows, size_t n_cols, size_t ld,
                 double *device)
{
    const size_t runs = ld == n_rows ? 1 : n_cols, run_rows = ld == n_rows ? n_rows * n_cols : n_rows;
    for (size_t c = 0; c < runs; ++c)
        pieces->push_back({const_cast<double *>(host + c * ld), device + c * n_rows, run_rows * sizeof(double)});
}

cudaError_t upload_staged(statgpu_cuda_state *state, const StagedPiece *pieces, size_t count, cudaStream_t stream,
                          const ArrivalWork *arrived)
{
    const Plan plan(pieces, count);
    if (driver_path(pieces, count, plan.total()) || ensure_team(state) != cudaSuccess) {
        cudaError_t error = driver_copy(pieces, count, cudaMemcpyHostToDevice, stream);
        for (size_t p = 0; arrived != nullptr && p < count && error == cudaSuccess; ++p)
            if (pieces[p].bytes > 0)
                error = (*arrived)(pieces[p].device, pieces[p].bytes, stream);
        return error;
    }
    cudaError_t error = run_lanes(state, plan.chunk_count(), stream, [&](Lane &lane, int l, int used) {
        cudaError_t &lane_error = lane.error;
        size_t turn = 0;
        for (size_t c = static_cast<size_t>(l); lane_error == cudaSuccess && c < plan.chunk_count();
             c += static_cast<size_t>(used), ++turn) {
            const int s = static_cast<int>(turn & 1);
            /* The slot's last bus copy (of this transfer or the one before)
             * has to be done before the slot is written again. */
            lane_error = cudaEventSynchronize(lane.slot_done[s]);
            if (lane_error != cudaSuccess)
                break;
            char *slot = lane.slot[s];
            plan.each_part(c, [&](const StagedPiece &piece, size_t offset, size_t bytes, size_t at) {
                std::memcpy(slot + at, static_cast<const char *>(piece.host) + offset, bytes);
            });
            lane_error = plan.copy_chunk(c, slot, cudaMemcpyHostToDevice, lane.stream);
            if (lane_error == cudaSuccess)
                lane_error = cudaEventRecord(lane.slot_done[s], lane.stream);
            if (arrived != nullptr)
                plan.each_part(c, [&](const StagedPiece &piece, size_t offset, size_t bytes, size_t) {
                    if (lane_error == cudaSuccess)
                        lane_error = (*arrived)(static_cast<char *>(piece.device) + offset, bytes, lane.stream);
                });
        }
        if (lane_error == cudaSuccess)
            lane_error = cudaEventRecord(lane.finished, lane.stream);
    });
    /* The kernels queued next on stream read the data: they wait for every lane. */
    const int used = static_cast<int>(std::min<size_t>(static_cast<size_t>(state->transfer->lane_count()),
                                                       plan.chunk_count()));
    for (int l = 0; l < used && error == cudaSuccess; ++l)
        error = cudaStreamWaitEvent(stream, state->transfer->lane(l).finished, 0);
    return error;
}

cudaError_t upload_columns(statgpu_cuda_state *state, const double *host, size_t n_rows, size_t n_cols, size_t ld,
                           double *device, cudaStream_t stream, const ArrivalWork *arrived)
{
    std::vector<StagedPiece> pieces;
    add_columns(&pieces, host, n_rows, n_cols, ld, device);
    return upload_staged(state, pieces.data(), pieces.size(), stream, arrived);
}

cudaError_t download_staged(statgpu_cuda_state *state, const StagedPiece *pieces, size_t count,
                            cudaStream_t stream)
{
    const Plan plan(pieces, count);
    if (driver_path(pieces, count, plan.total()) || ensure_team(state) != cudaSuccess) {
        const cudaError_t error = driver_copy(pieces, count, cudaMemcpyDeviceToHost, stream);
        return error == cudaSuccess ? cudaStreamSynchronize(stream) : error;
    }
    return run_lanes(state, plan.chunk_count(), stream, [&](Lane &lane, int l, int used) {
        cudaError_t &lane_error = lane.error;
        /* The chunk on its way to this lane's other slot. */
        size_t pending = SIZE_MAX;
        int pending_slot = 0;
        auto finish_pending = [&]() {
            if (pending == SIZE_MAX || lane_error != cudaSuccess)
                return;
            lane_error = cudaEventSynchronize(lane.slot_done[pending_slot]);
            if (lane_error != cudaSuccess)
                return;
            const char *slot = lane.slot[pending_slot];
            plan.each_part(pending, [&](const StagedPiece &piece, size_t offset, size_t bytes, size_t at) {
                std::memcpy(static_cast<char *>(piece.host) + offset, slot + at, bytes);
            });
            pending = SIZE_MAX;
        };
        size_t turn = 0;
        for (size_t c = static_cast<size_t>(l); lane_error == cudaSuccess && c < plan.chunk_count();
             c += static_cast<size_t>(used), ++turn) {
            const int s = static_cast<int>(turn & 1);
            lane_error = plan.copy_chunk(c, lane.slot[s], cudaMemcpyDeviceToHost, lane.stream);
            if (lane_error == cudaSuccess)
                lane_error = cudaEventRecord(lane.slot_done[s], lane.stream);
            finish_pending();  /* the other slot, while this one crosses the bus */
            pending = c;
            pending_slot = s;
        }
        finish_pending();
    });
}

void release_transfer_lanes(statgpu_cuda_state *state)
{
    delete state->transfer;
    state->transfer = nullptr;
}

} /* namespace statgpu_cuda */
