/**
 * Step `idempotency` (contract: "Idempotency (all POST endpoints)"), after the model of
 * Stripe's idempotent requests (docs.stripe.com/api/idempotent_requests):
 *
 * - applies to POST requests carrying `Idempotency-Key` (1 to 255 characters, else 400
 *   `parameter_invalid`, param `headers.idempotency-key`); the key is scoped by (org, environment);
 *   on GET and DELETE, which are idempotent anyway, the header is ignored;
 * - before the request executes, an in-flight record is inserted if absent, in one LMDB write
 *   transaction (so concurrent duplicates, even in other threads or processes, see it);
 * - a duplicate while the first is in flight: 409 `idempotency_key_in_use` (the SDK retries it);
 * - the same key with a different request (method, path, query or JSON body differ): 400
 *   `parameter_invalid`, param `headers.idempotency-key` (keys can only be reused with the same
 *   parameters);
 * - when the first request ends with a 2xx or a 4xx other than 401, 409 and 429, its status, body
 *   and own headers (Content-Type) are stored, and a later request with the key gets them back
 *   unchanged (the original `request_id` in the body and as `X-Request-Id`) with
 *   `Idempotent-Replayed: true`, without executing again. Validation errors are stored too: a
 *   corrected request needs a new key;
 * - 5xx responses (which leave no side effects) are not stored: the record is dropped and a retry
 *   executes again;
 * - records expire 24 hours after the first use ({@link IDEMPOTENCY_TTL_MS}): checked on read and
 *   swept periodically; in-flight records left by a crash are released when a server starts
 *   (`Store.reconcile`, which also refunds their charges).
 *
 * Exactly-once billing (Brandur Leach, "Implementing Stripe-like Idempotency Keys in Postgres":
 * atomic phases and recovery points). Each phase of a keyed request is one LMDB transaction, and
 * the response is written to the socket only after the last one committed:
 * 1. begin: the in-flight record (naming the request id);
 * 2. the side effect: Generate's charge (pending, `src/usage/quota.ts`) / Create Model's model together
 *    with its stored response (`createModel.ts`);
 * 3. complete: the response stored and the pending charge settled, together.
 * A crash after 3 replays; before 3 the next start refunds the pending charge and releases the
 * key, and nothing was delivered, so the retry executes once more and is charged once. A response
 * that cannot be stored (full disk) is not sent: the charge is refunded and the client gets 503
 * `training_service_unavailable` (retryable), never a result it would be billed for twice.
 *
 * Requests refused before this step (401, 429, 413, unparsable JSON, JSON nested too deep, strings
 * that are not well-formed UTF-16, wrong Content-Type, ambiguous Content-Length/Transfer-Encoding)
 * never touch the key, and the fingerprint's `JSON.stringify` only sees bodies of bounded depth. Replays count against the rate limit like any request.
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

/**
 * SHA-256 hex of the request's method, path, query and JSON body (whitespace of the body ignored);
 * for a body parsed off-thread, the worker computed it ({@link bodyFingerprint}).
 */
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
