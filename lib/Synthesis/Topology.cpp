//===- Topology.cpp - Machines that collectives run on --------------------===//
#include "lib/Synthesis/Topology.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

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
    return sameRail(a, b) ? netParams.bandwidthGBps
                          : netParams.bandwidthGBps / oversubscription;
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

/// Reads fields with defaults, remembering the first error with its path.
class Reader {
public:
  llvm::Error error = llvm::Error::success();

  ~Reader() { llvm::consumeError(std::move(error)); }

  void fail(llvm::StringRef path, const llvm::Twine &message) {
    if (!error)
      error = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                      "at " + path + ": " + message);
  }

  double number(const Object *o, llvm::StringRef key, llvm::StringRef path, double dflt,
                double min = 0) {
    const llvm::json::Value *v = o ? o->get(key) : nullptr;
    if (!v)
      return dflt;
    std::optional<double> d = v->getAsNumber();
    if (!d || *d < min) {
      fail((path + "." + key).str(), llvm::formatv("expected a number >= {0}", min));
      return dflt;
    }
    return *d;
  }

  int integer(const Object *o, llvm::StringRef key, llvm::StringRef path, int dflt,
              int min, int max) {
    const llvm::json::Value *v = o ? o->get(key) : nullptr;
    if (!v)
      return dflt;
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || *i < min || *i > max) {
      fail((path + "." + key).str(),
           llvm::formatv("expected an integer in {0} .. {1}", min, max));
      return dflt;
    }
    return static_cast<int>(*i);
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
    params.bandwidthGBps = number(l, "bandwidth", path, params.bandwidthGBps, 1e-9);
    if (const Object *lat = object(l, "latency", path))
      for (int p = 0; p < kNumProtocols; ++p)
        params.latencyUs[p] =
            number(lat, kProtocolNames[p], path + ".latency", params.latencyUs[p]);
  }
};

} // namespace

llvm::Expected<Topology> coll::parseTopology(llvm::StringRef text) {
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
  Reader r;
  if (const llvm::json::Value *name = root->get("name"))
    t.name = name->getAsString().value_or("custom").str();
  else
    t.name = "custom";
  t.nodes = r.integer(root, "nodes", "$", 1, 1, 1 << 14);
  t.gpusPerNode = r.integer(root, "gpusPerNode", "$", 8, 1, 1 << 10);

  const Object *nv = r.object(root, "nvlink", "$");
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
  t.nicsPerNode = r.integer(net, "nicsPerNode", "$.network", t.gpusPerNode, 1, 1 << 10);
  t.oversubscription = r.number(net, "oversubscription", "$.network", 1.0, 1.0);

  t.nvlinkLinks.assign(t.gpusPerNode, std::vector<int>(t.gpusPerNode, 0));
  if (t.nvlink == Topology::NVLinkKind::PointToPoint) {
    const llvm::json::Array *links = nv ? nv->getArray("links") : nullptr;
    if (!links)
      r.fail("$.nvlink.links", "point-to-point NVLink needs a links matrix");
    for (size_t i = 0; links && i < links->size(); ++i) {
      const llvm::json::Array *row = (*links)[i].getAsArray();
      if (!row || row->size() != size_t(t.gpusPerNode) || i >= size_t(t.gpusPerNode)) {
        r.fail(llvm::formatv("$.nvlink.links[{0}]", i).str(),
               llvm::formatv("expected {0} rows of {0} link counts", t.gpusPerNode));
        break;
      }
      for (size_t j = 0; j < row->size(); ++j)
        t.nvlinkLinks[i][j] = static_cast<int>((*row)[j].getAsInteger().value_or(0));
    }
  }

  if (const Object *protocols = r.object(root, "protocols", "$"))
    for (int p = 0; p < kNumProtocols; ++p) {
      std::string path = std::string("$.protocols.") + kProtocolNames[p];
      const Object *po = r.object(protocols, kProtocolNames[p], "$.protocols");
      t.efficiency[p] = r.number(po, "efficiency", path, t.efficiency[p], 1e-3);
      t.baseLatencyUs[p] = r.number(po, "baseLatency", path, t.baseLatencyUs[p]);
      t.maxBandwidthGBps[p] = r.number(po, "maxBandwidth", path, t.maxBandwidthGBps[p], 1e-9);
    }

  // GPUs: listed explicitly (to describe a scrambled numbering), or in order.
  t.gpus.clear();
  if (const llvm::json::Array *gpus = root->getArray("gpus")) {
    for (size_t i = 0; i < gpus->size(); ++i) {
      std::string path = llvm::formatv("$.gpus[{0}]", i).str();
      const Object *g = (*gpus)[i].getAsObject();
      if (!g) {
        r.fail(path, "expected an object");
        break;
      }
      Gpu gpu;
      gpu.node = r.integer(g, "node", path, 0, 0, t.nodes - 1);
      gpu.local = r.integer(g, "local", path, 0, 0, t.gpusPerNode - 1);
      gpu.nic = r.integer(g, "nic", path,
                          gpu.local * t.nicsPerNode / t.gpusPerNode, 0, t.nicsPerNode - 1);
      t.gpus.push_back(gpu);
    }
    std::vector<int> seen(size_t(t.nodes) * t.gpusPerNode, 0);
    for (size_t i = 0; i < t.gpus.size() && !r.error; ++i)
      if (seen[t.gpus[i].node * t.gpusPerNode + t.gpus[i].local]++)
        r.fail(llvm::formatv("$.gpus[{0}]", i).str(),
               "two GPUs have the same node and local index");
  } else {
    for (int n = 0; n < t.nodes; ++n)
      for (int l = 0; l < t.gpusPerNode; ++l)
        t.gpus.push_back({n, l, l * t.nicsPerNode / t.gpusPerNode});
  }
  if (r.error)
    return std::move(r.error);
  return t;
}

llvm::Expected<Topology> coll::loadTopology(llvm::StringRef spec) {
  llvm::StringRef name = spec.split(':').first;
  for (const std::string &preset : presetNames())
    if (name == preset)
      return presetTopology(spec);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(spec);
  if (!file) {
    std::string names;
    for (const std::string &preset : presetNames())
      names += (names.empty() ? "" : ", ") + preset;
    return llvm::createStringError(file.getError(),
                                   "'" + spec + "' is neither a topology preset (" +
                                       names + ") nor a readable file");
  }
  llvm::Expected<Topology> t = parseTopology((*file)->getBuffer());
  if (!t)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   spec + ": " + llvm::toString(t.takeError()));
  return t;
}
