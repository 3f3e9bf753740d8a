/*===- mpi-allreduce.c - MPI_Allreduce in collc-perf's (nccl-tests') table -===
 *
 * The reference point for collc-perf: float sum MPI_Allreduce over the same
 * sizes, printed in the same columns. Out of place uses separate send and
 * receive buffers, in place MPI_IN_PLACE. Time is the average of -n timed
 * calls after one untimed call and a barrier, the maximum over ranks; with
 * -c N the inputs (those of tools/collc-launch/Expected.h for float sum:
 * small integers, so every order of summation is exact) are filled again
 * and N more calls are checked bit-exactly.
 *
 *   mpirun -np R mpi-allreduce [-b minbytes] [-e maxbytes] [-f factor |
 *                              -i stepbytes] [-n iters] [-w warmup] [-c check]
 *
 *===----------------------------------------------------------------------===*/
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct options {
  int64_t minBytes, maxBytes, stepBytes, factor;
  int iters, warmup, check;
};

/* Expected.h's inputValue for a signed type and sum. */
static float inputValue(int rank, int64_t j) {
  uint64_t h = (uint64_t)rank * 0x9E3779B97F4A7C15ull + (uint64_t)j * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return (float)((int64_t)(h % 9) - 4);
}

static int parseSize(const char *s, int64_t *out) {
  char *end;
  double v = strtod(s, &end), unit = 1;
  if (*end == 'K' || *end == 'k')
    unit = 1024.0, ++end;
  else if (*end == 'M' || *end == 'm')
    unit = 1024.0 * 1024, ++end;
  else if (*end == 'G' || *end == 'g')
    unit = 1024.0 * 1024 * 1024, ++end;
  if (end == s || *end || !(v >= 0) || v * unit > 1e15)
    return 0;
  *out = (int64_t)(v * unit);
  return 1;
}

static int parseInt(const char *s, int lo, int *out) {
  char *end;
  long n = strtol(s, &end, 10);
  if (end == s || *end || n < lo || n > 1000000)
    return 0;
  *out = (int)n;
  return 1;
}

static const char *parse(int argc, char **argv, struct options *o) {
  static char error[256];
  o->minBytes = o->maxBytes = 32 << 20;
  o->stepBytes = 1 << 20;
  o->factor = 1;
  o->iters = 20;
  o->warmup = 1;
  o->check = 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = v != NULL, n = 0;
    if (!strcmp(a, "-b") || !strcmp(a, "--minbytes"))
      ok = ok && parseSize(v, &o->minBytes);
    else if (!strcmp(a, "-e") || !strcmp(a, "--maxbytes"))
      ok = ok && parseSize(v, &o->maxBytes);
    else if (!strcmp(a, "-i") || !strcmp(a, "--stepbytes"))
      ok = ok && parseSize(v, &o->stepBytes);
    else if (!strcmp(a, "-f") || !strcmp(a, "--stepfactor")) {
      ok = ok && parseInt(v, 1, &n);
      o->factor = n;
    } else if (!strcmp(a, "-n") || !strcmp(a, "--iters"))
      ok = ok && parseInt(v, 1, &o->iters);
    else if (!strcmp(a, "-w") || !strcmp(a, "--warmup_iters"))
      ok = ok && parseInt(v, 0, &o->warmup);
    else if (!strcmp(a, "-c") || !strcmp(a, "--check"))
      ok = ok && parseInt(v, 0, &o->check);
    else if (!strcmp(a, "-d") || !strcmp(a, "--datatype"))
      ok = ok && (!strcmp(v, "float") || !strcmp(v, "float32") || !strcmp(v, "fp32"));
    else if (!strcmp(a, "-o") || !strcmp(a, "--op"))
      ok = ok && !strcmp(v, "sum");
    else {
      snprintf(error, sizeof error, "unknown argument '%s'", a);
      return error;
    }
    if (!ok) {
      snprintf(error, sizeof error, "bad value for %s (only -d float and -o sum are supported)", a);
      return error;
    }
    ++i;
  }
  if (o->maxBytes < o->minBytes)
    return "-e (maxbytes) is smaller than -b (minbytes)";
  if (o->factor <= 1 && o->stepBytes <= 0)
    return "-i (stepbytes) must be positive when -f is 1";
  if (o->maxBytes / (int64_t)sizeof(float) > 2147483647)
    return "-e (maxbytes) is over what one MPI_Allreduce of floats takes (2^31-1 elements)";
  return NULL;
}

static int64_t nextSize(const struct options *o, int64_t size) {
  int64_t next = o->factor > 1 ? size * o->factor : size + o->stepBytes;
  return next > size ? next : size + 1;
}

static void fill(float *data, int rank, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    data[j] = inputValue(rank, j);
}

/* After: rank 0 has printed who runs where and the table's header; every
 * rank takes part, in the gathers. */
static void printHeader(const struct options *o, int rank, int ranks) {
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = 0;
  int pid = (int)getpid();
  char *hosts = rank == 0 ? malloc((size_t)ranks * sizeof host) : NULL;
  int *pids = rank == 0 ? malloc((size_t)ranks * sizeof(int)) : NULL;
  MPI_Gather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Gather(&pid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank != 0)
    return;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  char *nl = strchr(version, ',');
  if (nl)
    *nl = 0;
  printf("# mpi-allreduce: MPI_Allreduce on %d ranks, %s\n", ranks, version);
  if (o->factor > 1)
    printf("# nRanks %d minBytes %lld maxBytes %lld step: %lld(factor) warmup iters: %d iters: "
           "%d validation: %d\n",
           ranks, (long long)o->minBytes, (long long)o->maxBytes, (long long)o->factor, o->warmup,
           o->iters, o->check);
  else
    printf("# nRanks %d minBytes %lld maxBytes %lld step: %lld(bytes) warmup iters: %d iters: "
           "%d validation: %d\n",
           ranks, (long long)o->minBytes, (long long)o->maxBytes, (long long)o->stepBytes,
           o->warmup, o->iters, o->check);
  printf("#\n# Using ranks\n");
  for (int r = 0; r < ranks; ++r)
    printf("#  Rank %2d Pid %6d on %10s\n", r, pids[r], hosts + r * sizeof host);
  printf("#\n");
  /* The columns of a row: 52 characters, then two groups of 32. */
  char over[117];
  memset(over, ' ', 116);
  over[116] = 0;
  over[0] = '#';
  memcpy(over + 52 + 10, "out-of-place", 12);
  memcpy(over + 84 + 12, "in-place", 8);
  printf("%s\n", over);
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count",
         "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
         "#wrong");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "(B)", "(elements)",
         "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  fflush(stdout);
  free(hosts);
  free(pids);
}

/* What rank 0 sums over every cell of the table. */
struct totals {
  double bwSum;
  int bwCount;
  long long wrong;
};

/* After: one cell of a row, `count` floats out of place or in place, has
 * been timed and checked on every rank, and printed and added to `t` by
 * rank 0. */
static void measure(const struct options *o, int rank, int ranks, float *send, float *recv,
                    const float *want, int64_t count, int inplace, struct totals *t) {
  const double busFactor = 2.0 * (ranks - 1) / ranks;
  const void *in = inplace ? MPI_IN_PLACE : send;
  if (o->check) {
    memset(recv, 0xA5, (size_t)count * sizeof(float));
    fill(inplace ? recv : send, rank, count);
  }
  MPI_Allreduce(in, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int it = 0; it < o->iters; ++it)
    MPI_Allreduce(in, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double seconds = (MPI_Wtime() - start) / o->iters, slowest;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long long wrong = 0, wrongAll = 0;
  for (int c = 0; c < o->check; ++c) {
    memset(recv, 0xA5, (size_t)count * sizeof(float));
    fill(inplace ? recv : send, rank, count);
    MPI_Allreduce(in, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int64_t j = 0; j < count; ++j)
      wrong += memcmp(&recv[j], &want[j], sizeof(float)) != 0;
  }
  MPI_Allreduce(&wrong, &wrongAll, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank != 0)
    return;
  double us = slowest * 1e6;
  double algbw = slowest > 0 ? (double)(count * 4) / 1e9 / slowest : 0;
  double busbw = algbw * busFactor;
  char time[32], wrongText[32];
  snprintf(time, sizeof time, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
  if (o->check)
    snprintf(wrongText, sizeof wrongText, "%lld", wrongAll);
  else
    snprintf(wrongText, sizeof wrongText, "N/A");
  printf("  %7s  %6.2f  %6.2f  %5s", time, algbw, busbw, wrongText);
  t->bwSum += busbw;
  ++t->bwCount;
  t->wrong += wrongAll;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  struct options o;
  const char *error = parse(argc, argv, &o);
  if (error) {
    if (rank == 0)
      fprintf(stderr,
              "mpi-allreduce: %s\n"
              "usage: mpirun -np R mpi-allreduce [-b minbytes] [-e maxbytes] [-f factor | -i "
              "stepbytes]\n"
              "         [-n iters] [-w warmup] [-c check]   (float sum; K, M, G suffixes)\n",
              error);
    MPI_Finalize();
    return 2;
  }

  const int64_t maxCount = o.maxBytes / (int64_t)sizeof(float);
  float *send = malloc((size_t)(maxCount > 0 ? maxCount : 1) * sizeof(float));
  float *recv = malloc((size_t)(maxCount > 0 ? maxCount : 1) * sizeof(float));
  float *want = o.check ? malloc((size_t)(maxCount > 0 ? maxCount : 1) * sizeof(float)) : NULL;
  if (!send || !recv || (o.check && !want)) {
    fprintf(stderr, "mpi-allreduce: rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fill(send, rank, maxCount);
  fill(recv, rank, maxCount);
  printHeader(&o, rank, ranks);

  /* Warm-up at the largest, then at the smallest size. */
  for (int w = 0; w < o.warmup; ++w)
    MPI_Allreduce(send, recv, (int)maxCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  for (int w = 0; w < o.warmup; ++w)
    MPI_Allreduce(send, recv, (int)(o.minBytes / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

  struct totals t = {0, 0, 0};
  for (int64_t size = o.minBytes; size <= o.maxBytes; size = nextSize(&o, size)) {
    const int64_t count = size / (int64_t)sizeof(float);
    if (o.check)
      for (int64_t j = 0; j < count; ++j) {
        float acc = inputValue(0, j);
        for (int p = 1; p < ranks; ++p)
          acc += inputValue(p, j);
        want[j] = acc;
      }
    if (rank == 0)
      printf("%12lld  %12lld  %8s  %6s  %6d", (long long)(count * 4), (long long)count, "float",
             "sum", -1);
    for (int inplace = 0; inplace < 2; ++inplace)
      measure(&o, rank, ranks, send, recv, want, count, inplace, &t);
    if (rank == 0) {
      printf("\n");
      fflush(stdout);
    }
  }
  long long wrongTotal = t.wrong;
  if (rank == 0) {
    printf("# Out of bounds values : %lld %s\n", wrongTotal, wrongTotal ? "FAILED" : "OK");
    printf("# Avg bus bandwidth    : %g \n", t.bwCount ? t.bwSum / t.bwCount : 0.0);
    printf("#\n");
    fflush(stdout);
  }
  free(send);
  free(recv);
  free(want);
  MPI_Bcast(&wrongTotal, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return wrongTotal ? 1 : 0;
}
