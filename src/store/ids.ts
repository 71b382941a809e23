/** Identifiers the store hands out and the one form in which API keys are kept (their SHA-256). */
import { createHash, randomBytes } from "node:crypto";
import type { Environment } from "./records";

/** SHA-256 hex digest of an API key: the only form in which keys are stored. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

const KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A new API key: `svc_test_` or `svc_live_` + 32 random base-62 characters (~190 bits). */
export function newApiKey(env: Environment): string {
  const bytes = randomBytes(64);
  let body = "";
  for (const b of bytes) {
    if (b < 248) body += KEY_ALPHABET[b % 62]; // 248 = 4 * 62: no modulo bias
    if (body.length === 32) break;
  }
  return `svc_${env}_${body}`;
}

/**
 * The form of every model id: `mdl_` + 12 lowercase hex. Other strings name no model and are
 * answered without reaching the store (a 5,000-character cursor is no LMDB key).
 */
export const MODEL_ID = /^mdl_[0-9a-f]{12}$/;

/** True when `s` has a model id's form ({@link MODEL_ID}); not whether the model exists. */
export function isModelId(s: string): boolean {
  return MODEL_ID.test(s);
}

/** A new model id: `mdl_` + 12 lowercase hex. */
export function newModelId(): string {
  return `mdl_${randomBytes(6).toString("hex")}`;
}

/** A new request id: `req_` + 24 characters from `[A-Za-z0-9]`. */
export function newRequestId(): string {
  const bytes = randomBytes(48);
  let body = "";
  for (const b of bytes) {
    if (b < 248) body += KEY_ALPHABET[b % 62];
    if (body.length === 24) break;
  }
  return `req_${body}`;
}
