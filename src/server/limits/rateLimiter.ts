/**
 * The sliding window counter (contract: "Limits", 60 requests per minute default), as
 * Cloudflare describes it in "How we built rate limiting capable of scaling to millions of
 * domains" (blog.cloudflare.com/counting-things-a-lot-of-different-things):
 *
 * - time is cut into fixed windows of 60 s aligned to the Unix minute (window index
 *   `w = floor(t_ms / 60000)`, start `W = w * 60000`);
 * - a counter keeps `curr` (requests admitted in window w) and `prev` (admitted in window w - 1);
 * - at time t the rate is estimated as `estimate(t) = prev * (1 - (t - W) / 60000) + curr`, i.e.
 *   the previous window weighted by how much of it still overlaps the last 60 s;
 * - a request is admitted iff `estimate(t) + 1 <= limit` (the request itself must fit), and then
 *   `curr` grows by one. So a fresh counter admits exactly `limit` requests in its first window,
 *   however many arrive at once; refused requests are not counted.
 *
 * Without new admissions `estimate` never grows (it falls linearly within a window and is
 * continuous across the boundary, where `curr` becomes `prev` with weight 1), so once a request
 * would be admitted at time t it would be admitted at any later time: the "next admission" times
 * below are exact.
 *
 * Headers (per response): `X-RateLimit-Limit` = limit; `X-RateLimit-Remaining` =
 * `floor(limit - estimate)` after this request (how many more would be admitted right now);
 * `X-RateLimit-Reset` = Unix seconds (rounded up) of the later of the end of the current window
 * and the moment a request will next be admitted, so a client that waits until Reset is admitted
 * unless it or another client spends the budget first. On refusal `Retry-After` =
 * `max(1, ceil(seconds until the next admission))` (RFC 9110 §10.2.3 delay-seconds; RFC 6585 §4
 * for 429).
 *
 Two limiters implement {@link RateLimiter}: {@link MemoryRateLimiter} here, and
 * `RedisRateLimiter` (`redisRateLimiter.ts`: the same counters in Redis, one atomic script per
 * decision, so every front end of the shared topology admits against one budget).
 *
 * {@link MemoryRateLimiter} is the single source of truth for admission and lives on the HTTP
 * thread, the only admitter: a decision is a synchronous read-modify-write of an in-memory map, so
 * concurrent requests can never both take the last slot, and no fixed window ever admits more
 * than `limit` (`curr <= estimate`). Every admitted count is written through to LMDB in the same
 * call (`persist`: `Store.putRateCounter`, committed with the event turn's batch) and loaded back
 * when a server starts, so a restart (even after SIGKILL) keeps the counts.
 *
 * Like any sliding window counter this is an approximation of a true sliding log: over an
 * arbitrary 60 s interval straddling two windows it assumes the previous window's requests were
 * spread evenly (Cloudflare measured 0.003% of requests wrongly allowed or limited).
 */
import type { RateCounter, Store } from "../../store";

/** Length of a window in milliseconds (60 s). */
export const WINDOW_MS = 60_000;

/** Requests per minute per organization unless the org has its own limit (contract: "Limits"). */
export const DEFAULT_RATE_LIMIT = 60;

/** Requests per minute per client address that fail authentication (slows key guessing). */
export const DEFAULT_AUTH_FAILURE_LIMIT = 60;

/** One admission decision and the values of its headers. */
export interface RateDecision {
  admitted: boolean;
  /** Requests per minute (X-RateLimit-Limit). */
  limit: number;
  /** Requests that would be admitted right now after this one (X-RateLimit-Remaining), >= 0. */
  remaining: number;
  /** Unix seconds (X-RateLimit-Reset): see the module comment. */
  reset: number;
  /** Whole seconds >= 1 until a request will be admitted again; set only when refused (Retry-After). */
  retryAfter?: number;
  /** The counter after the decision (what to persist when admitted). */
  counter: RateCounter;
}

/** `c` moved forward to window `w`: unchanged, shifted by one (`curr` becomes `prev`), or empty. */
export function roll(c: RateCounter | undefined, w: number): RateCounter {
  if (c === undefined || c.window < w - 1) return { window: w, prev: 0, curr: 0 };
  if (c.window === w - 1) return { window: w, prev: c.curr, curr: 0 };
  if (c.window === w) return { ...c };
  // A counter from the future (the clock went back): keep its counts, never undercount.
  return { window: w, prev: c.prev, curr: c.curr };
}

/** The estimated requests of the last 60 s at `nowMs` for a counter already rolled to now's window. */
export function estimate(c: RateCounter, nowMs: number): number {
  const elapsed = (nowMs - c.window * WINDOW_MS) / WINDOW_MS; // in [0, 1)
  return c.prev * (1 - elapsed) + c.curr;
}

/** Tolerance for floating-point error in the admission inequality. */
const EPS = 1e-9;

/** `Math.ceil` that ignores floating-point noise just above an integer (1000.0000000000002 -> 1000). */
function ceil(x: number): number {
  return Math.ceil(x - 1e-6);
}

/**
 * The earliest Unix millisecond >= `nowMs` at which `estimate + 1 <= limit` holds for counter `c`
 * (already rolled to now's window), assuming nothing else is admitted meanwhile.
 */
export function nextAdmissionMs(c: RateCounter, limit: number, nowMs: number): number {
  if (estimate(c, nowMs) + 1 <= limit + EPS) return nowMs;
  const start = c.window * WINDOW_MS;
  // Still in this window: prev * (1 - f) + curr + 1 <= limit  <=>  f >= 1 - (limit - 1 - curr) / prev.
  if (c.curr + 1 <= limit && c.prev > 0) {
    const f = 1 - (limit - 1 - c.curr) / c.prev;
    return Math.max(nowMs, start + ceil(f * WINDOW_MS));
  }
  // Next window (curr becomes prev): curr * (1 - f) + 1 <= limit  <=>  f >= 1 - (limit - 1) / curr.
  const f = Math.max(0, 1 - (limit - 1) / c.curr);
  return start + WINDOW_MS + ceil(f * WINDOW_MS);
}

/**
 * A sliding window rate limiter, keyed by `org:NAME` or `addr:ADDRESS`: in memory
 * ({@link MemoryRateLimiter}) or in Redis (`RedisRateLimiter`). The request pipeline's
 * `steps/rateLimit.ts` asks whichever the server was given.
 */
export interface RateLimiter {
  /**
   * Decides one request for `key` against `limit` requests per minute (>= 1), now by the
   * limiter's clock, and counts it when admitted.
   * @throws RateLimiterUnavailableError (`redisRateLimiter.ts`) when a shared limiter cannot decide.
   */
  admit(key: string, limit: number): RateDecision | Promise<RateDecision>;
}

/** Options of {@link MemoryRateLimiter}. */
export interface MemoryRateLimiterOptions {
  /** Unix milliseconds of "now"; default `Date.now`. */
  clock?: () => number;
  /** Called with each admitted count, in admission order (the embedded store's write-through). */
  persist?: (key: string, counter: RateCounter) => void;
}

/** Sliding window counters by key (`org:NAME`, `addr:ADDRESS`), held in memory on the HTTP thread. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, RateCounter>();
  private readonly clock: () => number;
  private readonly persist: ((key: string, counter: RateCounter) => void) | undefined;

  /**
   * The embedded server's limiter: the counters `store` persisted, and each admitted count written
   * through to it (queued in admission order and committed with the event turn's batch; the
   * request does not wait for it). `onError`: a write that failed.
   */
  static async load(
    store: Pick<Store, "rateCounterEntries" | "putRateCounter">,
    clock: () => number,
    onError: (err: unknown) => void,
  ): Promise<MemoryRateLimiter> {
    return new MemoryRateLimiter(await store.rateCounterEntries(), {
      clock,
      persist: (key, counter) => {
        store.putRateCounter(key, counter).catch(onError);
      },
    });
  }

  /** Starts from persisted counters (`Store.rateCounterEntries()`). */
  constructor(initial: Iterable<[string, RateCounter]> = [], opts: MemoryRateLimiterOptions = {}) {
    for (const [k, c] of initial) this.counters.set(k, { ...c });
    this.clock = opts.clock ?? Date.now;
    this.persist = opts.persist;
  }

  /**
   * Decides one request for `key` at `nowMs` (default: the clock's now) against `limit` requests
   * per minute (>= 1) and, when admitted, counts it and passes the count to `persist`.
   * Synchronous: the check and the count cannot interleave with another request.
   */
  admit(key: string, limit: number, nowMs: number = this.clock()): RateDecision {
    const w = Math.floor(nowMs / WINDOW_MS);
    const c = roll(this.counters.get(key), w);
    const admitted = estimate(c, nowMs) + 1 <= limit + EPS;
    if (admitted) c.curr += 1;
    this.counters.set(key, c);
    const remaining = Math.max(0, Math.floor(limit - estimate(c, nowMs) + EPS));
    const next = nextAdmissionMs(c, limit, nowMs);
    const windowEnd = (w + 1) * WINDOW_MS;
    const decision: RateDecision = {
      admitted,
      limit,
      remaining,
      reset: ceil(Math.max(windowEnd, next) / 1000),
      counter: { ...c },
    };
    if (!admitted) decision.retryAfter = Math.max(1, ceil((next - nowMs) / 1000));
    if (admitted) this.persist?.(key, decision.counter);
    return decision;
  }

  /**
   * Takes back one request counted by {@link admit} in window `window` (no-op once the window has
   * passed). Used for the per-address budget, which counts only failed authentications.
   */
  refund(key: string, window: number): void {
    const c = this.counters.get(key);
    if (c !== undefined && c.window === window && c.curr > 0) c.curr -= 1;
  }

  /** The counter of `key` as stored in memory (for tests and persistence). */
  get(key: string): RateCounter | undefined {
    const c = this.counters.get(key);
    return c === undefined ? undefined : { ...c };
  }

  /** Forgets counters that no longer affect any estimate at `nowMs` (older than the previous window). */
  sweep(nowMs: number): void {
    const w = Math.floor(nowMs / WINDOW_MS);
    for (const [k, c] of this.counters) if (c.window < w - 1) this.counters.delete(k);
  }
}
