/**
 * The sliding window counter of `rateLimiter.ts` (its module comment is the specification) kept
 * in Redis, so front ends of the shared topology share one budget per key (docs/operations.md
 * "Rate limits in Redis (the shared topology)").
 *
 * Each decision is ONE Lua script (EVALSHA, EVAL on NOSCRIPT), which Redis runs atomically, so no
 * other front end's decision interleaves. It touches one key, declared in KEYS (Redis Cluster).
 * Lua 5.1 numbers are IEEE doubles and the script does the TypeScript's operations in the same
 * order, so results are bit-for-bit equal. Redis truncates a returned Lua number to an integer,
 * so the script returns integers (below 2^53) and the estimate as a `%.17g` string. Inputs go in
 * as decimal strings and counts are stored as integers, both exact (Lua writes 14 digits).
 *
 * Keys: `<prefix>rl:<key>`, a hash `{w, p, c}`. Written only when changed (a refused client costs
 * no writes), then a TTL of 2 windows: a counter written in window w matters until the end of
 * w + 1, so it never expires while it could count. The stored window is that of the last decision
 * (`refund` relies on it). Time is Redis `TIME` (front ends with skewed clocks agree; Redis 7
 * replicates effects, so TIME before a write is allowed); tests pass `nowMs`. A clock that goes
 * back (failover to a replica behind) keeps a counter from the future: it never undercounts.
 *
 * Failures: every call settles within `commandTimeoutMs` in all. The client never queues or
 * replays a command: a decision whose caller already answered 503 must not run later, or a
 * backlog replayed after an outage would count requests that never ran (a lost reply may still
 * have counted: one too many, never too few). Failures throw {@link RateLimiterUnavailableError},
 * answered 503 (fails closed); out-of-range arguments throw `RangeError`.
 */
import Redis, { type RedisOptions } from "ioredis";
import { WINDOW_MS, type RateDecision, type RateLimiter } from "./rateLimiter";
import type { RateCounter } from "../../store";

/** Default time (ms) a decision may take before it fails with {@link RateLimiterUnavailableError}. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1000;

/** Default `Retry-After` (whole seconds) suggested by {@link RateLimiterUnavailableError}. */
export const DEFAULT_UNAVAILABLE_RETRY_AFTER_S = 1;

/** Why the limiter could not decide: no reply in time, no connection, or an error answered by Redis. */
export type RateLimiterUnavailableReason = "timeout" | "disconnected" | "redis_error";

/** The limits could not be checked: answered 503 with `Retry-After: retryAfterSeconds` (>= 1). */
export class RateLimiterUnavailableError extends Error {
  constructor(
    readonly reason: RateLimiterUnavailableReason,
    message: string,
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "RateLimiterUnavailableError";
  }
}

/** Options of {@link RedisRateLimiter}. */
export interface RedisRateLimiterOptions {
  /** Prefix of every key this limiter writes, e.g. `synthd:` (keys are `<prefix>rl:<key>`). */
  prefix: string;
  /** ioredis options (default 127.0.0.1:6379); the failure-behaviour options are always ours. */
  redis?: RedisOptions;
  /** Milliseconds a decision may take (default {@link DEFAULT_COMMAND_TIMEOUT_MS}), >= 1. */
  commandTimeoutMs?: number;
  /** `Retry-After` seconds put on {@link RateLimiterUnavailableError} (default 1), >= 1. */
  unavailableRetryAfterSeconds?: number;
  /** Called with each connection error ioredis reports (default: ignored; it keeps reconnecting). */
  onError?: (err: Error) => void;
  /** Unix ms for a decision without `nowMs` (tests only); default: Redis `TIME`. */
  clock?: () => number;
}

/** A {@link RateDecision} and what the script saw: the time it decided at and the estimate after it. */
export interface RedisRateDecision extends RateDecision {
  /** Unix milliseconds the decision was made at: Redis TIME, or the `nowMs` passed in. */
  nowMs: number;
  /** The estimated requests of the last 60 s after this decision (the double `remaining` is taken from). */
  estimate: number;
}

/**
 * KEYS[1]: the counter's key. ARGV: limit, window length (ms), TTL (ms), now (Unix ms, or "" for
 * Redis TIME). Returns {admitted (0/1), remaining, reset (Unix s), retryAfter (s, -1 if admitted),
 * window, prev, curr, now (Unix ms), estimate (string, %.17g)}. A port of rateLimiter.ts's
 * `ceil`, `estimate`, `nextAdmissionMs`, `roll` and `admit`, operation for operation.
 */
const ADMIT_LUA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local W = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local now
if ARGV[4] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[4])
end
local EPS = 1e-9

local function ceil(x)
  return math.ceil(x - 1e-6)
end

local function estimate(window, prev, curr)
  local elapsed = (now - window * W) / W
  return prev * (1 - elapsed) + curr
end

local function nextAdmissionMs(window, prev, curr)
  if estimate(window, prev, curr) + 1 <= limit + EPS then return now end
  local start = window * W
  if curr + 1 <= limit and prev > 0 then
    local f = 1 - (limit - 1 - curr) / prev
    return math.max(now, start + ceil(f * W))
  end
  local f = math.max(0, 1 - (limit - 1) / curr)
  return start + W + ceil(f * W)
end

local w = math.floor(now / W)
local stored = redis.call('HMGET', key, 'w', 'p', 'c')
local sw, sp, sc = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
local window, prev, curr
if sw == nil or sp == nil or sc == nil or sw < w - 1 then
  window, prev, curr = w, 0, 0
elseif sw == w - 1 then
  window, prev, curr = w, sc, 0
elseif sw == w then
  window, prev, curr = w, sp, sc
else
  window, prev, curr = w, sp, sc
end

local admitted = estimate(window, prev, curr) + 1 <= limit + EPS
if admitted then curr = curr + 1 end
if admitted or sw ~= window or sp ~= prev or sc ~= curr then
  redis.call('HSET', key, 'w', window, 'p', prev, 'c', curr)
  redis.call('PEXPIRE', key, ttl)
end
local est = estimate(window, prev, curr)
local remaining = math.max(0, math.floor(limit - est + EPS))
local nxt = nextAdmissionMs(window, prev, curr)
local windowEnd = (w + 1) * W
local reset = ceil(math.max(windowEnd, nxt) / 1000)
local retryAfter = -1
if not admitted then retryAfter = math.max(1, ceil((nxt - now) / 1000)) end
return {admitted and 1 or 0, remaining, reset, retryAfter, window, prev, curr, now, string.format('%.17g', est)}
`;

/**
 * KEYS[1]: the counter's key. ARGV: window index. Takes one back from `curr` when the stored window
 * is that window and `curr > 0` (as in memory); TTL unchanged. Returns 1 if it did, else 0.
 */
const REFUND_LUA = `
local v = redis.call('HMGET', KEYS[1], 'w', 'c')
local w, c = tonumber(v[1]), tonumber(v[2])
if w ~= nil and c ~= nil and w == tonumber(ARGV[1]) and c > 0 then
  redis.call('HINCRBY', KEYS[1], 'c', -1)
  return 1
end
return 0
`;

type AdmitReply = [number, number, number, number, number, number, number, number, string];

/** The client with this module's scripts (ioredis `defineCommand`: EVALSHA, EVAL on NOSCRIPT). */
interface ScriptedRedis extends Redis {
  synthdRateAdmit(key: string, limit: string, windowMs: string, ttlMs: string, nowMs: string): Promise<AdmitReply>;
  synthdRateRefund(key: string, window: string): Promise<number>;
}

/** Sliding window counters in Redis, shared by front ends with the same Redis and prefix. */
export class RedisRateLimiter implements RateLimiter {
  /** Key prefix, as given. */
  readonly prefix: string;
  private readonly client: ScriptedRedis;
  private readonly retryAfterSeconds: number;
  private readonly commandTimeoutMs: number;
  private readonly clock: (() => number) | undefined;

  /** Connects to Redis (in the background; errors surface on the first decision or in {@link ready}). */
  constructor(options: RedisRateLimiterOptions) {
    const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    const retryAfter = options.unavailableRetryAfterSeconds ?? DEFAULT_UNAVAILABLE_RETRY_AFTER_S;
    if (!(commandTimeoutMs >= 1)) throw new RangeError(`commandTimeoutMs must be >= 1, got ${commandTimeoutMs}`);
    if (!Number.isInteger(retryAfter) || retryAfter < 1) {
      throw new RangeError(`unavailableRetryAfterSeconds must be an integer >= 1, got ${retryAfter}`);
    }
    this.prefix = options.prefix;
    this.clock = options.clock;
    this.retryAfterSeconds = retryAfter;
    this.commandTimeoutMs = commandTimeoutMs;
    this.client = new Redis({
      host: "127.0.0.1",
      port: 6379,
      ...options.redis,
      commandTimeout: commandTimeoutMs,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      lazyConnect: false,
    }) as ScriptedRedis;
    const onError = options.onError;
    // Without a listener ioredis prints every connection error; the decisions report them instead.
    this.client.on("error", (err: Error) => onError?.(err));
    this.client.defineCommand("synthdRateAdmit", { numberOfKeys: 1, lua: ADMIT_LUA });
    this.client.defineCommand("synthdRateRefund", { numberOfKeys: 1, lua: REFUND_LUA });
  }

  /** The Redis key of limiter key `key`: `<prefix>rl:<key>`. */
  redisKey(key: string): string {
    return `${this.prefix}rl:${key}`;
  }

  /** Resolves once connected; rejects (`disconnected`) after `timeoutMs`, still reconnecting. */
  async ready(timeoutMs = 5000): Promise<void> {
    if (!(await this.connected(timeoutMs))) {
      throw new RateLimiterUnavailableError(
        "disconnected",
        `Redis at ${this.where()} is not reachable (no connection within ${timeoutMs} ms; status ${this.client.status}).`,
        this.retryAfterSeconds,
      );
    }
  }

  /** Whether the connection is ready now or becomes ready within `ms` (false at once once closed). */
  private connected(ms: number): Promise<boolean> {
    const status = this.client.status;
    if (status === "ready") return Promise.resolve(true);
    if (status === "end" || ms <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.client.off("ready", onReady);
        this.client.off("end", onEnd);
        resolve(ok);
      };
      const onReady = (): void => done(true);
      const onEnd = (): void => done(false);
      const timer = setTimeout(() => done(false), ms);
      this.client.on("ready", onReady);
      this.client.on("end", onEnd);
    });
  }

  /** Runs one call within the command timeout in all: connection wait, then reply wait. */
  private async run<T>(what: string, call: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.commandTimeoutMs;
    if (!(await this.connected(deadline - Date.now()))) {
      throw this.unavailable(new Error(`no connection within ${this.commandTimeoutMs} ms`), what);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("Command timed out")), Math.max(1, deadline - Date.now()));
    });
    try {
      return await Promise.race([call(), timeout]);
    } catch (err) {
      throw this.unavailable(err, what);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Decides one request for `key` against `limit` per minute (>= 1), counting it if admitted;
   * `nowMs` (Unix ms) is for tests. Values are the in-memory limiter's, plus `nowMs`, `estimate`.
   * @throws RateLimiterUnavailableError when Redis cannot decide; RangeError for bad arguments.
   */
  async admit(key: string, limit: number, nowMs?: number): Promise<RedisRateDecision> {
    if (!Number.isFinite(limit) || limit < 1) throw new RangeError(`limit must be finite and >= 1, got ${limit}`);
    nowMs ??= this.clock?.();
    if (nowMs !== undefined && !(Number.isSafeInteger(nowMs) && nowMs >= 0)) {
      throw new RangeError(`nowMs must be a non-negative integer (Unix milliseconds), got ${nowMs}`);
    }
    const r = await this.run("admit", () =>
      this.client.synthdRateAdmit(
        this.redisKey(key),
        String(limit),
        String(WINDOW_MS),
        String(2 * WINDOW_MS),
        nowMs === undefined ? "" : String(nowMs),
      ),
    );
    const [admitted, remaining, reset, retryAfter, window, prev, curr, now, est] = r;
    const counter: RateCounter = { window: Number(window), prev: Number(prev), curr: Number(curr) };
    const decision: RedisRateDecision = {
      admitted: Number(admitted) === 1,
      limit,
      remaining: Number(remaining),
      reset: Number(reset),
      counter,
      nowMs: Number(now),
      estimate: Number(est),
    };
    if (!decision.admitted) decision.retryAfter = Number(retryAfter);
    return decision;
  }

  /** Takes back one request counted in `window` while stored there; resolves whether it did. */
  async refund(key: string, window: number): Promise<boolean> {
    if (!Number.isSafeInteger(window)) throw new RangeError(`window must be an integer window index, got ${window}`);
    return (await this.run("refund", () => this.client.synthdRateRefund(this.redisKey(key), String(window)))) === 1;
  }

  /** The counter of `key` as stored in Redis (for tests and diagnostics), not rolled to now. */
  async get(key: string): Promise<RateCounter | undefined> {
    const v = await this.run("get", () => this.client.hmget(this.redisKey(key), "w", "p", "c"));
    if (v[0] === null || v[1] === null || v[2] === null) return undefined;
    return { window: Number(v[0]), prev: Number(v[1]), curr: Number(v[2]) };
  }

  /** Closes the connection (waits for replies already due, then QUIT; disconnects if that fails). */
  async close(): Promise<void> {
    if (this.client.status === "end") return;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private where(): string {
    const o = this.client.options;
    return o.path ?? `${o.host ?? "127.0.0.1"}:${o.port ?? 6379}`;
  }

  /** ioredis's error as a {@link RateLimiterUnavailableError}. */
  private unavailable(err: unknown, what: string): RateLimiterUnavailableError {
    const message = err instanceof Error ? err.message : String(err);
    let reason: RateLimiterUnavailableReason;
    if (/Command timed out/i.test(message)) reason = "timeout";
    else if (err instanceof Error && err.name === "ReplyError") reason = "redis_error";
    else reason = "disconnected";
    const detail =
      reason === "timeout"
        ? `no reply within the timeout of ${this.commandTimeoutMs} ms`
        : reason === "disconnected"
          ? `not connected (status ${this.client.status}): ${message}`
          : `Redis answered an error: ${message}`;
    return new RateLimiterUnavailableError(
      reason,
      `Rate limiter ${what} failed, Redis at ${this.where()}: ${detail}.`,
      this.retryAfterSeconds,
      { cause: err },
    );
  }
}
