// Loads the CUDA compute core (libsynthd_gpu.so, gpu_api.h) at run time, so the addon never links
// CUDA: a machine without the library, the CUDA driver or a GPU still loads the addon and uses the
// CPU path; asking for the GPU there gives an error with the reason.
//
// The library is looked up next to the addon file (the same directory as synthd_native.node), or
// at $SYNTHD_GPU_LIBRARY when set. It is opened once per process, on the first use.
#ifndef SYNTHD_NATIVE_GPU_GPU_LOADER_H_
#define SYNTHD_NATIVE_GPU_GPU_LOADER_H_

#include <string>

#include "gpu_api.h"

namespace synthd {
namespace gpu {

// The library's functions (all non-null when loaded).
struct GpuApi {
  sg_abi_version_fn abi_version = nullptr;
  sg_device_info_fn device_info = nullptr;
  sg_create_fn create = nullptr;
  sg_destroy_fn destroy = nullptr;
  sg_last_error_fn last_error = nullptr;
  sg_params_fn params = nullptr;
  sg_adam_fn adam = nullptr;
  sg_set_targets_fn set_targets = nullptr;
  sg_loss_fn loss = nullptr;
  sg_train_step_fn train_step = nullptr;
  sg_eval_loss_fn eval_loss = nullptr;
  sg_generate_fn generate = nullptr;
  sg_release_fn release = nullptr;
};

// What the loader found: `api` is non-null when the library loaded AND a CUDA device answered;
// `device` is device 0's name then; otherwise `reason` says why not (library missing, built without
// CUDA, no driver, no device). `library` is the path tried.
struct GpuStatus {
  const GpuApi* api = nullptr;
  std::string device;
  int devices = 0;
  std::string reason;
  std::string library;
};

// Loads the library and asks for a device, once per process (thread-safe).
const GpuStatus& LoadGpu();

}  // namespace gpu
}  // namespace synthd

#endif  // SYNTHD_NATIVE_GPU_GPU_LOADER_H_
