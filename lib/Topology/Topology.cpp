//===- Topology.cpp - Machines that collectives run on --------------------===//
#include "lib/Topology/Topology.h"
#include "lib/Support/Names.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

using namespace coll;
using llvm::json::Object;

llvm::StringRef coll::linkClassName(LinkClass c) {
  switch (c) {
  case LinkClass::Local:
    return "local";
  case LinkClass::NVLink:
    return "nvlink";
  case LinkClass::PCIe:
    return "pcie";
  case LinkClass::Net:
    return "net";
  }
  return "?";
}

LinkClass Topology::linkClass(int a, int b) const {
  if (a == b)
    return LinkClass::Local;
  const Gpu &ga = gpus[a], &gb = gpus[b];
  int da = (ga.node * gpusPerNode + ga.local) / nvlinkDomain;
  int db = (gb.node * gpusPerNode + gb.local) / nvlinkDomain;
  if (da == db && nvlink == NVLinkKind::Switch)
    return LinkClass::NVLink;
  if (ga.node == gb.node && nvlink == NVLinkKind::PointToPoint &&
      nvlinkLinks[ga.local][gb.local] > 0)
    return LinkClass::NVLink;
  return ga.node == gb.node ? LinkClass::PCIe : LinkClass::Net;
}

double Topology::bandwidth(int a, int b) const {
  switch (linkClass(a, b)) {
  case LinkClass::Local:
    return 2 * std::max(nvlinkParams.bandwidthGBps, pcieParams.bandwidthGBps);
  case LinkClass::NVLink:
    if (nvlink == NVLinkKind::PointToPoint)
      return nvlinkParams.bandwidthGBps * nvlinkLinks[gpus[a].local][gpus[b].local];
    return nvlinkParams.bandwidthGBps;
  case LinkClass::PCIe:
    return pcieParams.bandwidthGBps;
  case LinkClass::Net:
    // Traffic between rails crosses the spine, which oversubscription thins.
    return sameRail(a, b) ? netParams.bandwidthGBps : netParams.bandwidthGBps / oversubscription;
  }
  return 0;
}

double Topology::latency(int a, int b, int protocol) const {
  switch (linkClass(a, b)) {
  case LinkClass::Local:
    return 0;
  case LinkClass::NVLink:
    return nvlinkParams.latencyUs[protocol];
  case LinkClass::PCIe:
    return pcieParams.latencyUs[protocol];
  case LinkClass::Net:
    // A second hop through the spine between rails.
    return netParams.latencyUs[protocol] * (sameRail(a, b) ? 1 : 2);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {

const char *const kProtocolNames[kNumProtocols] = {"Simple", "LL", "LL128"};
constexpr int kMaxLinks = 1024; // NVLinks between two GPUs of a p2p node

// The keys each object of the format knows (docs/topology.md).
const llvm::StringRef kRootKeys[] = {"name", "nodes",   "gpusPerNode", "nvlink",
                                     "pcie", "network", "protocols",   "gpus"};
const llvm::StringRef kNVLinkKeys[] = {"kind",      "domain",  "multicast",
                                       "bandwidth", "latency", "links"};
const llvm::StringRef kPcieKeys[] = {"bandwidth", "latency"};
const llvm::StringRef kNetworkKeys[] = {"bandwidth", "latency", "nicsPerNode", "oversubscription"};
const llvm::StringRef kProtocolKeys[] = {"Simple", "LL", "LL128"};
const llvm::StringRef kEfficiencyKeys[] = {"efficiency", "baseLatency", "maxBandwidth", "netPost"};
const llvm::StringRef kGpuKeys[] = {"node", "local", "nic"};

llvm::Error textError(llvm::StringRef text, size_t at, const llvm::Twine &message) {
  size_t line = 1 + text.take_front(at).count('\n');
  size_t col = at - (text.take_front(at).rfind('\n') + 1) + 1; // npos + 1 == 0
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 llvm::formatv("[{0}:{1}, byte={2}]: ", line, col, at) + message);
}

/// Where arrays and objects first nest deeper than kMaxTopologyNesting:
/// llvm::json recurses once per level.
std::optional<size_t> tooDeep(llvm::StringRef text) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxTopologyNesting)
        return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

/// Reads fields with defaults, remembering the first error with its path.
class Reader {
public:
  llvm::Error error = llvm::Error::success();

  ~Reader() { llvm::consumeError(std::move(error)); }

  void fail(llvm::StringRef path, const llvm::Twine &message) {
    if (!error)
      error =
          llvm::createStringError(llvm::inconvertibleErrorCode(), "at " + path + ": " + message);
  }

  /// A finite number of at least `min`, or above it where `above` (a
  /// bandwidth must be, since transfer times divide by it).
  double number(const Object *o, llvm::StringRef key, llvm::StringRef path, double dflt,
                double min = 0, bool above = false) {
    const llvm::json::Value *v = o ? o->get(key) : nullptr;
    if (!v)
      return dflt;
    std::optional<double> d = v->getAsNumber();
    if (!d || !std::isfinite(*d) || *d < min || (above && *d == min)) {
      // %g: formatv's default of two decimals showed a minimum of 1e-3 as 0.00.
      fail((path + "." + key).str(), llvm::formatv("expected a finite number {0} {1}",
                                                   above ? ">" : ">=", llvm::format("%g", min)));
      return dflt;
    }
    return *d;
  }

  int integer(const Object *o, llvm::StringRef key, llvm::StringRef path, int dflt, int min,
              int max) {
    const llvm::json::Value *v = o ? o->get(key) : nullptr;
    if (!v)
      return dflt;
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || *i < min || *i > max) {
      fail((path + "." + key).str(), llvm::formatv("expected an integer in {0} .. {1}", min, max));
      return dflt;
    }
    return static_cast<int>(*i);
  }

  /// Reports the first (in name order) key of `o` that is not `known`.
  void keys(const Object *o, llvm::StringRef path, llvm::ArrayRef<llvm::StringRef> known) {
    if (!o)
      return;
    std::optional<llvm::StringRef> unknown;
    for (const auto &entry : *o) {
      llvm::StringRef key = entry.first;
      if (!llvm::is_contained(known, key) && (!unknown || key < *unknown))
        unknown = key;
    }
    if (unknown)
      fail(path, "unknown key '" + *unknown + "'" + didYouMean(*unknown, known));
  }

  const Object *object(const Object *o, llvm::StringRef key, llvm::StringRef path) {
    const llvm::json::Value *v = o ? o->get(key) : nullptr;
    if (!v)
      return nullptr;
    if (!v->getAsObject())
      fail((path + "." + key).str(), "expected an object");
    return v->getAsObject();
  }

  void link(const Object *o, llvm::StringRef key, LinkParams &params) {
    std::string path = ("$." + key).str();
    const Object *l = object(o, key, "$");
    params.bandwidthGBps = number(l, "bandwidth", path, params.bandwidthGBps, 0, /*above=*/true);
    if (const Object *lat = object(l, "latency", path)) {
      keys(lat, path + ".latency", kProtocolKeys);
      for (int p = 0; p < kNumProtocols; ++p)
        params.latencyUs[p] =
            number(lat, kProtocolNames[p], path + ".latency", params.latencyUs[p]);
    }
  }
};

} // namespace

namespace {

/// Afterwards `t` has the file's name and node shape; the GPUs and links
/// read later are bounded by them.
void readShape(Reader &r, const Object *root, Topology &t) {
  r.keys(root, "$", kRootKeys);
  t.name = "custom";
  if (const llvm::json::Value *name = root->get("name")) {
    if (std::optional<llvm::StringRef> s = name->getAsString())
      t.name = s->str();
    else
      r.fail("$.name", "expected a string");
  }
  t.nodes = r.integer(root, "nodes", "$", 1, 1, 1 << 14);
  t.gpusPerNode = r.integer(root, "gpusPerNode", "$", 8, 1, 1 << 10);
}

/// Afterwards `t` has its NVLink kind and domain and every link class's
/// parameters; returns the nvlink object, which may hold the link matrix.
const Object *readLinks(Reader &r, const Object *root, Topology &t) {
  const Object *nv = r.object(root, "nvlink", "$");
  r.keys(nv, "$.nvlink", kNVLinkKeys);
  r.keys(r.object(root, "pcie", "$"), "$.pcie", kPcieKeys);
  t.nvlinkDomain = r.integer(nv, "domain", "$.nvlink", t.gpusPerNode, 1, 1 << 20);
  std::string kind = "switch";
  if (nv)
    if (const llvm::json::Value *k = nv->get("kind"))
      kind = k->getAsString().value_or("?").str();
  if (kind == "switch")
    t.nvlink = Topology::NVLinkKind::Switch;
  else if (kind == "p2p")
    t.nvlink = Topology::NVLinkKind::PointToPoint;
  else if (kind == "none")
    t.nvlink = Topology::NVLinkKind::None;
  else
    r.fail("$.nvlink.kind", "expected \"switch\", \"p2p\" or \"none\"");
  if (nv)
    if (const llvm::json::Value *m = nv->get("multicast")) {
      if (std::optional<bool> b = m->getAsBoolean())
        t.multicast = *b && t.nvlink == Topology::NVLinkKind::Switch;
      else
        r.fail("$.nvlink.multicast", "expected true or false");
    }
  r.link(root, "nvlink", t.nvlinkParams);
  r.link(root, "pcie", t.pcieParams);
  r.link(root, "network", t.netParams);
  const Object *net = r.object(root, "network", "$");
  r.keys(net, "$.network", kNetworkKeys);
  t.nicsPerNode = r.integer(net, "nicsPerNode", "$.network", t.gpusPerNode, 1, 1 << 10);
  t.oversubscription = r.number(net, "oversubscription", "$.network", 1.0, 1.0);
  return nv;
}

/// Afterwards `t.nvlinkLinks` is a gpusPerNode square, zero but where a
/// point-to-point node's matrix names links.
void readLinkMatrix(Reader &r, const Object *nv, Topology &t) {
  t.nvlinkLinks.assign(t.gpusPerNode, std::vector<int>(t.gpusPerNode, 0));
  if (t.nvlink != Topology::NVLinkKind::PointToPoint)
    return;
  const llvm::json::Array *links = nv ? nv->getArray("links") : nullptr;
  const size_t n = size_t(t.gpusPerNode);
  if (!links)
    r.fail("$.nvlink.links", "point-to-point NVLink needs a links matrix");
  else if (links->size() != n)
    r.fail("$.nvlink.links", llvm::formatv("expected {0} rows of {0} link counts, got {1} "
                                           "rows",
                                           n, links->size()));
  for (size_t i = 0; links && i < links->size() && !r.error; ++i) {
    std::string path = llvm::formatv("$.nvlink.links[{0}]", i).str();
    const llvm::json::Array *row = (*links)[i].getAsArray();
    if (!row || row->size() != n) {
      r.fail(path, llvm::formatv("expected a row of {0} link counts", n));
      break;
    }
    for (size_t j = 0; j < n && !r.error; ++j) {
      std::optional<int64_t> count = (*row)[j].getAsInteger();
      if (!count || *count < 0 || *count > kMaxLinks)
        r.fail(llvm::formatv("{0}[{1}]", path, j).str(),
               llvm::formatv("expected a link count in 0 .. {0}", kMaxLinks));
      else
        t.nvlinkLinks[i][j] = static_cast<int>(*count);
    }
  }
}

/// Afterwards each protocol's efficiency, base latency and bandwidth cap
/// are the file's where it names them, else the preset's.
void readProtocols(Reader &r, const Object *root, Topology &t) {
  const Object *protocols = r.object(root, "protocols", "$");
  if (!protocols)
    return;
  r.keys(protocols, "$.protocols", kProtocolKeys);
  for (int p = 0; p < kNumProtocols; ++p) {
    std::string path = std::string("$.protocols.") + kProtocolNames[p];
    const Object *po = r.object(protocols, kProtocolNames[p], "$.protocols");
    r.keys(po, path, kEfficiencyKeys);
    t.efficiency[p] = r.number(po, "efficiency", path, t.efficiency[p], 1e-3);
    t.baseLatencyUs[p] = r.number(po, "baseLatency", path, t.baseLatencyUs[p]);
    t.netPostUs[p] = r.number(po, "netPost", path, t.netPostUs[p]);
    t.maxBandwidthGBps[p] =
        r.number(po, "maxBandwidth", path, t.maxBandwidthGBps[p], 0, /*above=*/true);
  }
}

/// Afterwards `t.gpus` lists every GPU once: listed explicitly (to describe
/// a scrambled numbering), or in order.
void readGpus(Reader &r, const Object *root, Topology &t) {
  t.gpus.clear();
  if (root->get("gpus") && !root->getArray("gpus"))
    r.fail("$.gpus", "expected an array");
  const llvm::json::Array *gpus = root->getArray("gpus");
  if (!gpus) {
    for (int n = 0; n < t.nodes; ++n)
      for (int l = 0; l < t.gpusPerNode; ++l)
        t.gpus.push_back({n, l, l * t.nicsPerNode / t.gpusPerNode});
    return;
  }
  for (size_t i = 0; i < gpus->size(); ++i) {
    std::string path = llvm::formatv("$.gpus[{0}]", i).str();
    const Object *g = (*gpus)[i].getAsObject();
    if (!g) {
      r.fail(path, "expected an object");
      break;
    }
    r.keys(g, path, kGpuKeys);
    Gpu gpu;
    gpu.node = r.integer(g, "node", path, 0, 0, t.nodes - 1);
    gpu.local = r.integer(g, "local", path, 0, 0, t.gpusPerNode - 1);
    gpu.nic =
        r.integer(g, "nic", path, gpu.local * t.nicsPerNode / t.gpusPerNode, 0, t.nicsPerNode - 1);
    t.gpus.push_back(gpu);
  }
  std::vector<int> seen(size_t(t.nodes) * t.gpusPerNode, 0);
  for (size_t i = 0; i < t.gpus.size() && !r.error; ++i)
    if (seen[t.gpus[i].node * t.gpusPerNode + t.gpus[i].local]++)
      r.fail(llvm::formatv("$.gpus[{0}]", i).str(), "two GPUs have the same node and local index");
}

} // namespace

llvm::Expected<Topology> coll::parseTopology(llvm::StringRef text) {
  if (text.size() > kMaxTopologyBytes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0} bytes is more than the {1} bytes (16 MiB) a topology may have",
                      text.size(), kMaxTopologyBytes));
  if (std::optional<size_t> at = tooDeep(text))
    return textError(
        text, *at,
        llvm::formatv("arrays and objects nest deeper than {0} levels", kMaxTopologyNesting));
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return parsed.takeError();
  const Object *root = parsed->getAsObject();
  if (!root)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "at $: a topology is a JSON object");
  // Defaults are those of an HGX H100 node; a file overrides what it names.
  llvm::Expected<Topology> base = presetTopology("hgx-h100");
  if (!base)
    return base.takeError();
  Topology t = std::move(*base);
  // The Reader keeps only the first error, so the order of the stages
  // decides which error a file with several is told about.
  Reader r;
  readShape(r, root, t);
  const Object *nv = readLinks(r, root, t);
  readLinkMatrix(r, nv, t);
  readProtocols(r, root, t);
  readGpus(r, root, t);
  if (r.error)
    return std::move(r.error);
  return t;
}

/// The file's text, reading no further than kMaxTopologyBytes + 1 bytes:
/// `spec` may name a device or a pipe that never ends.
static llvm::Expected<std::string> readBounded(llvm::StringRef path) {
  llvm::Expected<llvm::sys::fs::file_t> file = llvm::sys::fs::openNativeFileForRead(path);
  if (!file)
    return file.takeError();
  std::string text;
  char chunk[1 << 16];
  llvm::Error error = llvm::Error::success();
  while (true) {
    llvm::Expected<size_t> n = llvm::sys::fs::readNativeFile(*file, chunk);
    if (!n) {
      error = n.takeError();
      break;
    }
    if (*n == 0)
      break;
    text.append(chunk, *n);
    if (text.size() > kMaxTopologyBytes) {
      error = llvm::errorCodeToError(std::make_error_code(std::errc::file_too_large));
      break;
    }
  }
  llvm::sys::fs::closeFile(*file);
  if (error)
    return std::move(error);
  return text;
}

llvm::Expected<Topology> coll::loadTopology(llvm::StringRef spec) {
  llvm::StringRef name = spec.split(':').first;
  for (const std::string &preset : presetNames())
    if (name == preset)
      return presetTopology(spec);
  llvm::Expected<std::string> text = readBounded(spec);
  if (!text) {
    std::error_code ec = llvm::errorToErrorCode(text.takeError());
    if (ec == std::errc::file_too_large)
      return llvm::createStringError(ec, llvm::formatv("{0}: the file is larger than the {1} "
                                                       "bytes (16 MiB) a topology may have",
                                                       spec, kMaxTopologyBytes));
    std::vector<std::string> presetList = presetNames();
    llvm::SmallVector<llvm::StringRef> presets(presetList.begin(), presetList.end());
    return llvm::createStringError(ec, "'" + spec + "' is neither a topology preset (" +
                                           llvm::join(presets, ", ") + ") nor a readable file" +
                                           didYouMean(name, presets));
  }
  llvm::Expected<Topology> t = parseTopology(*text);
  if (!t)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   spec + ": " + llvm::toString(t.takeError()));
  return t;
}
