// N-API binding of the pool repair's scoring (repair.h): function repairScores.

#ifndef SYNTHD_NATIVE_REPAIR_BINDING_H_
#define SYNTHD_NATIVE_REPAIR_BINDING_H_

#include <napi.h>

namespace synthd {
namespace repair {

// Adds repairScores to the addon's exports.
void RegisterRepairBindings(Napi::Env env, Napi::Object exports);

}  // namespace repair
}  // namespace synthd

#endif  // SYNTHD_NATIVE_REPAIR_BINDING_H_
