//===- RunLimits.cpp - What `collc run` refuses before it compiles --------===//
//
// The estimate follows what a run allocates: collc-launch's buffers and
// reference in every rank (tools/collc-launch), the runtime's scratch and
// peer windows (runtime/src/Launch.cpp), and the receive FIFOs of every
// plan variant of the algorithm, which the first launch sets up together.
//
//===----------------------------------------------------------------------===//
#include "RunLimits.h"

#include "dialect/CollOps.h"
#include "lib/Support/Bytes.h"

#include "ranks/Memory.h"
#include "ranks/Names.h"
#include "support/Env.h"
#include "support/FifoLayout.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using collc_launch::showBytes;

namespace {

/// Element counts and bytes as doubles: requests can exceed int64_t.
constexpr double kRuntimeMaxBytes = double(int64_t(1) << 40); // collLaunch's limit

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

int64_t elementBytes(collDataType_t t) {
  switch (t) {
  case collInt8:
  case collUint8:
  case collFloat8e4m3:
  case collFloat8e5m2:
    return 1;
  case collFloat16:
  case collBfloat16:
    return 2;
  case collInt32:
  case collUint32:
  case collFloat32:
    return 4;
  default:
    return 8;
  }
}

/// One slot's bytes per protocol, as the runtime will read its knobs.
int64_t slotBytesOf(coll::ProtocolAttr protocol) {
  collrt::Env defaults;
  auto knob = [](const char *name, int64_t fallback) {
    const char *v = std::getenv(name);
    char *end = nullptr;
    long long n = v && *v ? std::strtoll(v, &end, 10) : 0;
    return n > 0 && end && !*end ? int64_t(n) : fallback;
  };
  coll::Protocol p = protocol ? protocol.getValue() : coll::Protocol::Simple;
  if (p == coll::Protocol::LL)
    return knob("COLL_LL_SLOT", defaults.llSlot);
  if (p == coll::Protocol::LL128)
    return knob("COLL_LL128_SLOT", defaults.ll128Slot);
  return knob("COLL_SIMPLE_SLOT", defaults.simpleSlot);
}

} // namespace

llvm::Error collc::checkRunRanks(int64_t ranks, bool given) {
  if (!given)
    return fail("--ranks is required");
  if (ranks < 1)
    return fail("--ranks " + llvm::Twine(ranks) + " must be >= 1");
  if (ranks > kMaxRunRanks)
    return fail("--ranks " + llvm::Twine(ranks) + " exceeds the maximum of " +
                llvm::Twine(kMaxRunRanks) + " emulated ranks");
  return llvm::Error::success();
}

llvm::Error collc::parseRunCount(llvm::StringRef text, int64_t &count) {
  std::optional<int64_t> n = coll::parseCount(text);
  if (!n)
    return fail("--count expects a whole number of elements, K, M, G or T (powers of 1024) may "
                "follow, got '" +
                text + "'");
  count = *n;
  return llvm::Error::success();
}

llvm::Error collc::checkRunMemory(ModuleOp module, const RunRequest &request) {
  collDataType_t type;
  if (!collc_launch::parseType(request.dtype, type))
    return llvm::Error::success(); // collc-launch names the unknown type
  const double R = double(request.ranks), E = double(request.count);
  const double es = double(elementBytes(type));

  std::string name = request.algorithm;
  double perRank = 0, fifos = 0;
  for (auto plan : module.getOps<coll::PlanOp>()) {
    StringRef base = plan.getAlgorithm().value_or(plan.getSymName());
    if (name.empty())
      name = base.str();
    if (base != name)
      continue;
    // collc-launch: input and output (one buffer in place), the reference
    // and which of its elements are checked.
    coll::Collective c = plan.getCollective();
    double in = c == coll::Collective::reducescatter || c == coll::Collective::alltoall ? R : 1;
    double out = c == coll::Collective::allgather || c == coll::Collective::alltoall ? R : 1;
    double buffers = request.inplace ? std::max(in, out) * E * es : (in + out) * E * es;
    double launch = buffers + out * E * (es + 1);
    // The runtime: scratch chunks sized like the chunks of a rank's data,
    // and copies of everything in a window for peer steps.
    double chunks = double(plan.getChunks()), scratch = 0;
    if (auto dict = plan.getScratchAttr())
      for (NamedAttribute e : dict)
        scratch +=
            double(llvm::cast<IntegerAttr>(e.getValue()).getInt()) * std::ceil(E / chunks) * es;
    bool peerSteps = false;
    plan.walk([&](Operation *op) {
      peerSteps |= isa<coll::MultimemLdReduceOp, coll::MultimemStOp, coll::ReadReduceOp,
                       coll::PutOp, coll::GetOp>(op);
    });
    launch += scratch + (peerSteps ? (in + out) * E * es + scratch : 0);
    perRank = std::max(perRank, launch);
    // Every variant's FIFOs are made at the first launch, one for each
    // replica of a receiving threadblock at the most replicas the plan runs.
    int64_t slots = 8, replicas = 1;
    if (std::optional<uint64_t> n = plan.getSlots())
      slots = int64_t(std::min<uint64_t>(*n, INT32_MAX));
    if (coll::LaunchAttr launch = plan.getLaunchAttr())
      for (const coll::LaunchRange &r : launch.getRanges())
        replicas = std::max(replicas, r.replicas);
    plan.walk([&](coll::ThreadblockOp tb) {
      if (tb.getRecv())
        fifos += double(replicas) *
                 double(collrt::fifoBytes(int32_t(slots), slotBytesOf(tb.getProtocolAttr())));
    });
  }
  double need = R * perRank + fifos, available = collc_launch::availableMemory();
  if (need > available)
    return fail(llvm::formatv("the run needs about {0} of memory ({1} ranks x {2} of buffers "
                              "for --count {3}, {4} of FIFOs), more than the {5} available",
                              showBytes(need), request.ranks, showBytes(perRank), request.count,
                              showBytes(fifos), showBytes(available)));
  if (E * R * es > kRuntimeMaxBytes)
    return fail(llvm::formatv("--count {0} x {1} ranks x {2}-byte elements is more than "
                              "the runtime's limit of {3} per launch",
                              request.count, request.ranks, es, showBytes(kRuntimeMaxBytes)));
  return llvm::Error::success();
}
