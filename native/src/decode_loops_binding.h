// N-API binding of the SDK decoder's per-row loops (decode_loops.h): latticeValues, int64Halves.

#ifndef SYNTHD_NATIVE_DECODE_LOOPS_BINDING_H_
#define SYNTHD_NATIVE_DECODE_LOOPS_BINDING_H_

#include <napi.h>

namespace synthd {
namespace decode {

// Adds latticeValues and int64Halves to the addon's exports.
void RegisterDecodeBindings(Napi::Env env, Napi::Object exports);

}  // namespace decode
}  // namespace synthd

#endif  // SYNTHD_NATIVE_DECODE_LOOPS_BINDING_H_
