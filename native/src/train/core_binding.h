// N-API bindings of the training / generation core (generator_core.h).

#ifndef SYNTHD_NATIVE_TRAIN_CORE_BINDING_H_
#define SYNTHD_NATIVE_TRAIN_CORE_BINDING_H_

#include <napi.h>

namespace synthd {
namespace train {

// Adds GeneratorCore (class), learningRate and computeInfo to the addon's exports.
void RegisterCoreBindings(Napi::Env env, Napi::Object exports);

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_CORE_BINDING_H_
