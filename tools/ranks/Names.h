//===- Names.h - What collc-launch and collc-perf spell the same way ------===//
//
// Data types and reduction ops as nccl-tests names them (with the float16/
// 32/64 aliases), collectives as the language does, and the unique id as
// hex so that it can travel on a child's command line.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RANKS_NAMES_H
#define COLLC_RANKS_NAMES_H

#include "collrt.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace collc_launch {

inline const char *const typeNames[] = {"int8", "uint8", "int32",  "uint32",   "int64",  "uint64",
                                        "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"};
inline const char *const opNames[] = {"sum", "prod", "max", "min", "avg"};
inline const char *const collNames[] = {"allreduce", "reducescatter", "allgather",
                                        "alltoall",  "broadcast",     "reduce"};

inline bool parseType(const std::string &s, collDataType_t &t) {
  static const std::pair<const char *, collDataType_t> aliases[] = {
      {"float16", collFloat16}, {"float32", collFloat32}, {"float64", collFloat64},
      {"fp16", collFloat16},    {"bf16", collBfloat16},   {"fp32", collFloat32},
      {"fp64", collFloat64}};
  for (int i = 0; i < collNumTypes; ++i)
    if (s == typeNames[i]) {
      t = collDataType_t(i);
      return true;
    }
  for (auto &[name, type] : aliases)
    if (s == name) {
      t = type;
      return true;
    }
  return false;
}

inline bool parseOp(const std::string &s, collRedOp_t &op) {
  for (int i = 0; i < collNumOps; ++i)
    if (s == opNames[i]) {
      op = collRedOp_t(i);
      return true;
    }
  return false;
}

inline std::string hex(const void *data, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    snprintf(b, sizeof b, "%02x", static_cast<const unsigned char *>(data)[i]);
    s += b;
  }
  return s;
}

inline bool unhex(const std::string &s, void *data, size_t n) {
  if (s.size() != 2 * n)
    return false;
  for (size_t i = 0; i < n; ++i) {
    char *end;
    std::string byte = s.substr(2 * i, 2);
    static_cast<unsigned char *>(data)[i] = (unsigned char)strtoul(byte.c_str(), &end, 16);
    if (*end)
      return false;
  }
  return true;
}

} // namespace collc_launch

#endif // COLLC_RANKS_NAMES_H
