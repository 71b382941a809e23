/**
 * apache-arrow's runtime for the SDK's Arrow and Parquet writers and its fallback Arrow reader,
 * from the package's single-file build (`apache-arrow/Arrow.esnext.min`, same release and sources):
 * one module to compile instead of about 150 (docs/formats.md "Decisions moved from code comments:
 * output formats"). Types come from the main entry (`import type`). Objects made here are this
 * build's classes: `instanceof` against `apache-arrow`'s main entry is false. Files are bytes, so
 * readers of what the SDK writes are not affected.
 */
import type * as ArrowModule from "apache-arrow";

/** The apache-arrow namespace (values: classes and functions), single-file build. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const arrow: typeof ArrowModule = require("apache-arrow/Arrow.esnext.min");
