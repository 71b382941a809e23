/**
 * Loader for synthd's C++ N-API addon, with the JavaScript code as reference and fallback
 * (docs/decisions.md "A native core with a TypeScript reference"). `native/build.js` builds it
 * into `native/build/Release/synthd_native.node`; when it is missing or fails to load, synthd
 * runs the fallback and says so once on stderr. `SYNTHD_DISABLE_NATIVE=1` forces the JavaScript
 * path; `SYNTHD_NATIVE_PATH` loads another file. Loading is lazy and once per realm (each worker
 * thread loads, or falls back and warns, on its own).
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** The addon's core exports (native/src/addon.cc); later parts: {@link nativeExport}. */
export interface NativeAddon {
  /** Twin of `sampleCodesJs` (as `sampleCodes`); `threads` 0 or omitted: auto (same result). */
  sampleCodes(
    logits: Float32Array,
    n: number,
    cardinalities: Int32Array | readonly number[],
    uniforms: Float64Array,
    temperature: number,
    topP: number | null | undefined,
    threads?: number,
  ): Int32Array;
  /** Element-wise exp, bit-identical to Math.exp (fdlibm's algorithm, as V8 uses). */
  exp(x: Float64Array): Float64Array;
  version(): string;
  /** Threads `sampleCodes` uses for large inputs when `threads` is 0 or omitted. */
  defaultThreads(): number;
}

/** Which compute path generation uses, and why. */
export interface ComputeStatus {
  /** `native`: the C++ addon loaded; `js`: the JavaScript fallback. */
  path: "native" | "js";
  /** Why the fallback is used (only when `path` is `js`). */
  reason?: string;
  /** The addon file loaded, or the one that was tried. */
  addonPath?: string;
  /** Addon version (only when `path` is `native`). */
  version?: string;
  /** Threads the addon uses for large inputs (only when `path` is `native`). */
  threads?: number;
}

const ADDON_RELATIVE = path.join("native", "build", "Release", "synthd_native.node");
const REQUIRED_EXPORTS = ["sampleCodes", "exp", "version", "defaultThreads"] as const;

let state: { status: ComputeStatus; addon?: NativeAddon } | undefined;

/** The directory of this package's package.json (`"name": "synthd"`), upwards from `start`. */
export function findPackageRoot(start: string): string | undefined {
  let dir = path.resolve(start);
  for (;;) {
    const manifest = path.join(dir, "package.json");
    try {
      const pkg = JSON.parse(fs.readFileSync(manifest, "utf8")) as { name?: unknown };
      if (pkg.name === "synthd") return dir;
    } catch {
      // no (readable, valid) package.json here: keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split("\n")[0];
}

function load(): { status: ComputeStatus; addon?: NativeAddon } {
  const disable = process.env.SYNTHD_DISABLE_NATIVE;
  if (disable === "1" || disable === "true") {
    return { status: { path: "js", reason: `disabled by SYNTHD_DISABLE_NATIVE=${disable}` } };
  }
  let file: string;
  const override = process.env.SYNTHD_NATIVE_PATH;
  if (override) {
    file = path.resolve(override);
  } else {
    const root = findPackageRoot(__dirname);
    if (root === undefined) {
      return { status: { path: "js", reason: `no package.json named "synthd" above ${__dirname}` } };
    }
    file = path.join(root, ADDON_RELATIVE);
  }
  if (!fs.existsSync(file)) {
    return {
      status: { path: "js", addonPath: file, reason: `${file} does not exist; build it with \`node native/build.js\`` },
    };
  }
  let mod: Record<string, unknown>;
  try {
    mod = require(file) as Record<string, unknown>;
  } catch (err) {
    return { status: { path: "js", addonPath: file, reason: `loading ${file} failed: ${firstLine(err)}` } };
  }
  const missing = REQUIRED_EXPORTS.filter((name) => typeof mod[name] !== "function");
  if (missing.length > 0) {
    return {
      status: {
        path: "js",
        addonPath: file,
        reason: `${file} lacks ${missing.join(", ")} (stale build? rerun \`node native/build.js\`)`,
      },
    };
  }
  const addon = mod as unknown as NativeAddon;
  return {
    addon,
    status: { path: "native", addonPath: file, version: addon.version(), threads: addon.defaultThreads() },
  };
}

function ensureLoaded(): { status: ComputeStatus; addon?: NativeAddon } {
  if (state === undefined) {
    state = load();
    if (state.status.path === "js") {
      console.warn(`synthd: native compute core unavailable (${state.status.reason}); using the JavaScript fallback`);
    }
  }
  return state;
}

/** The addon's typed core exports, loaded on first use; undefined on the fallback. */
export function nativeAddon(): NativeAddon | undefined {
  return ensureLoaded().addon;
}

/** One export of a later part of the addon (`fillDraws`, `Raking`, ...); undefined when absent. */
export function nativeExport<T>(name: string): T | undefined {
  const value = (nativeAddon() as unknown as Record<string, unknown> | undefined)?.[name];
  return typeof value === "function" ? (value as T) : undefined;
}

/** The compute path generation uses, `native` or `js`; loads the addon, logs a fallback once. */
export function computePath(): "native" | "js" {
  return ensureLoaded().status.path;
}

/** {@link computePath} with the fallback reason, addon file, version and thread count (a copy). */
export function computeStatus(): ComputeStatus {
  return { ...ensureLoaded().status };
}
