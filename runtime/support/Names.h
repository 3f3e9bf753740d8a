//===- Names.h - The names messages give types, ops and collectives -------===//
#ifndef COLLRT_NAMES_H
#define COLLRT_NAMES_H

#include <cstdint>

namespace collrt {

/// collDataType_t's (and ncclDataType_t's) values by name; "?" otherwise.
inline const char *typeName(int32_t t) {
  static const char *names[] = {"int8",    "uint8",    "int32",      "uint32",
                                "int64",   "uint64",   "float16",    "float32",
                                "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  return t >= 0 && t < 12 ? names[t] : "?";
}
/// collRedOp_t's (and ncclRedOp_t's built-in) values by name; "?" otherwise.
inline const char *opName(int32_t op) {
  static const char *names[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < 5 ? names[op] : "?";
}
/// collc::Collective's values by name; "?" otherwise.
inline const char *collectiveName(int32_t c) {
  static const char *names[] = {"allreduce", "reducescatter", "allgather",
                                "alltoall",  "broadcast",     "reduce"};
  return c >= 0 && c < 6 ? names[c] : "?";
}

} // namespace collrt

#endif // COLLRT_NAMES_H
