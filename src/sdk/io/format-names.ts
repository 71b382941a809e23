/**
 * The output formats' names and the extensions that pick them (docs/formats.md): what the CLI needs
 * for `--format` and `-o` without loading the writers (`./formats` re-exports all of this).
 */
import { extname } from "node:path";
import type { Writable } from "node:stream";

/** A file format for sampled rows. */
export type OutputFormat = "csv" | "parquet" | "arrow";

/** Every {@link OutputFormat}, for flag validation and messages. */
export const OUTPUT_FORMATS: readonly OutputFormat[] = Object.freeze(["csv", "parquet", "arrow"]);

/** File name extensions (lower case, with the dot) that name a format ({@link formatOfPath}). */
export const OUTPUT_EXTENSIONS: Readonly<Record<string, OutputFormat>> = Object.freeze({
  ".csv": "csv",
  ".parquet": "parquet",
  ".pq": "parquet",
  ".arrow": "arrow",
  ".feather": "arrow",
  ".ipc": "arrow",
});

/** The format a file name's extension names (case-insensitive), or undefined. */
export function formatOfPath(path: string): OutputFormat | undefined {
  return OUTPUT_EXTENSIONS[extname(path).toLowerCase()];
}

/**
 * The format to write `dest` in: `format` when given, else the extension of a path
 * ({@link formatOfPath}), else CSV (other extensions and streams).
 * @throws RangeError when `format` is not one of {@link OUTPUT_FORMATS}.
 */
export function chooseFormat(dest: string | Writable, format?: string): OutputFormat {
  if (format !== undefined) {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) {
      throw new RangeError(`format must be one of ${OUTPUT_FORMATS.join(", ")}, got ${JSON.stringify(format)}`);
    }
    return format as OutputFormat;
  }
  return (typeof dest === "string" ? formatOfPath(dest) : undefined) ?? "csv";
}
