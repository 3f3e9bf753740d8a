//===- Plans.h - The plan libraries that COLL_PLAN_PATH names -------------===//
//
// A plan library is any shared object with collc's algorithms in it (the
// output of `collc tune -o` or of collc_add_algorithm, linked with
// -shared): every symbol named collc_algorithm_<name> is one. COLL_PLAN_PATH
// lists libraries and folders of them, separated by ':'; earlier entries
// win where two algorithms do the same call.
//
//===----------------------------------------------------------------------===//
#ifndef COLLNCCL_PLANS_H
#define COLLNCCL_PLANS_H

#include <string>
#include <vector>

namespace collc {
struct AlgorithmDesc;
}

namespace collnccl {

struct Plan {
  const collc::AlgorithmDesc *algorithm;
  std::string library; // the file it came from
};

/// Every algorithm of the libraries on COLL_PLAN_PATH, loaded at the first
/// call. A library that cannot be opened is named in `problems`.
const std::vector<Plan> &planLibraries();
const std::vector<std::string> &planProblems();

/// The names of the defined collc_algorithm_* symbols of the ELF shared
/// object at `path`; false and `why` where it is not one.
bool algorithmSymbols(const std::string &path, std::vector<std::string> &names, std::string &why);

} // namespace collnccl

#endif // COLLNCCL_PLANS_H
