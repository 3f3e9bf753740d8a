//===- IbVerbs.cpp - Verbs.h over libibverbs, opened with dlopen ----------===//
//
// collrt loads where rdma-core is not installed: libibverbs.so.1 is opened
// at run time and its setup calls resolved by name, while <infiniband/verbs.h>
// gives the types and the data path (post_send, post_recv, poll_cq are its
// inline calls through the device's context, no symbols). RC queue pairs as
// NCCL's net_ib makes them, one completion queue each, with a global route
// where the port is Ethernet (RoCE) or has no LID: on RoCE from the GID that
// IbSelect.h chooses (RoCE v2, routable) or COLL_IB_GID_INDEX, on
// InfiniBand GID index 0. The path MTU is the smaller of both ends' active
// MTUs, which the wire works out (pathMtu); COLL_IB_TC and COLL_IB_SL set
// the traffic class and service level. GPU memory
// is registered through a dma-buf with ibv_reg_dmabuf_mr, resolved where
// rdma-core has it (34 and later).
//
// This file compiles, and fails with a clear error where libibverbs or a
// device is missing, but it has never run against an RDMA NIC: none was at
// hand. The wire above it is tested over the in-memory verbs of the unit
// tests only. Without <infiniband/verbs.h> (or with COLLRT_WITHOUT_VERBS)
// collrt still builds, and the ib transport says why it is unavailable.
//
//===----------------------------------------------------------------------===//
#include "transport/Verbs.h"

#include "support/Env.h"
#include "transport/IbSelect.h"

#include <mutex>

#if !defined(COLLRT_WITHOUT_VERBS) && __has_include(<infiniband/verbs.h>)
#define COLLRT_HAVE_VERBS 1
#else
#define COLLRT_HAVE_VERBS 0
#endif

using namespace collrt;

#if COLLRT_HAVE_VERBS
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <type_traits>

namespace {

// The calls resolved by name. Members are not named ibv_*: verbs.h defines
// some of those names as macros.
struct IbApi {
  ibv_device **(*getDeviceList)(int *);
  void (*freeDeviceList)(ibv_device **);
  const char *(*getDeviceName)(ibv_device *);
  ibv_context *(*openDevice)(ibv_device *);
  int (*closeDevice)(ibv_context *);
  // The exported call fills the older, shorter attribute struct, a prefix of
  // this one (as NCCL calls it).
  int (*queryPort)(ibv_context *, uint8_t, ibv_port_attr *);
  int (*queryGid)(ibv_context *, uint8_t, int, ibv_gid *);
  ibv_pd *(*allocPd)(ibv_context *);
  int (*deallocPd)(ibv_pd *);
  ibv_mr *(*regMr)(ibv_pd *, void *, size_t, int);
  // rdma-core 34 and later; null before.
  ibv_mr *(*regDmabufMr)(ibv_pd *, uint64_t, size_t, uint64_t, int, int);
  int (*deregMr)(ibv_mr *);
  ibv_cq *(*createCq)(ibv_context *, int, void *, ibv_comp_channel *, int);
  int (*destroyCq)(ibv_cq *);
  ibv_qp *(*createQp)(ibv_pd *, ibv_qp_init_attr *);
  int (*modifyQp)(ibv_qp *, ibv_qp_attr *, int);
  int (*destroyQp)(ibv_qp *);
  const char *(*wcStatusStr)(ibv_wc_status);
};

const IbApi *loadIbApi(std::string &error) {
  static std::once_flag once;
  static IbApi api;
  static std::string why;
  std::call_once(once, [] {
    void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror();
      why = std::string("libibverbs not found (") + (e ? e : "libibverbs.so.1") +
            "): rdma-core's libibverbs1 is not installed";
      return;
    }
    const char *missing = nullptr;
    auto resolve = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && !missing)
        missing = name;
    };
    resolve(api.getDeviceList, "ibv_get_device_list");
    resolve(api.freeDeviceList, "ibv_free_device_list");
    resolve(api.getDeviceName, "ibv_get_device_name");
    resolve(api.openDevice, "ibv_open_device");
    resolve(api.closeDevice, "ibv_close_device");
    resolve(api.queryPort, "ibv_query_port");
    resolve(api.queryGid, "ibv_query_gid");
    resolve(api.allocPd, "ibv_alloc_pd");
    resolve(api.deallocPd, "ibv_dealloc_pd");
    resolve(api.regMr, "ibv_reg_mr");
    resolve(api.deregMr, "ibv_dereg_mr");
    resolve(api.createCq, "ibv_create_cq");
    resolve(api.destroyCq, "ibv_destroy_cq");
    resolve(api.createQp, "ibv_create_qp");
    resolve(api.modifyQp, "ibv_modify_qp");
    resolve(api.destroyQp, "ibv_destroy_qp");
    resolve(api.wcStatusStr, "ibv_wc_status_str");
    api.regDmabufMr = reinterpret_cast<decltype(api.regDmabufMr)>(dlsym(lib, "ibv_reg_dmabuf_mr"));
    if (missing) {
      why = std::string("libibverbs.so.1 has no ") + missing;
      dlclose(lib);
    }
  });
  if (!why.empty()) {
    error = why;
    return nullptr;
  }
  return &api; // and the library stays open for the process's life
}

std::string failed(const char *call, int code) {
  return std::string(call) + ": " + strerror(code ? code : errno);
}

class IbVerbs : public Verbs {
public:
  IbVerbs(const IbApi &api, ibv_context *context, std::string name, uint8_t port)
      : api(api), context(context), name(std::move(name)), port(port) {}
  ~IbVerbs() override {
    for (Pair &p : pairs) {
      if (p.qp)
        api.destroyQp(p.qp);
      if (p.cq)
        api.destroyCq(p.cq);
    }
    for (ibv_mr *mr : regions)
      api.deregMr(mr);
    if (pd)
      api.deallocPd(pd);
    api.closeDevice(context);
  }

  bool start(std::string &error) {
    portAttr = {};
    int r = api.queryPort(context, port, &portAttr);
    if (r) {
      error = name + " port " + std::to_string(port) + ": " + failed("ibv_query_port", r);
      return false;
    }
    if (portAttr.state != IBV_PORT_ACTIVE) {
      error = name + " port " + std::to_string(port) + " is not active";
      return false;
    }
    const bool roce = portAttr.link_layer == IBV_LINK_LAYER_ETHERNET;
    global = roce || portAttr.lid == 0;
    const Env &env = Env::get();
    if (env.ibGidIndex >= 0) {
      gidIndex = env.ibGidIndex;
    } else if (roce) {
      std::string why;
      if (!chooseRoceGid(readGidTable("/sys", name, port), gidIndex, why))
        fprintf(stderr, "collrt: %s port %d: %s\n", name.c_str(), int(port), why.c_str());
      else if (env.debug)
        fprintf(stderr, "collrt: %s port %d uses %s\n", name.c_str(), int(port), why.c_str());
    }
    if (global && (r = api.queryGid(context, port, gidIndex, &gid))) {
      error = name + " GID index " + std::to_string(gidIndex) + ": " + failed("ibv_query_gid", r);
      return false;
    }
    if (!(pd = api.allocPd(context))) {
      error = name + ": " + failed("ibv_alloc_pd", 0);
      return false;
    }
    return true;
  }

  std::string device() const override { return name + ":" + std::to_string(port); }

  bool createQueuePair(int peer, int depth, VerbsAddress &self, std::string &error) override {
    if (peer >= int(pairs.size()))
      pairs.resize(peer + 1);
    Pair &p = pairs[peer];
    if (!(p.cq = api.createCq(context, 2 * depth, nullptr, nullptr, 0))) {
      error = name + ": " + failed("ibv_create_cq", 0);
      return false;
    }
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = p.cq;
    init.cap.max_send_wr = init.cap.max_recv_wr = uint32_t(depth);
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_RC;
    if (!(p.qp = api.createQp(pd, &init))) {
      error = name + ": " + failed("ibv_create_qp", 0);
      return false;
    }
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    if (int r = api.modifyQp(
            p.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
      error = name + ": " + failed("ibv_modify_qp to INIT", r);
      return false;
    }
    p.psn = (p.qp->qp_num * 2654435761u) & 0xffffff;
    self.qpn = p.qp->qp_num;
    self.psn = p.psn;
    self.lid = portAttr.lid;
    self.mtu = uint8_t(portAttr.active_mtu);
    memcpy(self.gid, gid.raw, sizeof self.gid);
    return true;
  }

  bool connectQueuePair(int peer, const VerbsAddress &remote, uint8_t mtu,
                        std::string &error) override {
    Pair &p = pairs[peer];
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = ibv_mtu(mtu ? mtu : uint8_t(portAttr.active_mtu));
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.dlid = remote.lid;
    a.ah_attr.port_num = port;
    a.ah_attr.sl = uint8_t(Env::get().ibSl);
    if (global) {
      a.ah_attr.is_global = 1;
      memcpy(a.ah_attr.grh.dgid.raw, remote.gid, sizeof remote.gid);
      a.ah_attr.grh.sgid_index = uint8_t(gidIndex);
      a.ah_attr.grh.hop_limit = 255;
      a.ah_attr.grh.traffic_class = uint8_t(Env::get().ibTc);
    }
    if (int r =
            api.modifyQp(p.qp, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
      error = name + ": " + failed("ibv_modify_qp to RTR", r);
      return false;
    }
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 20;
    a.retry_cnt = 7;
    a.rnr_retry = 7; // without end: the peer reposts its receives as it polls
    a.sq_psn = p.psn;
    a.max_rd_atomic = 1;
    if (int r = api.modifyQp(p.qp, &a,
                             IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
      error = name + ": " + failed("ibv_modify_qp to RTS", r);
      return false;
    }
    return true;
  }

  void closeQueuePair(int peer) override {
    if (peer < int(pairs.size()) && pairs[peer].qp) {
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_ERR;
      api.modifyQp(pairs[peer].qp, &a, IBV_QP_STATE);
    }
  }

  bool registerMemory(void *base, size_t bytes, VerbsRegion &region, std::string &error) override {
    ibv_mr *mr = api.regMr(pd, base, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr) {
      error = name + ": " + failed("ibv_reg_mr", 0);
      return false;
    }
    regions.push_back(mr);
    region.lkey = mr->lkey;
    region.rkey = mr->rkey;
    return true;
  }

  // Relaxed ordering stays off: a put must land before the header that
  // follows it on the queue pair, which says that it has.
  bool registerDmabuf(int fd, size_t bytes, uint64_t iova, VerbsRegion &region,
                      std::string &error) override {
    if (!api.regDmabufMr) {
      error = "libibverbs has no ibv_reg_dmabuf_mr (rdma-core 34 or later has)";
      return false;
    }
    ibv_mr *mr =
        api.regDmabufMr(pd, 0, bytes, iova, fd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr) {
      error = name + ": " + failed("ibv_reg_dmabuf_mr", 0);
      return false;
    }
    regions.push_back(mr);
    region.lkey = mr->lkey;
    region.rkey = mr->rkey;
    return true;
  }

  bool postWrite(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
                 uint32_t rkey, uint32_t imm, std::string &error) override {
    return post(peer, local, lkey, bytes, remote, rkey, IBV_WR_RDMA_WRITE_WITH_IMM, htonl(imm),
                error);
  }

  bool postPut(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
               uint32_t rkey, std::string &error) override {
    return post(peer, local, lkey, bytes, remote, rkey, IBV_WR_RDMA_WRITE, 0, error);
  }

  bool postReceive(int peer, std::string &error) override {
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = uint64_t(peer); // an immediate scatters nothing
    if (int r = ibv_post_recv(pairs[peer].qp, &wr, &bad)) {
      error = failed("ibv_post_recv", r);
      return false;
    }
    return true;
  }

  int poll(std::vector<VerbsCompletion> &out, int max) override {
    ibv_wc wc[16];
    int got = 0;
    // Round robin, so that a busy peer cannot starve the others.
    for (size_t i = 0; i < pairs.size() && got < max; ++i) {
      Pair &p = pairs[next = (next + 1) % pairs.size()];
      if (!p.cq)
        continue;
      int n = ibv_poll_cq(p.cq, std::min(max - got, 16), wc);
      if (n < 0) {
        VerbsCompletion c;
        c.peer = int(&p - pairs.data());
        c.error = "ibv_poll_cq failed";
        out.push_back(std::move(c));
        ++got;
        continue;
      }
      for (int k = 0; k < n; ++k) {
        VerbsCompletion c;
        c.peer = int(wc[k].wr_id);
        if (wc[k].status != IBV_WC_SUCCESS)
          c.error = std::string(api.wcStatusStr(wc[k].status)) + ", vendor error " +
                    std::to_string(wc[k].vendor_err);
        else if (wc[k].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
          c.received = true;
          c.imm = ntohl(wc[k].imm_data);
        }
        out.push_back(std::move(c));
      }
      got += n;
    }
    return got;
  }

private:
  bool post(int peer, const void *local, uint32_t lkey, size_t bytes, uint64_t remote,
            uint32_t rkey, ibv_wr_opcode opcode, uint32_t imm, std::string &error) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(local), uint32_t(bytes), lkey};
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = uint64_t(peer);
    wr.sg_list = bytes ? &sge : nullptr;
    wr.num_sge = bytes ? 1 : 0;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = imm;
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    if (int r = ibv_post_send(pairs[peer].qp, &wr, &bad)) {
      error = failed("ibv_post_send", r);
      return false;
    }
    return true;
  }

  struct Pair {
    ibv_cq *cq = nullptr;
    ibv_qp *qp = nullptr;
    uint32_t psn = 0;
  };

  const IbApi &api;
  ibv_context *context;
  std::string name;
  uint8_t port;
  ibv_port_attr portAttr{};
  ibv_gid gid{};
  int gidIndex = 0;
  bool global = false;
  ibv_pd *pd = nullptr;
  std::vector<Pair> pairs;
  std::vector<ibv_mr *> regions;
  size_t next = 0;
};

} // namespace

std::unique_ptr<Verbs> collrt::openIbVerbs(const std::string &hca, std::string &error) {
  const IbApi *api = loadIbApi(error);
  if (!api)
    return nullptr;
  const std::string want = hca.substr(0, hca.find(':'));
  int port = 1;
  if (hca.find(':') != std::string::npos) {
    port = atoi(hca.c_str() + hca.find(':') + 1);
    if (port < 1 || port > 255) {
      error = "COLL_IB_HCA='" + hca + "': the port after ':' is a number from 1";
      return nullptr;
    }
  }
  int count = 0;
  ibv_device **devices = api->getDeviceList(&count);
  if (!devices) {
    error = "no RDMA device (" + failed("ibv_get_device_list", 0) + ")";
    return nullptr;
  }
  ibv_device *chosen = nullptr;
  std::string names;
  for (int i = 0; i < count; ++i) {
    const char *n = api->getDeviceName(devices[i]);
    names += (names.empty() ? "" : ", ") + std::string(n ? n : "?");
    if (!chosen && (want.empty() || want == (n ? n : "")))
      chosen = devices[i];
  }
  std::string name = chosen ? api->getDeviceName(chosen) : "";
  ibv_context *context = chosen ? api->openDevice(chosen) : nullptr;
  const int openErrno = errno;
  api->freeDeviceList(devices);
  if (!count) {
    error = "no RDMA device: libibverbs sees none";
    return nullptr;
  }
  if (!chosen) {
    error = "no RDMA device named '" + want + "' (COLL_IB_HCA; there are " + names + ")";
    return nullptr;
  }
  if (!context) {
    error = "cannot open RDMA device " + name + " (" + failed("ibv_open_device", openErrno) + ")";
    return nullptr;
  }
  auto verbs = std::make_unique<IbVerbs>(*api, context, name, uint8_t(port));
  if (!verbs->start(error))
    return nullptr;
  return verbs;
}

#else

std::unique_ptr<Verbs> collrt::openIbVerbs(const std::string &, std::string &error) {
  error = "collrt was built without rdma-core's <infiniband/verbs.h> (libibverbs-dev)";
  return nullptr;
}

#endif // COLLRT_HAVE_VERBS

std::string collrt::rdmaDevice(std::string &why) {
  static std::once_flag once;
  static std::string device, reason;
  std::call_once(once, [] {
    // Whether some device opens: local rank 0's, as the ranks are not
    // counted yet. The transport opens each rank's own (Ib.cpp).
    std::string how;
    const std::string hca = chooseIbHca(Env::get().ibHca, {}, "", 0, how);
    if (std::unique_ptr<Verbs> verbs = openIbVerbs(hca, reason))
      device = verbs->device();
  });
  why = reason;
  return device;
}
