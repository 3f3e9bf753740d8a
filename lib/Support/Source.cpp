//===- Source.cpp - A program's text, read within a limit -----------------===//
#include "lib/Support/Source.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

using namespace llvm;

std::unique_ptr<MemoryBuffer> coll::openSource(StringRef path, size_t limit, std::string &error) {
  bool stdinput = path == "-";
  sys::fs::file_status status;
  bool endless = stdinput || (!sys::fs::status(path, status) &&
                              (status.type() == sys::fs::file_type::fifo_file ||
                               status.type() == sys::fs::file_type::character_file ||
                               status.type() == sys::fs::file_type::block_file));
  if (!endless) {
    // A file's size is known: read whole, and refused as too large by the
    // caller.
    ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
    if (file)
      return std::move(*file);
    error = "cannot open input file '" + path.str() + "': " + file.getError().message();
    return nullptr;
  }
  sys::fs::file_t handle = sys::fs::getStdinHandle();
  if (!stdinput) {
    Expected<sys::fs::file_t> opened = sys::fs::openNativeFileForRead(path);
    if (!opened) {
      error = "cannot open input file '" + path.str() + "': " + toString(opened.takeError());
      return nullptr;
    }
    handle = *opened;
  }
  SmallString<0> text;
  constexpr size_t kChunk = 1 << 16;
  while (text.size() <= limit) {
    size_t size = text.size();
    text.resize_for_overwrite(size + kChunk);
    Expected<size_t> got =
        sys::fs::readNativeFile(handle, MutableArrayRef(text.data() + size, kChunk));
    if (!got) {
      error = "cannot read input file '" + path.str() + "': " + toString(got.takeError());
      if (!stdinput)
        sys::fs::closeFile(handle);
      return nullptr;
    }
    text.truncate(size + *got);
    if (*got == 0)
      break;
  }
  if (!stdinput)
    sys::fs::closeFile(handle);
  if (text.size() > limit + 1)
    text.truncate(limit + 1);
  return MemoryBuffer::getMemBufferCopy(text, stdinput ? "<stdin>" : path);
}
