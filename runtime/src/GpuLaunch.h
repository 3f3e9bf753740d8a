//===- GpuLaunch.h - Running an nvcc-built plan on the caller's GPU -------===//
//
// The GPU half of collLaunch: the plan's FIFOs are CUDA VMM memory shared
// between the ranks' GPUs (Launch.cpp's setUp), and each launch hands the
// kernel its threadblocks' Args in device memory and returns at once, as
// NCCL does. Errors that the kernels report (timeouts, refusals) reach the
// host through host-mapped memory and fail the next call.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_GPULAUNCH_H
#define COLLRT_GPULAUNCH_H

#include "collc/abi.h"
#include "collrt.h"

#include <cstdint>

struct collComm;
struct collWindow;

namespace collrt {

struct AlgorithmSetup;

struct GpuLaunch {
  const collc::AlgorithmDesc *algorithm;
  const collc::PlanDesc *plan;
  const AlgorithmSetup *setup;
  collc::LaunchShape shape;
  const void *send;
  void *recv;
  int64_t count, slice; // elements per unit, per chunk per loop
  collDataType_t type;
  collRedOp_t op;
  void *stream;
  bool windows; // steps on other ranks' buffers: every rank's in a window
};

/// Loads every plan's kernels of an nvcc-built `alg` into the current
/// context, once per process (collc::DeviceLoadFn says why), so that no
/// later launch loads a module while a kernel spins; the error of the
/// first plan that fails, on `comm`.
collResult_t loadKernels(collComm *comm, const collc::AlgorithmDesc *alg);

/// Runs `launch` on the current device. The caller has checked the
/// arguments and made the FIFOs.
collResult_t launchOnGpu(collComm *comm, const GpuLaunch &launch);

/// While it lives, this thread may make the CUDA calls that a stream
/// capture forbids (allocations, VMM mappings), as NCCL does: the launch
/// captured into a graph may be the first, which connects the FIFOs.
class RelaxedCapture {
public:
  RelaxedCapture();
  ~RelaxedCapture();
  RelaxedCapture(const RelaxedCapture &) = delete;
  RelaxedCapture &operator=(const RelaxedCapture &) = delete;

private:
  int mode = 0;
  bool changed = false;
};
/// Collective, when every rank registers a window of GPU memory: binds it
/// to a multicast object where the group has NVLink multicast, so that
/// multimem steps on it run there.
collResult_t bindWindow(collComm *comm, collWindow *window);
/// Undoes bindWindow, once no kernel uses the window.
void unbindWindow(collWindow *window);

/// Tells this communicator's running kernels to stop (collCommAbort).
void abortGpu(collComm *comm);
/// Frees what launchOnGpu made, after the kernels have ended.
void releaseGpu(collComm *comm);

} // namespace collrt

#endif // COLLRT_GPULAUNCH_H
