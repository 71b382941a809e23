/**
 * apache-arrow's runtime for the SDK's Arrow and Parquet writers and its fallback Arrow reader,
 * loaded from the package's own single-file build (`apache-arrow/Arrow.esnext.min`, in its
 * `exports` map; the same release and sources as the main entry): one module to read and compile
 * instead of about 150. Requiring it costs ~40 ms of CPU against ~150 ms for the main entry on the
 * 2-core target machine (`process.cpuUsage` around `require`), which every `synthd sample` to
 * Parquet or Arrow paid at start. Types come from the main entry (`import type`), which declares
 * the same classes.
 *
 * Objects made here are instances of this build's classes: `instanceof` against classes imported
 * from `apache-arrow` (another copy) is false. Files are bytes, so readers of what the SDK writes
 * (apache-arrow's main entry, pyarrow, DuckDB) are not affected.
 */
import type * as ArrowModule from "apache-arrow";

/** The apache-arrow namespace (values: classes and functions), single-file build. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const arrow: typeof ArrowModule = require("apache-arrow/Arrow.esnext.min");
