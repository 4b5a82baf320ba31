// The thread pool that Parallel loops of generated CPU code run on.
//
// Generated code never creates threads: an outlined loop body `void body(void* ctx, int64 lo,
// int64 hi)` is handed to descent_parallel_for, which cuts [0, extent) into a few contiguous
// chunks per thread (every iteration of a scheduled loop costs about the same, and
// contiguous ranges keep a core on its own rows of the output) that the calling thread and
// fixed worker threads, created once and reused, take from one shared counter. The caller
// takes part from the start and the job ends when its chunks are done, so a worker the OS
// runs late costs at most a chunk, never a wait (thread_pool.cpp). One thread means "run
// inline" with no synchronisation at all.
#pragma once
#include <cstdint>

namespace descent::cpu {

using ParallelBody = void (*)(void* ctx, int64_t lo, int64_t hi);

// Runs body over [0, extent) split across `threads` threads (0 = every hardware thread).
// Calls from several threads at once are serialised (one parallel loop at a time owns the
// workers); a call from inside a parallel body runs inline instead of deadlocking.
void parallel_for(ParallelBody body, void* ctx, int64_t extent, int threads);

}  // namespace descent::cpu

// The symbol generated code calls (registered in each kernel's JIT as an absolute address).
extern "C" void descent_parallel_for(descent::cpu::ParallelBody body, void* ctx,
                                     int64_t extent, int64_t threads);
