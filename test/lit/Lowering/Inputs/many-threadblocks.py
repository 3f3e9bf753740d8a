"""Prints an allgather plan over 2 ranks in which each rank copies its N
chunks into `out` from N threadblocks of one step each and sends them to
the other rank in one step; with `deps`, every copy but the first depends
on the first."""
import sys

n = int(sys.argv[1])
deps = len(sys.argv) > 2 and sys.argv[2] == "deps"
print(f"coll.plan @p : allgather ranks(2) chunks({n}) {{")
for r in range(2):
    print(f"  coll.rank {r} {{")
    for i in range(n):
        dep = " deps(0:0)" if deps and i > 0 else ""
        print(f"    coll.threadblock {i} channel(0) protocol(Simple) {{"
              f" coll.local_copy in[{r}][{i}] -> out[{r}][{r * n + i}]{dep} }}")
    print(f"    coll.threadblock {n} send({1 - r}) channel(0) protocol(Simple) {{"
          f" coll.send in[{r}][0:{n}] }}")
    print(f"    coll.threadblock {n + 1} recv({1 - r}) channel(0) protocol(Simple) {{"
          f" coll.recv -> out[{r}][{(1 - r) * n}:{(2 - r) * n}] }}")
    print("  }")
print("}")
