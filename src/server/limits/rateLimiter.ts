/**
 * The sliding window counter (contract: "Limits") of Cloudflare's "How we built rate limiting
 * capable of scaling to millions of domains"
 * (blog.cloudflare.com/counting-things-a-lot-of-different-things):
 * windows of 60 s aligned to the Unix minute (`w = floor(t_ms / 60000)`, start `W`); a counter
 * holds `curr` (admitted in w) and `prev` (in w - 1); `estimate(t) = prev * (1 - (t - W) / 60000)
 * + curr`; a request is admitted iff `estimate(t) + 1 <= limit`, then counted (refusals are not).
 * Since `curr <= estimate`, no fixed window ever admits more than `limit`.
 * Without admissions the estimate never grows, so the "next admission" times below are exact.
 *
 * Headers: `X-RateLimit-Limit` = limit; `X-RateLimit-Remaining` = `floor(limit - estimate)` after
 * this request; `X-RateLimit-Reset` = Unix seconds (rounded up) of the later of the window's end
 * and the next admission; on refusal `Retry-After` = `max(1, ceil(seconds to next admission))`
 * (RFC 9110 §10.2.3; RFC 6585 §4).
 *
 * {@link MemoryRateLimiter} lives on the HTTP thread, the only admitter: a decision is a
 * synchronous read-modify-write, so concurrent requests never both take the last slot. Counts are
 * written through to LMDB and loaded at start, so a restart (even SIGKILL) keeps them.
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

/** The earliest Unix ms >= `nowMs` at which `c` (rolled to now) admits, if nothing else is. */
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

/** A sliding window rate limiter keyed by `org:NAME` or `addr:ADDRESS` (memory or Redis). */
export interface RateLimiter {
  /**
   * Decides one request for `key` against `limit` per minute (>= 1) now; counts it if admitted.
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
   * The embedded server's limiter: `store`'s counters, each admitted count written through in
   * admission order (the request does not wait). `onError`: a write that failed.
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
   * Decides one request for `key` at `nowMs` against `limit` per minute and, if admitted, counts
   * and persists it. Synchronous: check and count cannot interleave with another request.
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

  /** Takes back one request counted in window `window` (no-op once that window has passed). */
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
