/**
 * Step `rateLimit` and {@link countFailedAuthentication} (contract: "Limits", Errors rule 1):
 * the sliding window counter of `limits/rateLimiter.ts`, applied
 * - per organization, right after `authenticate`: every authenticated `/v1` request counts (404s,
 *   400s and replays included), both environments; the org's `rate_limit` or the server default;
 * - per client address, only for requests whose key proved missing or bad: a valid key is never
 *   counted nor refused for its address, so failed logins behind a shared address (load balancer,
 *   NAT) cannot lock out other tenants. A locked-out guesser still learns a right guess (200, not
 *   429); keys carry 64 random bytes, so none is.
 *
 * Responses carry the X-RateLimit-* headers of the budget that applied. A refusal is 429
 * `rate_limit_exceeded` (no `param`) with `Retry-After` (whole seconds >= 1, also in the message;
 * RFC 6585 §4, RFC 9110 §10.2.3). Refused requests do not count. A shared limiter that cannot
 * answer gives 503 `training_service_unavailable` (never admitted unchecked). Embedded counts are
 * written through to LMDB without waiting (docs/operations.md "Decisions moved from code comments:
 * server"): a kill -9 loses at most the last commit batch's counts.
 */
import type { Ctx, Step } from "../context";
import { ApiError } from "../errors";
import type { RateDecision, RateLimiter } from "../limits/rateLimiter";
import { RateLimiterUnavailableError } from "../limits/redisRateLimiter";
import { clientAddress } from "../clientAddress";

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
 * Per-address budget of failed authentications ({@link clientAddress}), called by `authenticate`
 * only once the key is known to be missing or bad (so concurrent valid requests never see each
 * other's counts). Admitted: counted, headers set, and the caller throws its 401.
 * @throws ApiError 429 when the address is over its budget; 503 when the shared limiter cannot decide.
 */
export async function countFailedAuthentication(ctx: Ctx): Promise<void> {
  const { limiter, authFailureLimit, trustedProxies, forwardedHeader } = ctx.services;
  const key = addressKey(clientAddress(ctx.remoteAddress, ctx.headers, trustedProxies, forwardedHeader));
  const d = await decide(limiter, key, authFailureLimit);
  setHeaders(ctx, d);
  if (!d.admitted) {
    throw tooMany(d, `Too many requests with a missing or invalid API key from this address (limit ${d.limit} per minute).`);
  }
}

/** Per-org budget: admits (the limiter persists the count) or throws 429. Needs `ctx.auth`. */
export const rateLimit: Step = async (ctx, next) => {
  if (ctx.auth === undefined) return next();
  const { limiter, store, rateLimit: defaultLimit } = ctx.services;
  const org = ctx.auth.org;
  const limit = (await store.getOrg(org))?.rate_limit ?? defaultLimit;
  const d = await decide(limiter, orgKey(org), limit);
  setHeaders(ctx, d);
  if (!d.admitted) {
    throw tooMany(d, `Rate limit of ${d.limit} requests per minute exceeded for your organization.`);
  }
  return next();
};

/** One decision of `limiter`. @throws ApiError 503 when a shared limiter cannot answer. */
async function decide(limiter: RateLimiter, key: string, limit: number): Promise<RateDecision> {
  try {
    return await limiter.admit(key, limit);
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
