// N-API bindings of the request draws (draws.h): fillDraws, and zigguratTables / log for tests.

#ifndef SYNTHD_NATIVE_DRAWS_BINDING_H_
#define SYNTHD_NATIVE_DRAWS_BINDING_H_

#include <napi.h>

namespace synthd {
namespace draws {

// Adds fillDraws, zigguratTables and log to the addon's exports.
void RegisterDrawBindings(Napi::Env env, Napi::Object exports);

}  // namespace draws
}  // namespace synthd

#endif  // SYNTHD_NATIVE_DRAWS_BINDING_H_
