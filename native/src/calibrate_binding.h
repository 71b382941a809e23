// N-API binding of the raking core (calibrate.h): class Raking.

#ifndef SYNTHD_NATIVE_CALIBRATE_BINDING_H_
#define SYNTHD_NATIVE_CALIBRATE_BINDING_H_

#include <napi.h>

namespace synthd {
namespace calibrate {

// Adds the Raking class to the addon's exports.
void RegisterRakingBindings(Napi::Env env, Napi::Object exports);

}  // namespace calibrate
}  // namespace synthd

#endif  // SYNTHD_NATIVE_CALIBRATE_BINDING_H_
