/**
 * Step `parseJson` (contract: "All bodies are JSON"): a POST body must come with
 * `Content-Type: application/json` (parameters allowed) and be valid UTF-8 JSON. Each failure is
 * 400 `parameter_invalid`:
 * - content type: param `headers.content-type`;
 * - invalid UTF-8 or JSON, or nesting deeper than {@link MAX_JSON_DEPTH} (checked by a linear scan
 *   before parsing, so no recursive code ever sees such a body): param `body`;
 * - a key or string that is not well-formed UTF-16 (a lone surrogate escape; it would be stored as
 *   U+FFFD): param the path of the first one, as typia writes paths (`params.ts`).
 * All are refused before the Idempotency-Key is looked at. GET and DELETE bodies are ignored.
 */
import type { Step } from "../context";
import { fromWire, paramInvalid } from "../errors";
import { index, prop } from "../../contract/params";
import { OFF_THREAD_BODY_BYTES, parseOffThread, parsesOffThread } from "../bodyPool";

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Deepest nesting of arrays and objects accepted (a body is level 1; valid requests reach 9). */
export const MAX_JSON_DEPTH = 64;

/** Sets `ctx.json` on POST, or throws 400; large bodies go to the body worker (`bodyPool.ts`). */
export const parseJson: Step = async (ctx, next) => {
  if (ctx.method !== "POST") return next();
  const type = (ctx.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") {
    throw paramInvalid(
      "headers.content-type",
      "POST requests must send a JSON body with the header 'Content-Type: application/json'.",
    );
  }
  const bytes = ctx.rawBody ?? Buffer.alloc(0);
  const route = `${ctx.method} ${ctx.route?.def.pattern ?? ""}`;
  if (bytes.length > OFF_THREAD_BODY_BYTES && parsesOffThread(route)) {
    ctx.rawBody = undefined; // its memory is handed over to the worker
    const outcome = await parseOffThread(ctx, route, bytes);
    if (!outcome.ok) throw fromWire(outcome.error);
    ctx.prepared = { input: outcome.input, ...(outcome.fingerprint === undefined ? {} : { fingerprint: outcome.fingerprint }) };
    return next();
  }
  ctx.json = parseJsonBytes(bytes);
  return next();
};

/**
 * The JSON value of a UTF-8 request body (this step's checks after the content type, in order).
 * @throws ApiError 400 `parameter_invalid` as in the module comment.
 */
export function parseJsonBytes(bytes: Buffer): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw paramInvalid("body", "The request body is not valid UTF-8.");
  }
  if (jsonDepthExceeds(bytes, MAX_JSON_DEPTH)) {
    throw paramInvalid("body", `The request body is nested more than ${MAX_JSON_DEPTH} levels deep (arrays and objects).`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const why = err instanceof SyntaxError ? ` (${err.message})` : "";
    throw paramInvalid("body", `The request body is not valid JSON${why}.`);
  }
  // A lone surrogate can only come from a \uD800-\uDFFF escape: skip the walk when there is none.
  if (SURROGATE_ESCAPE.test(text)) {
    const bad = firstIllFormed(json, "body");
    if (bad !== undefined) {
      throw paramInvalid(
        bad,
        `${bad} is not well-formed UTF-16: it holds an unpaired surrogate (\\ud800-\\udfff escape without its pair).`,
      );
    }
  }
  return json;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether the UTF-8 JSON in `bytes` nests deeper than `max`: one pass, no recursion, brackets
 * counted outside strings (jumps by `Buffer.indexOf`). Meaningless but harmless on non-JSON.
 */
export function jsonDepthExceeds(bytes: Buffer, max: number): boolean {
  const n = bytes.length;
  const next = (byte: number, from: number): number => {
    const i = bytes.indexOf(byte, from);
    return i < 0 ? n : i;
  };
  let quote = next(QUOTE, 0);
  let openBracket = next(OPEN_BRACKET, 0);
  let openBrace = next(OPEN_BRACE, 0);
  let closeBracket = next(CLOSE_BRACKET, 0);
  let closeBrace = next(CLOSE_BRACE, 0);
  let depth = 0;
  for (;;) {
    const p = Math.min(quote, openBracket, openBrace, closeBracket, closeBrace);
    if (p >= n) return false;
    if (p === quote) {
      // Skip the string: its end is the first quote after an even run of backslashes.
      let end = p;
      for (;;) {
        end = bytes.indexOf(QUOTE, end + 1);
        if (end < 0) return false;
        let k = end - 1;
        while (bytes[k] === BACKSLASH) k--;
        if ((end - 1 - k) % 2 === 0) break;
      }
      const from = end + 1;
      quote = next(QUOTE, from);
      if (openBracket < from) openBracket = next(OPEN_BRACKET, from);
      if (openBrace < from) openBrace = next(OPEN_BRACE, from);
      if (closeBracket < from) closeBracket = next(CLOSE_BRACKET, from);
      if (closeBrace < from) closeBrace = next(CLOSE_BRACE, from);
    } else if (p === openBracket || p === openBrace) {
      if (++depth > max) return true;
      if (p === openBracket) openBracket = next(OPEN_BRACKET, p + 1);
      else openBrace = next(OPEN_BRACE, p + 1);
    } else {
      depth--;
      if (p === closeBracket) closeBracket = next(CLOSE_BRACKET, p + 1);
      else closeBrace = next(CLOSE_BRACE, p + 1);
    }
  }
}

/** `String.prototype.isWellFormed` (ES2024, Node 20+; not in this project's ES2022 lib typings). */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The path under `base` of the first key or string that is not well-formed UTF-16, or undefined.
 * Recursive: only for values of bounded depth ({@link jsonDepthExceeds}).
 */
export function firstIllFormed(value: unknown, base: string): string | undefined {
  if (typeof value === "string") return isWellFormed(value) ? undefined : base;
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v !== "object" && typeof v !== "string") continue;
      const bad = firstIllFormed(v, index(base, i));
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const path = prop(base, key);
    if (!isWellFormed(key)) return path;
    const bad = firstIllFormed((value as Record<string, unknown>)[key], path);
    if (bad !== undefined) return bad;
  }
  return undefined;
}
