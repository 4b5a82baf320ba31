// Whether these tests were built with AddressSanitizer (-DDESCENT_SANITIZE=address,...).
// ASan reserves terabytes of shadow address space at start-up and replaces operator new with
// one that aborts instead of throwing std::bad_alloc, so the out-of-memory cases (which run
// under an address-space limit and expect bad_alloc) cannot run under it: they say so and
// stop. The normal build runs them; docs/reliability.md lists this exception.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define DESCENT_TESTS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DESCENT_TESTS_UNDER_ASAN 1
#endif
#endif

#ifdef DESCENT_TESTS_UNDER_ASAN
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif
