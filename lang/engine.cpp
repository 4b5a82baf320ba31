#include "lang/engine.h"

#include <pthread.h>

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
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  if (pthread_create(&thread, &attr, trampoline, &guarded) != 0) {
    pthread_attr_destroy(&attr);
    fn();  // no thread to be had: run here, still correct for all but the deepest programs
    return;
  }
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
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
