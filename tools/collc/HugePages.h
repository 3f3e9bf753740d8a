//===- HugePages.h - collc's heap on transparent huge pages ---------------===//
//
// At a thousand ranks collc makes millions of small ops and attributes, and
// on 4 KiB pages the page faults of its growing heap cost a third of its
// time on some machines (virtual ones above all). So collc reserves its
// heap's address space in one piece up front and asks the kernel to back
// it with transparent huge pages, as glibc's glibc.malloc.hugetlb=1 does
// (a tunable, read only at startup).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_HUGEPAGES_H
#define COLLC_TOOLS_HUGEPAGES_H

namespace collc {

/// Makes glibc grow the heap in steps of 2 GiB of address space (touched
/// only as used), keep blocks up to 32 MiB in it and never shrink it, and
/// advises its first step for transparent huge pages. Call first thing:
/// the heap past 2 GiB, and other threads' arenas, stay on small pages.
void adviseHugeHeap();

} // namespace collc

#endif // COLLC_TOOLS_HUGEPAGES_H
