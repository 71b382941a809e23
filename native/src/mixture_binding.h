// N-API binding of seeded generation's deterministic-mixture update (src/model/conditional.ts).

#ifndef SYNTHD_NATIVE_MIXTURE_BINDING_H_
#define SYNTHD_NATIVE_MIXTURE_BINDING_H_

#include <napi.h>

namespace synthd {
namespace mixture {

// Adds mixtureAccumulate, proposalShift and weightedGram to the addon's exports.
void RegisterMixtureBindings(Napi::Env env, Napi::Object exports);

}  // namespace mixture
}  // namespace synthd

#endif  // SYNTHD_NATIVE_MIXTURE_BINDING_H_
