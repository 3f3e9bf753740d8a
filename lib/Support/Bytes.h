//===- Bytes.h - Message sizes as users write and read them ---------------===//
#ifndef COLLC_SUPPORT_BYTES_H
#define COLLC_SUPPORT_BYTES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace coll {

/// "1073741824", "1G", "1GiB", "64K", "8B": bytes, in powers of 1024, as
/// every tool reads them (runtime/support/ByteCount.h).
std::optional<double> parseBytes(llvm::StringRef text);
/// The same, as a whole number in 0 .. max: bytes, or a count of elements.
std::optional<int64_t> parseCount(llvm::StringRef text, int64_t max = INT64_MAX);
/// "1 GiB", "2.5 MiB", "8 B".
std::string formatBytes(double bytes);

} // namespace coll

#endif // COLLC_SUPPORT_BYTES_H
