#include "lang/engine.h"

#include <pthread.h>

namespace descent {

namespace {
void* trampoline(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}
}  // namespace

void run_on_big_stack(const std::function<void()>& fn, size_t stack_bytes) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  if (pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&fn)) != 0) {
    pthread_attr_destroy(&attr);
    fn();  // no thread to be had: run here, still correct for all but the deepest programs
    return;
  }
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
}

}  // namespace descent
