//===- FakeDriver.h - The fake CUDA driver as collrt loads it -------------===//
#ifndef COLLC_TEST_UNIT_FAKEDRIVER_H
#define COLLC_TEST_UNIT_FAKEDRIVER_H

#include "support/CudaDriver.h"

#include <cstdio>
#include <cstdlib>
#include <string>

/// collrt's table of the driver's calls; aborts where the library that
/// COLL_CUDA_LIBRARY names (the tests set it to the fake) does not load.
inline const collrt::CudaApi &fakeDriver() {
  std::string why;
  const collrt::CudaApi *cu = collrt::cudaDriver(why);
  if (!cu) {
    fprintf(stderr, "the fake driver does not load: %s\n", why.c_str());
    abort();
  }
  return *cu;
}

#endif // COLLC_TEST_UNIT_FAKEDRIVER_H
