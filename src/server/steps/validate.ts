/**
 * Step `validate` (contract: "Validation"): checks the route's body and query against validators
 * that typia generates at compile time from the contract types in `src/contract/index.ts`
 * (`typia.createValidateEquals<T>()`), so unknown fields are rejected as well as missing ones,
 * wrong types and out-of-range values. The first error becomes 400 `parameter_invalid` whose
 * `param` is the typia path moved under `body` or `query`: `$input.config.batch_size` ->
 * `body.config.batch_size`, `$input.limit` -> `query.limit`.
 *
 * Query strings arrive as strings: a route lists its integer parameters, which must be plain
 * decimal digits (`limit=abc`, `limit=1.5`, `limit=+3` fail on the type; `limit=0` on the range).
 * A parameter given twice is refused. Routes without a query validator accept no query parameters.
 * The query object has no prototype, so `?__proto__=1`, `?constructor=x` are unknown parameters
 * like any other (`query.__proto__`).
 *
 * Numbers: every number field of the request types is finite (typia tag `Finite` or a bound), so
 * `1e400` (Infinity after JSON.parse) is refused on its field; latent values must be finite in
 * float32 (tag `Float32`), so `1e308` is refused on `body.embedding[i][j]` with the float32 range
 * in the message.
 */
import type { IValidation } from "typia";
import type { Step, Validator } from "../context";
import { fromWire, paramInvalid, truncate } from "../errors";
import { FLOAT32_MAX } from "../../contract";
import { fromTypiaPath, prop } from "../../contract/params";

/** Validates `ctx.json` and the query into `ctx.input`, or throws 400 `parameter_invalid`. */
export const validate: Step = (ctx, next) => {
  const def = ctx.route!.def;
  const query = parseQuery(ctx.rawQuery, def.queryIntegers ?? []);
  let q: unknown = {};
  if (def.validateQuery !== undefined) {
    q = check(def.validateQuery(query), "query");
  } else {
    const first = Object.keys(query)[0];
    if (first !== undefined) throw paramInvalid(prop("query", first), `Unknown parameter: ${prop("query", first)}.`);
  }
  let body: unknown = undefined;
  if (ctx.prepared !== undefined) {
    // Validated on the body worker thread (`../bodyPool.ts`) with validateJsonBody.
    const r = ctx.prepared.input;
    if (!r.ok) throw fromWire(r.error);
    body = r.body;
  } else if (def.validateBody !== undefined) {
    body = validateJsonBody(def.validateBody, ctx.json);
  }
  ctx.input = { body, query: q };
  return next();
};

/**
 * The validated body: `json` must be an object that `validator` accepts.
 * @throws ApiError 400 `parameter_invalid`: param `body` when `json` is not an object, else the
 *   path of typia's first error.
 */
export function validateJsonBody(validator: Validator<unknown>, json: unknown): unknown {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw paramInvalid("body", "The request body must be a JSON object.");
  }
  return check(validator(json), "body");
}

/**
 * Parses a raw query string into an object without a prototype (so `__proto__`, `constructor`,
 * `prototype` are own keys like any other, refused as unknown by the caller): integer parameters
 * listed in `integers` become numbers when they are plain decimal digits (else they stay strings,
 * for the validator to refuse).
 * @throws ApiError `parameter_invalid` when a parameter appears more than once.
 */
export function parseQuery(raw: string, integers: readonly string[]): Record<string, string | number> {
  // No prototype: `__proto__`, `constructor` and the like are plain keys, seen (and refused) as
  // unknown parameters, instead of setting or shadowing Object.prototype's members.
  const out: Record<string, string | number> = Object.create(null) as Record<string, string | number>;
  for (const [k, v] of new URLSearchParams(raw)) {
    if (Object.hasOwn(out, k)) {
      throw paramInvalid(prop("query", k), `Parameter ${prop("query", k)} was given more than once.`);
    }
    out[k] = integers.includes(k) && /^\d{1,15}$/.test(v) ? Number(v) : v;
  }
  return out;
}

/** The validated data, or throws `parameter_invalid` for the first typia error. */
export function check<T>(r: IValidation<T>, root: "body" | "query"): T {
  if (r.success) return r.data;
  const e = r.errors[0];
  const param = fromTypiaPath(e.path, root);
  throw paramInvalid(param, describe(e, param));
}

/** A readable message for one typia error at `param`. */
function describe(e: IValidation.IError, param: string): string {
  const expected = cleanExpected(e.expected);
  if (e.expected === "undefined") return `Unknown parameter: ${param}.`;
  if (!("value" in e) || e.value === undefined) {
    return `Missing required parameter: ${param} (expected ${expected}).`;
  }
  const v: unknown = e.value;
  if (typeof v === "number" && /\bnumber & [^|]*\bFloat32\b/.test(expected)) {
    return (
      `Invalid value for ${param}: ${show(v)} is outside the float32 range ` +
      `[-${FLOAT32_MAX}, ${FLOAT32_MAX}] (latent values are computed in float32).`
    );
  }
  if (typeof v === "number" && !Number.isFinite(v) && /\bnumber\b/.test(expected)) {
    return `Invalid value for ${param}: expected a finite ${expected}, got ${show(v)} (a JSON number too large for a double).`;
  }
  return `Invalid value for ${param}: expected ${expected}, got ${show(v)}.`;
}

/** typia's expected type without `| undefined` and the outer parentheses. */
function cleanExpected(s: string): string {
  let t = s.trim();
  if (t.startsWith("(") && t.endsWith(" | undefined)")) t = t.slice(1, -" | undefined)".length);
  else if (t.endsWith(" | undefined")) t = t.slice(0, -" | undefined".length);
  if (t.startsWith("(") && t.endsWith(")") && balanced(t.slice(1, -1))) t = t.slice(1, -1);
  return t;
}

function balanced(s: string): boolean {
  let depth = 0;
  for (const c of s) {
    if (c === "(") depth++;
    else if (c === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

function show(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return JSON.stringify(truncate(v, 40));
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  return `${typeof v} ${String(v)}`;
}
