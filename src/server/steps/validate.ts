/**
 * Step `validate` (contract: "Validation"): checks body and query with typia's
 * `createValidateEquals<T>()` validators of the contract types, so unknown fields are refused too.
 * The first error is 400 `parameter_invalid`, `param` the typia path under `body` or `query`
 * (`$input.limit` -> `query.limit`).
 *
 * Integer query parameters must be plain decimal digits; a parameter given twice is refused;
 * routes without a query validator accept none. Every number field is finite (so `1e400` is
 * refused on its field), latent values finite in float32.
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
 * @throws ApiError 400 `parameter_invalid`: `body` for a non-object, else typia's first path.
 */
export function validateJsonBody(validator: Validator<unknown>, json: unknown): unknown {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw paramInvalid("body", "The request body must be a JSON object.");
  }
  return check(validator(json), "body");
}

/**
 * Parses a raw query string into an object; `integers` become numbers when plain decimal digits
 * (else strings, for the validator to refuse).
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
