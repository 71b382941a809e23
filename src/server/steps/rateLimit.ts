/**
 * Steps `authLimit` and `rateLimit` (contract: "Limits", Errors rule 1; DESIGN §3): the sliding
 * window counter of `rateLimiter.ts`, applied
 *
 * - per organization (`rateLimit`, right after `authenticate`): every authenticated `/v1` request
 *   counts, whatever it turns out to be (404s, 400s and idempotent replays included), across both
 *   environments of the org; the limit is the org's `rate_limit` or the server default (60/min);
 * - per client address for requests that fail authentication (`authLimit`, right before
 *   `authenticate`), so key guessing is slow: each 401 counts against the address, and an address
 *   over its budget gets 429 for every `/v1` request, before its key is even looked at (a valid
 *   key from that address included: looking at the key would tell a guesser when it guessed right).
 *
 * Every response these steps let through or refuse carries `X-RateLimit-Limit`,
 * `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix seconds) of the budget that applied: the
 * org's for authenticated requests, the address's for 401s. A refusal is 429
 * `rate_limit_exceeded` (no `param`, rule 3) with `Retry-After` in whole seconds (>= 1) and the
 * same number in the message (rule 1; RFC 6585 §4, RFC 9110 §10.2.3). Refused requests do not count.
 *
 * Every admitted count is written through to LMDB as it is admitted (queued in admission order
 * and committed by lmdb-js with the same event turn's batch, a few milliseconds later; the request
 * does not wait for the disk flush, which would triple a GET's latency), so a restart, even after
 * SIGKILL, keeps the counts: at most the counts of the last commit batch before a kill -9 are lost.
 *
 * Shared topology (issue 14, `synthd serve --redis`): `ctx.services.sharedLimiter` decides instead,
 * the same two-window estimate in one Lua script per request against Redis's clock, so N front
 * ends admit exactly one budget between them; Redis holds the counts (no LMDB write-through).
 * When Redis cannot answer, the request gets 503 `training_service_unavailable` with Retry-After
 * (never admitted unchecked).
 */
import type { Ctx, Step } from "../context";
import { ApiError } from "../errors";
import type { RateDecision } from "../rateLimiter";
import { RateLimiterUnavailableError } from "../redisRateLimiter";
import { isApiPath } from "./authenticate";

/** Limiter key of an org's budget. */
export function orgKey(org: string): string {
  return `org:${org}`;
}

/** Limiter key of a client address's failed-authentication budget. */
export function addressKey(address: string): string {
  return `addr:${address}`;
}

/** Sets the X-RateLimit-* headers of `d` on every response of this request. */
function setHeaders(ctx: Ctx, d: RateDecision): void {
  ctx.responseHeaders["X-RateLimit-Limit"] = String(d.limit);
  ctx.responseHeaders["X-RateLimit-Remaining"] = String(d.remaining);
  ctx.responseHeaders["X-RateLimit-Reset"] = String(d.reset);
}

/** 429 for a refused decision, with Retry-After. */
function tooMany(d: RateDecision, what: string): ApiError {
  const secs = d.retryAfter ?? 1;
  return new ApiError(
    "rate_limit_exceeded",
    `${what} Retry after ${secs} second${secs === 1 ? "" : "s"}.`,
    undefined,
    { "Retry-After": String(secs) },
  );
}

/**
 * Per-address budget of failed authentications. Counts this request up front and gives the count
 * back as soon as `authenticate` (the next step) has accepted the key (`ctx.authDecided`), not when
 * the request ends: concurrent valid requests from one address never count against it.
 */
export const authLimit: Step = async (ctx, next) => {
  if (!isApiPath(ctx.path)) return next();
  const { limiter, authFailureLimit, clock, store, logger } = ctx.services;
  const key = addressKey(ctx.remoteAddress);
  const shared = ctx.services.sharedLimiter;
  const d = shared ? await admitShared(shared, key, authFailureLimit) : limiter.admit(key, authFailureLimit, clock());
  setHeaders(ctx, d);
  if (!d.admitted) {
    throw tooMany(d, `Too many requests with a missing or invalid API key from this address (limit ${d.limit} per minute).`);
  }
  let decided = false;
  const decide = (accepted: boolean): void => {
    if (decided) return;
    decided = true;
    if (shared) {
      // The count is in Redis already; a lost refund leaves one count too many in the address's budget.
      if (accepted) shared.refund(key, d.counter.window).catch((err: unknown) => logger.warn({ err }, "could not refund an address count"));
    } else if (accepted) {
      limiter.refund(key, d.counter.window);
    } else {
      // A failed authentication: keep the count, persisted like the org counters (not awaited:
      // the 401 needs nothing from it; a crash can lose at most this one count).
      const c = limiter.get(key);
      if (c !== undefined) {
        store.putRateCounter(key, c).catch((err: unknown) => logger.error({ err }, "could not persist a rate counter"));
      }
    }
  };
  ctx.authDecided = decide;
  try {
    await next();
  } finally {
    decide(ctx.auth !== undefined); // authenticate threw before deciding (a malformed header)
  }
};

/** Per-org budget: admits (and persists the count) or throws 429. Needs `ctx.auth`. */
export const rateLimit: Step = async (ctx, next) => {
  if (ctx.auth === undefined) return next();
  const { limiter, clock, store, logger, rateLimit: defaultLimit } = ctx.services;
  const org = ctx.auth.org;
  const limit = (await store.getOrg(org))?.rate_limit ?? defaultLimit;
  const key = orgKey(org);
  const shared = ctx.services.sharedLimiter;
  const d = shared ? await admitShared(shared, key, limit) : limiter.admit(key, limit, clock());
  setHeaders(ctx, d);
  if (!d.admitted) {
    throw tooMany(d, `Rate limit of ${d.limit} requests per minute exceeded for your organization.`);
  }
  if (shared) return next();
  // Write-through: queued now, in admission order; lmdb-js commits it with this event turn's
  // batch (milliseconds), without making the request wait for the disk flush.
  store.putRateCounter(key, d.counter).catch((err: unknown) => logger.error({ err }, "could not persist a rate counter"));
  return next();
};

/**
 * One decision of the shared limiter; Redis unreachable, too slow or failing: 503
 * `training_service_unavailable` with its Retry-After.
 * @throws ApiError
 */
async function admitShared(shared: NonNullable<Ctx["services"]["sharedLimiter"]>, key: string, limit: number): Promise<RateDecision> {
  try {
    return await shared.admit(key, limit);
  } catch (err) {
    if (err instanceof RateLimiterUnavailableError) {
      throw new ApiError(
        "training_service_unavailable",
        `Rate limits cannot be checked right now; retry after ${err.retryAfterSeconds} second${err.retryAfterSeconds === 1 ? "" : "s"}.`,
        undefined,
        { "Retry-After": String(err.retryAfterSeconds) },
      );
    }
    throw err;
  }
}
