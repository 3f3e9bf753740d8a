//===- HugePages.h - collc's heap on transparent huge pages ---------------===//
//
// At a thousand ranks collc makes millions of small ops and attributes, and
// on 4 KiB pages the page faults of its growing heap cost a third of its
// time on some machines (virtual ones above all). So collc asks the kernel
// to back its heap with transparent huge pages, as glibc's
// glibc.malloc.hugetlb=1 does (a tunable, read only at startup), and where
// it has a second CPU, a thread of its own faults the heap's next pages in
// while the compiler works: the kernel zeroes them there.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_HUGEPAGES_H
#define COLLC_TOOLS_HUGEPAGES_H

namespace collc {

/// Makes glibc keep blocks up to 32 MiB in the heap and never shrink it.
/// With a second CPU, glibc moves the heap's end 64 MiB at a time, and a
/// thread advises each new 2 MiB for huge pages and, past the first 128 MiB,
/// faults it in. Else the heap takes one step of 2 GiB of address space
/// (touched only as used), advised at once, and stays on small pages past
/// it. Call first thing: other threads' arenas stay on small pages.
void adviseHugeHeap();

} // namespace collc

#endif // COLLC_TOOLS_HUGEPAGES_H
