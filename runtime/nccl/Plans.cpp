//===- Plans.cpp - Find and open plan libraries ---------------------------===//
//
// dlopen cannot list a library's symbols, so the dynamic symbol table is
// read from the file: a plan library needs no table of its own, and any
// number of algorithms linked into one library are all found.
//
//===----------------------------------------------------------------------===//
#include "nccl/Plans.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

namespace collnccl {

namespace {

constexpr const char kPrefix[] = "collc_algorithm_";

template <class T> bool readAt(const std::string &file, uint64_t offset, T &out) {
  if (offset > file.size() || file.size() - offset < sizeof(T))
    return false;
  memcpy(&out, file.data() + offset, sizeof(T));
  return true;
}

// Libraries in the order COLL_PLAN_PATH names them, a folder's sorted;
// an entry that is neither goes to `problems`.
std::vector<std::string> libraryFiles(const char *pathList, std::vector<std::string> &problems) {
  std::vector<std::string> files;
  std::string list = pathList ? pathList : "";
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos)
      end = list.size();
    std::string entry = list.substr(start, end - start);
    start = end + 1;
    struct stat st;
    if (entry.empty())
      continue;
    if (stat(entry.c_str(), &st)) {
      problems.push_back(entry + ": " + strerror(errno));
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      files.push_back(entry);
      continue;
    }
    std::vector<std::string> inDir;
    if (DIR *d = opendir(entry.c_str())) {
      while (dirent *e = readdir(d)) {
        std::string name = e->d_name;
        if (name.size() > 3 && (name.compare(name.size() - 3, 3, ".so") == 0 ||
                                name.find(".so.") != std::string::npos))
          inDir.push_back(entry + "/" + name);
      }
      closedir(d);
    }
    std::sort(inDir.begin(), inDir.end());
    files.insert(files.end(), inDir.begin(), inDir.end());
  }
  return files;
}

struct Loaded {
  std::vector<Plan> plans;
  std::vector<std::string> problems;
  Loaded() {
    for (const std::string &file : libraryFiles(getenv("COLL_PLAN_PATH"), problems)) {
      std::vector<std::string> names;
      std::string why;
      if (!algorithmSymbols(file, names, why)) {
        problems.push_back(file + ": " + why);
        continue;
      }
      if (names.empty()) {
        problems.push_back(file + ": no collc_algorithm_* symbol in it");
        continue;
      }
      void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char *e = dlerror();
        problems.push_back(e ? e : file + ": cannot be opened");
        continue;
      }
      for (const std::string &name : names)
        if (void *alg = dlsym(handle, name.c_str()))
          plans.push_back({static_cast<const collc::AlgorithmDesc *>(alg), file});
    }
  }
};

Loaded &loaded() {
  static Loaded l;
  return l;
}

} // namespace

const std::vector<Plan> &planLibraries() { return loaded().plans; }
const std::vector<std::string> &planProblems() { return loaded().problems; }

bool algorithmSymbols(const std::string &path, std::vector<std::string> &names, std::string &why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot be read";
    return false;
  }
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Elf64_Ehdr eh;
  if (!readAt(file, 0, eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr)) {
    why = "not a 64-bit ELF shared object";
    return false;
  }
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh, strings;
    if (!readAt(file, eh.e_shoff + uint64_t(i) * sizeof sh, sh)) {
      why = "its section table is cut short";
      return false;
    }
    if (sh.sh_type != SHT_DYNSYM)
      continue;
    if (!readAt(file, eh.e_shoff + uint64_t(sh.sh_link) * sizeof strings, strings) ||
        strings.sh_offset > file.size() || file.size() - strings.sh_offset < strings.sh_size) {
      why = "its dynamic string table is cut short";
      return false;
    }
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= sh.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!readAt(file, sh.sh_offset + at, sym)) {
        why = "its dynamic symbol table is cut short";
        return false;
      }
      if (sym.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym.st_info) != STT_OBJECT ||
          sym.st_name >= strings.sh_size)
        continue;
      const char *name = file.data() + strings.sh_offset + sym.st_name;
      size_t room = strings.sh_size - sym.st_name;
      size_t length = strnlen(name, room);
      if (length < room && strncmp(name, kPrefix, sizeof kPrefix - 1) == 0)
        names.emplace_back(name, length);
    }
  }
  return true;
}

} // namespace collnccl
