// N-API binding of the CSV record writer (csv_rows.h): function csvRows.

#ifndef SYNTHD_NATIVE_CSV_ROWS_BINDING_H_
#define SYNTHD_NATIVE_CSV_ROWS_BINDING_H_

#include <napi.h>

namespace synthd {
namespace csv {

// Adds csvRows to the addon's exports.
void RegisterCsvBindings(Napi::Env env, Napi::Object exports);

}  // namespace csv
}  // namespace synthd

#endif  // SYNTHD_NATIVE_CSV_ROWS_BINDING_H_
