/**
 * What the client commands share: the SDK client of `--url` and `--key`, the
 * `JSON|FILE` option reader, the `-o` check and `--metadata`'s reader (also used by `report`).
 *
 * Data goes to stdout (a model id, CSV rows, tables, JSON); progress bars and messages go to
 * stderr, so `ID=$(synthd fit data.csv)` and `synthd sample ID -n 10 > out.csv` work.
 */
import { accessSync, constants as fsConstants, existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { Synthd } from "../../sdk/client/client";
import { nodeFetch } from "../../sdk/client/node-fetch";
import type { Metadata } from "../../contract";

/** `--url` and `--key` (or SYNTHD_URL / SYNTHD_API_KEY). */
export interface ClientOptions {
  url: string;
  key?: string;
}

export function client(opts: ClientOptions): Synthd {
  if (!opts.key) {
    throw new Error("no API key: pass --key or set SYNTHD_API_KEY (synthd serve prints a sandbox key on first start).");
  }
  // node:http rather than Node's fetch, whose first call costs about 0.2 core-s (../sdk/node-fetch).
  return new Synthd({ apiKey: opts.key, baseUrl: opts.url, fetch: nodeFetch });
}

/**
 * The value of a `JSON|FILE` option: `arg` parsed as JSON when it starts with `{` or `[`, else
 * the contents of the file it names, parsed as JSON.
 * @throws Error naming `flag` and the file: missing, unreadable, or not JSON.
 */
export function readJsonArg(flag: string, arg: string): unknown {
  const inline = /^\s*[{[]/.test(arg);
  let text = arg;
  if (!inline) {
    if (!existsSync(arg)) throw new Error(`${flag}: no file named ${arg} (give a JSON file or inline JSON starting with "{").`);
    try {
      text = readFileSync(arg, "utf8");
    } catch (e) {
      throw new Error(`${flag}: cannot read ${arg} (${(e as Error).message}).`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(inline ? `${flag} is not valid JSON (${(e as Error).message}).` : `${flag}: ${arg} is not valid JSON (${(e as Error).message}).`);
  }
}

/**
 * Checks that `-o FILE` can be written before any request: its directory exists and is writable,
 * and FILE is not a directory (the rows would be generated and charged, then lost).
 * @throws Error naming the path.
 */
export function checkOutputPath(output: string | undefined): void {
  if (output === undefined) return;
  const dir = dirname(output);
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new Error(`-o ${output}: the directory ${dir} does not exist.`);
  }
  if (!st.isDirectory()) throw new Error(`-o ${output}: ${dir} is not a directory.`);
  try {
    accessSync(dir, fsConstants.W_OK);
  } catch {
    throw new Error(`-o ${output}: the directory ${dir} is not writable.`);
  }
  if (existsSync(output) && statSync(output).isDirectory()) throw new Error(`-o ${output} is a directory; give a file name.`);
}

/**
 * The value of `--metadata JSON|FILE`: a model's metadata (the JSON of
 * `GET /v1/models/{id}/metadata`), read for its row rules.
 * @throws Error naming the flag: missing or unreadable file, not JSON, not an object with a
 *   `features` array of names, or `rules` that is not an array.
 */
export function readMetadataArg(arg: string, flag = "--metadata"): Metadata {
  const v = readJsonArg(flag, arg) as Partial<Metadata> | null;
  if (v === null || typeof v !== "object" || Array.isArray(v) || !Array.isArray(v.features) || !v.features.every((f) => typeof f === "string")) {
    throw new Error(`${flag} must be a model's metadata: a JSON object with a "features" array of column names.`);
  }
  if (v.rules !== undefined && !Array.isArray(v.rules)) throw new Error(`${flag}: "rules" must be an array of rules.`);
  return v as Metadata;
}
