/**
 * A small JSON Schema (2020-12, as used by OpenAPI 3.1) validator for the tests: exactly the
 * keywords typia's schema generation and `src/server/openapi.ts` emit, and it throws on any other
 * keyword, so a schema feature it does not understand can never pass silently.
 *
 * Supported: `$ref` (local JSON pointers `#/...`), `type` (string or array), `const`, `enum`,
 * `oneOf` (exactly one), `anyOf`, `allOf`, `properties`, `required`, `additionalProperties`,
 * `items`, `prefixItems`, `additionalItems`, `minItems`, `maxItems`, `minimum`, `maximum`,
 * `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`, `pattern`, `format`
 * (`date-time`, `uri`; others rejected); annotations (`description`, `title`, `default`,
 * `examples`, `deprecated`) are ignored.
 */

type Schema = Record<string, unknown>;

const ANNOTATIONS = new Set(["description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"]);
const KNOWN = new Set([
  "$ref", "type", "const", "enum", "oneOf", "anyOf", "allOf", "properties", "required", "additionalProperties",
  "items", "prefixItems", "additionalItems", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum",
  "exclusiveMaximum", "minLength", "maxLength", "pattern", "format",
]);

/** Resolves a local JSON pointer (`#/components/schemas/Model`) in `root`. @throws when it does not resolve. */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#/")) throw new Error(`only local refs are supported: ${ref}`);
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(part in (node as object))) throw new Error(`unresolved $ref ${ref}`);
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** The errors of `value` against `schema` (empty when valid); `root` resolves `$ref`s. */
export function validate(schema: unknown, value: unknown, root: unknown, path = "$"): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: not allowed`];
  const s = schema as Schema;
  for (const k of Object.keys(s)) {
    if (!KNOWN.has(k) && !ANNOTATIONS.has(k)) throw new Error(`unsupported JSON Schema keyword ${k} at ${path}`);
  }
  const errs: string[] = [];
  if (typeof s.$ref === "string") errs.push(...validate(resolvePointer(root, s.$ref), value, root, path));
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    const t = typeOf(value);
    if (!types.includes(t) && !(t === "integer" && types.includes("number"))) errs.push(`${path}: expected ${types.join("|")}, got ${t}`);
  }
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(value)) errs.push(`${path}: expected ${JSON.stringify(s.const)}`);
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) errs.push(`${path}: not in enum`);
  if (Array.isArray(s.oneOf)) {
    const ok = s.oneOf.filter((sub) => validate(sub, value, root, path).length === 0).length;
    if (ok !== 1) errs.push(`${path}: matches ${ok} of oneOf (want exactly 1)`);
  }
  if (Array.isArray(s.anyOf) && !s.anyOf.some((sub) => validate(sub, value, root, path).length === 0)) errs.push(`${path}: matches no anyOf`);
  if (Array.isArray(s.allOf)) for (const sub of s.allOf) errs.push(...validate(sub, value, root, path));

  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) errs.push(`${path}: < minimum ${s.minimum}`);
    if (typeof s.maximum === "number" && value > s.maximum) errs.push(`${path}: > maximum ${s.maximum}`);
    if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) errs.push(`${path}: <= exclusiveMinimum`);
    if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) errs.push(`${path}: >= exclusiveMaximum`);
  }
  if (typeof value === "string") {
    if (typeof s.minLength === "number" && value.length < s.minLength) errs.push(`${path}: shorter than ${s.minLength}`);
    if (typeof s.maxLength === "number" && value.length > s.maxLength) errs.push(`${path}: longer than ${s.maxLength}`);
    if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value)) errs.push(`${path}: does not match ${s.pattern}`);
    if (s.format !== undefined) {
      if (s.format === "date-time") {
        if (!DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) errs.push(`${path}: not a date-time`);
      } else if (s.format === "uri") {
        try {
          new URL(value);
        } catch {
          errs.push(`${path}: not a uri`);
        }
      } else {
        throw new Error(`unsupported format ${String(s.format)} at ${path}`);
      }
    }
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) errs.push(`${path}: fewer than ${s.minItems} items`);
    if (typeof s.maxItems === "number" && value.length > s.maxItems) errs.push(`${path}: more than ${s.maxItems} items`);
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    value.forEach((v, i) => {
      if (i < prefix.length) errs.push(...validate(prefix[i], v, root, `${path}[${i}]`));
      else if (s.items !== undefined) errs.push(...validate(s.items, v, root, `${path}[${i}]`));
      else if (s.additionalItems !== undefined) errs.push(...validate(s.additionalItems, v, root, `${path}[${i}]`));
    });
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, unknown>;
    for (const r of (s.required ?? []) as string[]) if (!Object.hasOwn(o, r)) errs.push(`${path}.${r}: required`);
    for (const [k, v] of Object.entries(o)) {
      if (Object.hasOwn(props, k)) errs.push(...validate(props[k], v, root, `${path}.${k}`));
      else if (s.additionalProperties !== undefined) errs.push(...validate(s.additionalProperties, v, root, `${path}.${k}`));
    }
  }
  return errs;
}

/** Every `$ref` string anywhere in `node`. */
export function allRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) allRefs(n, out);
  else if (node !== null && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else allRefs(v, out);
    }
  }
  return out;
}
