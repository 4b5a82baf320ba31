#include "lang/engine.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <exception>

// gcc says __SANITIZE_ADDRESS__; clang says __has_feature(address_sanitizer).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DESCENT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DESCENT_ASAN 1
#endif
#ifdef DESCENT_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace descent {

namespace {
thread_local bool t_on_big_stack = false;

void* trampoline(void* arg) {
  t_on_big_stack = true;
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

#ifndef DESCENT_ASAN
// The big stack of each calling thread, mapped once and kept. Each call still runs on a new
// thread (its thread-locals start fresh), but on memory already mapped: a fresh stack per
// call cost a 512 MiB mmap, a page fault for every page touched and a munmap, and the
// views call this a thousand times a second (the fuzz test spent a third of its time in the
// kernel doing it). A PROT_NONE page at the bottom is the guard glibc adds to stacks it
// maps itself.
struct StackArea {
  char* base = nullptr;
  size_t size = 0;
  ~StackArea() {
    if (base) munmap(base, size);
  }
  // The usable part (above the guard page), or null when it cannot be mapped.
  char* get(size_t bytes, size_t page) {
    if (size == bytes) return base + page;
    if (base) munmap(base, size);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    size = base ? bytes : 0;
    if (base && mprotect(base, page, PROT_NONE) != 0) {
      munmap(base, size);
      base = nullptr;
      size = 0;
    }
    return base ? base + page : nullptr;
  }
  // After a call: the pages below the top `keep` bytes go back to the system (a deep
  // recursion must not leave its stack resident); the top stays mapped for the next call.
  void trim(size_t keep, size_t page) {
    if (base && size > keep + page) madvise(base + page, size - keep - page, MADV_DONTNEED);
  }
};
thread_local StackArea t_stack;
#endif
}  // namespace

void run_on_big_stack(const std::function<void()>& fn, size_t stack_bytes) {
  if (t_on_big_stack) {
    fn();
    return;
  }
  // An exception (std::bad_alloc from a huge program, say) must reach the caller as it would
  // have without the thread, not terminate the process from the thread's top.
  std::exception_ptr thrown;
  std::function<void()> guarded = [&] {
    try {
      fn();
    } catch (...) {
      thrown = std::current_exception();
    }
  };
  pthread_attr_t attr;
  pthread_attr_init(&attr);
#ifndef DESCENT_ASAN
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  stack_bytes = (stack_bytes + page - 1) / page * page;
  char* stack = t_stack.get(stack_bytes + page, page);
  if (stack)
    pthread_attr_setstack(&attr, stack, stack_bytes);
  else
#endif
    pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  if (pthread_create(&thread, &attr, trampoline, &guarded) != 0) {
    pthread_attr_destroy(&attr);
    fn();  // no thread to be had: run here, still correct for all but the deepest programs
    return;
  }
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
#ifndef DESCENT_ASAN
  t_stack.trim(8u << 20, page);
#endif
  if (thrown) std::rethrow_exception(thrown);
}

void forget_stack_below(const char* stack_top) {
#ifdef DESCENT_ASAN
  // From a little below this frame (the unwinder's own frames go there) up to the top.
  char* here = static_cast<char*>(__builtin_frame_address(0)) - (64u << 10);
  if (stack_top && stack_top > here)
    __asan_unpoison_memory_region(here, static_cast<size_t>(stack_top - here));
#else
  (void)stack_top;
#endif
}

}  // namespace descent
