//===- FrameFuzzer.cpp - A peer's bytes through the socket transport's checks //
//
// `LLVMFuzzerTestOneInput` plays arbitrary bytes as a peer's stream into
// the receiving side of the socket transport: the first bytes of the input
// say how large the receiver's windows are, the rest is parsed message by
// message as the proxy thread does, and every data message that passes is
// delivered into windows allocated at exactly their size, so that
// AddressSanitizer sees any access that strays. It aborts when an invariant
// breaks: a complete message takes its header and payload and no more than
// there is, a data message's FIFO lies inside its window (checked in 128-bit
// arithmetic), a malformed one says why. Built with clang's -fsanitize=fuzzer
// it is a libFuzzer target; otherwise `main` below mutates built-in seeds,
// well-formed messages of every kind and protocol, for a bounded time.
//
//===----------------------------------------------------------------------===//

#include "collc/abi.h"
#include "transport/Frame.h"
#include "transport/Transport.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

using namespace collrt;

namespace {

// The input starts with the number of windows (1 to kMaxWindows, from the
// low bits of a byte) and a little-endian 16-bit size for each: small
// enough to allocate per input, large enough for a few slots.
constexpr size_t kMaxWindows = 4;

size_t prefixBytes(const uint8_t *data, size_t size) {
  size_t windows = size ? 1 + data[0] % kMaxWindows : 0;
  return 1 + 2 * windows;
}

[[noreturn]] void broken(const char *invariant) {
  fprintf(stderr, "collc-frame-fuzz: broken invariant: %s\n", invariant);
  abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size < prefixBytes(data, size))
    return 0;
  const size_t numWindows = 1 + data[0] % kMaxWindows;
  std::vector<size_t> windowBytes(numWindows);
  std::vector<std::unique_ptr<char[]>> windows(numWindows);
  for (size_t w = 0; w < numWindows; ++w) {
    windowBytes[w] = size_t(data[1 + 2 * w]) | size_t(data[2 + 2 * w]) << 8;
    windows[w].reset(new char[windowBytes[w]]()); // exactly this large, zeroed
  }
  const char *stream = reinterpret_cast<const char *>(data) + prefixBytes(data, size);
  size_t left = size - prefixBytes(data, size);
  for (;;) {
    Frame frame;
    size_t length = 0;
    std::string error;
    FrameStatus status =
        parseFrame(stream, left, windowBytes.data(), numWindows, frame, length, error);
    if (status == FrameStatus::kIncomplete)
      break;
    if (status == FrameStatus::kMalformed) {
      if (error.empty())
        broken("a message refused without saying why");
      break;
    }
    const FrameHeader &m = frame.header;
    const size_t payload = m.kind == kFrameData ? size_t(m.size) : 0; // as the wire says
    if (length < sizeof m || length > left || m.size < 0 || length != sizeof m + payload ||
        frame.payload != stream + sizeof m)
      broken("a message that is not where, or as long as, it says");
    if (m.kind == kFrameData || m.kind == kFrameLanded) {
      unsigned __int128 end = (unsigned __int128)m.offset + fifoHeaderBytes(m.slots) +
                              (unsigned __int128)m.slots * (unsigned __int128)m.slotBytes;
      if (m.slots < 1 || m.slotBytes < 1 || m.size > m.slotBytes || m.window < 0 ||
          size_t(m.window) >= numWindows || end > windowBytes[m.window])
        broken("a FIFO that does not fit its window passed the checks");
      deliverFrame(windows[m.window].get(), frame, error);
    }
    stream += length;
    left -= length;
  }
  return 0;
}

#ifndef COLLC_LIBFUZZER

namespace {

std::string current; // the input being run, for the crash report

void printInput() {
  static const char hex[] = "0123456789abcdef";
  (void)!write(2, "\ncollc-frame-fuzz: the input, in hex:\n", 38);
  for (size_t i = 0; i < current.size(); ++i) {
    char pair[3] = {hex[uint8_t(current[i]) >> 4], hex[uint8_t(current[i]) & 15],
                    char((i + 1) % 48 ? ' ' : '\n')};
    (void)!write(2, pair, 3);
  }
  (void)!write(2, "\n", 1);
}

void report(int sig) {
  const char *what = sig == SIGALRM ? "hang (watchdog expired)" : "crash";
  (void)!write(2, "\ncollc-frame-fuzz: ", 19);
  (void)!write(2, what, strlen(what));
  printInput();
  _exit(1);
}

void append(std::string &s, const void *p, size_t n) { s.append(static_cast<const char *>(p), n); }

std::string prefix(std::initializer_list<uint16_t> windows) {
  std::string s(1, char(windows.size() - 1));
  for (uint16_t w : windows)
    append(s, &w, 2);
  return s;
}

// A step of every protocol into one window, credits for another, and a
// FIFO that ends exactly at its window's end.
std::vector<std::string> makeSeeds() {
  std::vector<std::string> seeds;
  const int64_t slotBytes = 256;
  const uint16_t fifo = uint16_t(fifoBytes(2, slotBytes));
  for (int32_t protocol : {collc::kSimple, collc::kLL, collc::kLL128}) {
    std::string s = prefix({uint16_t(2 * fifo), 64});
    for (uint64_t step = 0; step < 3; ++step) {
      int64_t bytes = protocol == collc::kLL128 ? 128 : 24 + 8 * int64_t(step);
      FrameHeader m{kFrameData, protocol, 2, 0, step % 2 ? fifo : 0u, slotBytes, step / 2, bytes};
      append(s, &m, sizeof m);
      s.append(size_t(bytes), char('a' + step));
    }
    FrameHeader credit{kFrameCredit, 0, 0, 1, 0, 0, 1, 0};
    append(s, &credit, sizeof credit);
    seeds.push_back(s);
  }
  std::string tight = prefix({fifo, fifo, 4096, 0});
  FrameHeader m{kFrameData, collc::kSimple, 2, 1, 0, slotBytes, 0, slotBytes};
  append(tight, &m, sizeof m);
  tight.append(size_t(slotBytes), 'z');
  seeds.push_back(tight);
  return seeds;
}

// Where each message's header starts, reading sizes as the parser would
// if it trusted them.
std::vector<size_t> headers(const std::string &s) {
  std::vector<size_t> at;
  if (s.empty())
    return at;
  for (size_t i = prefixBytes(reinterpret_cast<const uint8_t *>(s.data()), s.size());
       i + sizeof(FrameHeader) <= s.size();) {
    at.push_back(i);
    FrameHeader m;
    memcpy(&m, s.data() + i, sizeof m);
    if (m.size < 0 || uint64_t(m.size) > s.size())
      break;
    i += sizeof m + size_t(m.size);
  }
  return at;
}

std::string mutate(std::string s, const std::vector<std::string> &seeds, std::mt19937_64 &rng) {
  auto pick = [&](uint64_t n) { return n ? rng() % n : 0; };
  // Values at and around the bounds of every field, and powers of two with
  // their negatives, which make sums and products wrap.
  auto interesting = [&]() -> uint64_t {
    static const uint64_t fixed[] = {0,
                                     1,
                                     7,
                                     8,
                                     15,
                                     16,
                                     63,
                                     64,
                                     127,
                                     128,
                                     255,
                                     256,
                                     704,
                                     4096,
                                     65535,
                                     65536,
                                     uint64_t(kMaxFrameSlots),
                                     uint64_t(kMaxFrameSlots) + 1,
                                     uint64_t(kMaxFrameSlotBytes),
                                     uint64_t(kMaxFrameSlotBytes) + 1,
                                     0x7fffffff,
                                     0x80000000,
                                     0xffffffff,
                                     0x7fffffffffffffff};
    uint64_t v = pick(2) ? fixed[pick(std::size(fixed))] : uint64_t(1) << pick(64);
    return pick(3) ? v : uint64_t(0) - v;
  };
  int rounds = 1 + int(pick(4));
  for (int i = 0; i < rounds; ++i) {
    std::vector<size_t> at = headers(s);
    size_t which = pick(at.size()), h = at.empty() ? 0 : at[which];
    switch (pick(8)) {
    case 0: // flip a byte
      if (!s.empty())
        s[pick(s.size())] ^= char(1 << pick(8));
      break;
    case 1: // delete a range
      if (!s.empty())
        s.erase(pick(s.size()), pick(64) + 1);
      break;
    case 2: { // duplicate a range, a whole message more often than not
      size_t from = pick(s.size() + 1), len = pick(128) + 1;
      if (!at.empty() && pick(2)) {
        from = h;
        len = (which + 1 < at.size() ? at[which + 1] : s.size()) - h;
      }
      s.insert(pick(s.size() + 1), s.substr(from, len));
      break;
    }
    case 3: { // splice in part of another seed
      const std::string &other = seeds[pick(seeds.size())];
      size_t from = pick(other.size());
      s.insert(pick(s.size() + 1), other.substr(from, pick(300)));
      break;
    }
    case 4:   // a 32-bit field of a header
    case 5: { // a 64-bit field
      if (at.empty())
        break;
      uint64_t v = interesting();
      if (pick(2)) {
        size_t field = pick(4) * 4; // kind, protocol, slots, window
        uint32_t w = uint32_t(v);
        memcpy(&s[h + field], &w, 4);
      } else {
        size_t field = 16 + pick(4) * 8; // offset, slotBytes, step, size
        memcpy(&s[h + field], &v, 8);
      }
      break;
    }
    case 6: { // an offset just short of 2^64, so that offset + FIFO wraps
      if (at.empty())
        break;
      FrameHeader m;
      memcpy(&m, s.data() + h, sizeof m);
      if (pick(2)) {
        m.slotBytes = int64_t(1) << (20 + pick(43));
        m.slots = 1;
      }
      m.offset = uint64_t(0) - fifoBytes(m.slots, m.slotBytes) + pick(8) * 8;
      memcpy(&s[h], &m, sizeof m);
      break;
    }
    default: // the size of a window
      if (s.size() >= 3) {
        size_t w = pick(1 + uint8_t(s[0]) % kMaxWindows);
        uint16_t bytes = uint16_t(interesting());
        if (1 + 2 * w + 2 <= s.size())
          memcpy(&s[1 + 2 * w], &bytes, 2);
      }
      break;
    }
  }
  return s.size() > 1 << 16 ? s.substr(0, 1 << 16) : s;
}

} // namespace

/// collc-frame-fuzz [--seconds N] [--seed S]
int main(int argc, char **argv) {
  double seconds = 20;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = atof(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = strtoull(argv[++i], nullptr, 0);
    } else {
      fprintf(stderr, "usage: collc-frame-fuzz [--seconds N] [--seed S]\n");
      return 2;
    }
  }
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizers report memory errors themselves, then print the input.
  __sanitizer_set_death_callback(printInput);
  for (int sig : {SIGABRT, SIGALRM})
    signal(sig, report);
#else
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM})
    signal(sig, report);
#endif
  std::vector<std::string> seeds = makeSeeds();
  std::mt19937_64 rng(seed);
  auto start = std::chrono::steady_clock::now();
  uint64_t runs = 0;
  // Seeds first, unchanged, then mutants of seeds and of earlier mutants.
  std::string last;
  for (;; ++runs) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (runs >= seeds.size() && elapsed >= seconds)
      break;
    if (runs < seeds.size())
      current = seeds[runs];
    else
      current = mutate(runs % 4 && !last.empty() ? last : seeds[rng() % seeds.size()], seeds, rng);
    alarm(10);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(current.data()), current.size());
    alarm(0);
    last = current;
  }
  printf("collc-frame-fuzz: %llu inputs in %.0f s, no crash, hang or broken invariant\n",
         static_cast<unsigned long long>(runs), seconds);
  return 0;
}

#endif // COLLC_LIBFUZZER
