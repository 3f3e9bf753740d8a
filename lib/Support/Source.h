//===- Source.h - A program's text, read within a limit -------------------===//
#ifndef COLLC_SUPPORT_SOURCE_H
#define COLLC_SUPPORT_SOURCE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace coll {

/// The text of `path` ("-": standard input). A pipe or a device such as
/// /dev/zero may never end, so past `limit` bytes no more is read: the
/// buffer then holds `limit + 1` bytes, for the caller to refuse with its
/// own message. Null, with `error` set as mlir::openInputFile sets it,
/// where the file cannot be opened or read.
std::unique_ptr<llvm::MemoryBuffer> openSource(llvm::StringRef path, size_t limit,
                                               std::string &error);

} // namespace coll

#endif // COLLC_SUPPORT_SOURCE_H
