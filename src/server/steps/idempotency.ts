/**
 * Step `idempotency` (contract: "Idempotency (all POST endpoints)"), after Stripe's idempotent
 * requests (docs.stripe.com/api/idempotent_requests). On POST with `Idempotency-Key` (1 to 255
 * characters, else 400 on `headers.idempotency-key`; scoped by org and environment):
 * - an in-flight record is inserted if absent in one write transaction, so concurrent duplicates
 *   in any thread or process see it; a duplicate in flight gets 409 `idempotency_key_in_use`;
 * - the same key with another method, path, query or body: 400 on `headers.idempotency-key`;
 * - a 2xx or 4xx (except 401, 409, 429) is stored and replayed unchanged, original `request_id`
 *   included, with `Idempotent-Replayed: true`; 5xx (no side effects) drop the record;
 * - records expire after {@link IDEMPOTENCY_TTL_MS}; those a crash left in flight are released.
 *
 * Exactly-once billing (Brandur Leach, "Implementing Stripe-like Idempotency Keys in Postgres":
 * atomic phases), one transaction each, the response sent only after the last: 1. the in-flight
 * record; 2. the side effect (a pending charge, or the model with its stored response); 3. the
 * response stored and the charge settled together. A crash before 3 is refunded and released at
 * the next start (nothing was delivered); a response that cannot be stored is not sent (503).
 */
import { createHash } from "node:crypto";
import type { IdempotencyScope } from "../../store";
import type { Ctx, Step } from "../context";
import { ApiError, paramInvalid, setErrorResponse, storageUnavailable, toApiError } from "../errors";

/** Lifetime of an idempotency key: 24 hours (contract: "Limits"). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** Longest accepted Idempotency-Key, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** True for responses that are stored for replay: 2xx and 4xx except 401, 409 and 429. */
export function isStorable(status: number): boolean {
  if (status === 401 || status === 409 || status === 429) return false;
  return (status >= 200 && status < 300) || (status >= 400 && status < 500);
}

/** SHA-256 hex of method, path, query and JSON body (body whitespace ignored). */
export function fingerprint(ctx: Ctx): string {
  return ctx.prepared?.fingerprint ?? bodyFingerprint(fingerprintPrefix(ctx), ctx.json);
}

/** The start of a request's fingerprint: `METHOD path?query` and a newline. */
export function fingerprintPrefix(ctx: Pick<Ctx, "method" | "path" | "rawQuery">): string {
  return `${ctx.method} ${ctx.path}?${ctx.rawQuery}\n`;
}

/** SHA-256 hex of `prefix` ({@link fingerprintPrefix}) followed by `json` serialized. */
export function bodyFingerprint(prefix: string, json: unknown): string {
  return createHash("sha256")
    .update(prefix)
    .update(JSON.stringify(json) ?? "")
    .digest("hex");
}

/** Replays, refuses (409 / 400) or executes-and-stores a keyed POST. */
export const idempotency: Step = async (ctx, next) => {
  if (ctx.method !== "POST" || ctx.auth === undefined) return next();
  const key = ctx.headers["idempotency-key"];
  if (key === undefined) return next();
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw paramInvalid(
      "headers.idempotency-key",
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long; this one has ${key.length}.`,
    );
  }
  const { store, clock, logger } = ctx.services;
  const scope: IdempotencyScope = { org: ctx.auth.org, env: ctx.auth.env, key };
  const begun = await store.beginIdempotent(scope, fingerprint(ctx), clock(), IDEMPOTENCY_TTL_MS, ctx.requestId);
  switch (begun.kind) {
    case "replay": {
      const r = begun.response;
      ctx.responseHeaders["X-Request-Id"] = r.request_id;
      ctx.replayOf = r.request_id;
      ctx.response = { status: r.status, headers: { ...r.headers, "Idempotent-Replayed": "true" }, body: r.body };
      return;
    }
    case "in_flight":
      throw new ApiError(
        "idempotency_key_in_use",
        "A request with this Idempotency-Key is still being processed; retry after it has completed.",
      );
    case "mismatch":
      throw paramInvalid(
        "headers.idempotency-key",
        "This Idempotency-Key was already used with a different request; keys can only be reused with the same method, path and body.",
      );
    case "started":
      break;
  }

  ctx.idempotency = scope;
  const abandon = (): Promise<void> =>
    store.abandonIdempotent(scope, ctx.requestId, clock()).catch((e: unknown) => {
      logger.error({ err: e, req_id: ctx.requestId }, "could not release an idempotency key; reconciling later");
      ctx.services.reconcileSoon();
    });
  try {
    await next();
  } catch (err) {
    const api = toApiError(err, ctx.services.debug);
    if (!isStorable(api.status)) {
      await abandon();
      throw err;
    }
    setErrorResponse(ctx, err);
  }
  const r = ctx.response!;
  if (!isStorable(r.status)) {
    await abandon();
    return;
  }
  let stored;
  try {
    stored = await store.completeIdempotent(scope, { status: r.status, headers: { ...r.headers }, body: r.body, request_id: ctx.requestId });
  } catch (err) {
    // Not stored, so not sent: a retry must be able to execute, and the charge is given back.
    logger.error({ err, req_id: ctx.requestId }, "could not store an idempotent response; refunding and answering 503");
    await abandon();
    setErrorResponse(ctx, storageUnavailable("The response could not be stored for replay under its Idempotency-Key"));
    return;
  }
  // What was stored is what is sent (a handler may have stored it in its own transaction).
  if (stored !== undefined) ctx.response = { status: stored.status, headers: { ...stored.headers }, body: stored.body };
};
