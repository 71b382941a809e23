#include "gpu_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace synthd {
namespace gpu {

namespace {

// Directory of the file holding this function (the addon).
std::string AddonDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&AddonDir), &info) == 0 || info.dli_fname == nullptr) return ".";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

template <typename T>
bool Sym(void* lib, const char* name, T* out, std::string* missing) {
  *out = reinterpret_cast<T>(dlsym(lib, name));
  if (*out == nullptr) *missing = name;
  return *out != nullptr;
}

GpuStatus Load() {
  GpuStatus s;
  const char* env = std::getenv("SYNTHD_GPU_LIBRARY");
  s.library = env != nullptr && env[0] != '\0' ? std::string(env) : AddonDir() + "/libsynthd_gpu.so";
  void* lib = dlopen(s.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    s.reason = std::string("the CUDA core (") + s.library + ") did not load: " + (e ? e : "unknown error") +
               " (it is built only where nvcc and cuBLAS were found at install)";
    return s;
  }
  static GpuApi api;
  std::string missing;
  const bool ok = Sym(lib, "sg_abi_version", &api.abi_version, &missing) &&
                  Sym(lib, "sg_device_info", &api.device_info, &missing) && Sym(lib, "sg_create", &api.create, &missing) &&
                  Sym(lib, "sg_destroy", &api.destroy, &missing) &&
                  Sym(lib, "sg_last_error", &api.last_error, &missing) && Sym(lib, "sg_params", &api.params, &missing) &&
                  Sym(lib, "sg_adam", &api.adam, &missing) && Sym(lib, "sg_set_targets", &api.set_targets, &missing) &&
                  Sym(lib, "sg_loss", &api.loss, &missing) && Sym(lib, "sg_train_step", &api.train_step, &missing) &&
                  Sym(lib, "sg_eval_loss", &api.eval_loss, &missing) &&
                  Sym(lib, "sg_generate", &api.generate, &missing) && Sym(lib, "sg_release", &api.release, &missing);
  if (!ok) {
    s.reason = s.library + " lacks " + missing + " (stale build? rerun `node native/build.js`)";
    return s;
  }
  if (api.abi_version() != SYNTHD_GPU_ABI_VERSION) {
    s.reason = s.library + " has interface version " + std::to_string(api.abi_version()) + ", the addon expects " +
               std::to_string(SYNTHD_GPU_ABI_VERSION) + " (rerun `node native/build.js`)";
    return s;
  }
  char name[256] = {0};
  s.devices = api.device_info(name, sizeof name);
  if (s.devices <= 0) {
    s.reason = std::string("no CUDA GPU: ") + name;
    return s;
  }
  s.device = name;
  s.api = &api;
  return s;
}

}  // namespace

const GpuStatus& LoadGpu() {
  static std::once_flag once;
  static GpuStatus status;
  std::call_once(once, [] { status = Load(); });
  return status;
}

}  // namespace gpu
}  // namespace synthd
