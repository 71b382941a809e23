/**
 * Step `rateLimit` and {@link countFailedAuthentication} (contract: "Limits", Errors rule 1):
 * the sliding window counter of `limits/rateLimiter.ts`, applied
 *
 * - per organization (`rateLimit`, right after `authenticate`): every authenticated `/v1` request
 *   counts, whatever it turns out to be (404s, 400s and idempotent replays included), across both
 *   environments of the org; the limit is the org's `rate_limit` or the server default (60/min);
 * - per client address for requests that fail authentication (`countFailedAuthentication`,
 *   called by `authenticate` once the key is known to be missing or bad), so key guessing is slow:
 *   each 401 counts against the address, and an address over its budget gets 429 instead of 401.
 *   A request with a valid key is never counted against its address and never refused for it:
 *   failed logins from a shared address (a load balancer, a NAT) must not lock out every tenant
 *   behind it. The price is that a locked-out guesser still learns when a guess was right (200
 *   instead of 429); a key carries 64 random bytes (`Store.createKey`), so that guess is not one
 *   to make. The client address is the peer's, or the one a trusted proxy forwarded
 *   (`clientAddress.ts`).
 *
 * Every response these let through or refuse carries `X-RateLimit-Limit`, `X-RateLimit-Remaining`
 * and `X-RateLimit-Reset` (Unix seconds) of the budget that applied: the org's for authenticated
 * requests, the address's for 401s (and for the 429s that replace them). A refusal is 429
 * `rate_limit_exceeded` (no `param`, rule 3) with `Retry-After` in whole seconds (>= 1) and the
 * same number in the message (rule 1; RFC 6585 §4, RFC 9110 §10.2.3). Refused requests do not count.
 *
 * Embedded: every admitted count is written through to LMDB as it is admitted, by the in-memory
 * limiter itself (queued in admission order
 * and committed by lmdb-js with the same event turn's batch, a few milliseconds later; the request
 * does not wait for the disk flush, which would triple a GET's latency), so a restart, even after
 * SIGKILL, keeps the counts: at most the counts of the last commit batch before a kill -9 are lost.
 *
 * Both are asked of `ctx.services.limiter` (one `RateLimiter`, `limits/rateLimiter.ts`). Shared
 * topology (`synthd serve --redis`): that is the Redis limiter,
 * the same two-window estimate in one Lua script per request against Redis's clock, so N front
 * ends admit exactly one budget between them; Redis holds the counts (no LMDB write-through).
 * When Redis cannot answer, the request gets 503 `training_service_unavailable` with Retry-After
 * (never admitted unchecked).
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
 * Per-address budget of failed authentications, called by `authenticate` once it knows the
 * request's key is missing or bad, and only then: a request with a valid key is never counted and
 * never refused for its address, however many failed logins came from the same address (behind a
 * load balancer every client may share one), and concurrent valid requests cannot see each
 * other's counts because nothing is counted for them.
 *
 * The address is {@link clientAddress}: the TCP peer, or, when the peer is a trusted proxy
 * (`--trusted-proxy`), the client its forwarding header names. Admitted: the failure is counted
 * (embedded: written through to LMDB like the org counters) and the address's X-RateLimit-* headers
 * are set; the caller then throws its 401. Over budget: throws 429 `rate_limit_exceeded` with
 * `Retry-After` instead of the 401, so a guesser gets no more than the budget's worth of answers
 * per minute that say "wrong key".
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

/**
 * One decision of `limiter`; a shared limiter that cannot answer (Redis unreachable, too slow or
 * failing): 503 `training_service_unavailable` with its Retry-After.
 * @throws ApiError
 */
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
