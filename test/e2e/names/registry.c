/* The generated headers compile as C: their descriptors are what
 * collRegisterAlgorithm takes. */
#include "plans.h"

const void *names_descriptor(int i) {
  static const void *const descriptors[] = {&collc_algorithm_ring4, &collc_algorithm_ring8,
                                            &collc_algorithm_twoshot};
  return i >= 0 && i < 3 ? descriptors[i] : NULL;
}
