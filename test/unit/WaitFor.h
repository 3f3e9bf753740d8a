//===- WaitFor.h - Tests wait for a counter another thread moves ----------===//
#ifndef COLLC_TEST_UNIT_WAITFOR_H
#define COLLC_TEST_UNIT_WAITFOR_H

#include <chrono>
#include <cstdint>
#include <thread>

/// Waits until *word >= goal; false after five seconds.
inline bool waitFor(const uint64_t *word, uint64_t goal) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < goal)
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    else
      std::this_thread::yield();
  return true;
}

#endif // COLLC_TEST_UNIT_WAITFOR_H
