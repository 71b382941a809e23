/**
 * The sliding window counter of `rateLimiter.ts`, kept in Redis so that several synthd front ends
 * share one budget per key (the shared topology: rate limits across front ends in Redis); see
 * "How the server uses it" below.
 *
 * ## Method
 *
 * The same method, decisions, outputs and header values as the in-memory {@link MemoryRateLimiter}
 * (whose module comment is the specification): Cloudflare's sliding window counter ("How we built
 * rate limiting capable of scaling to millions of domains",
 * blog.cloudflare.com/counting-things-a-lot-of-different-things) with windows of 60 s aligned to
 * the Unix minute, `estimate = prev * (1 - elapsed / 60 s) + curr`, a request admitted iff
 * `estimate + 1 <= limit`, refused requests not counted, and `X-RateLimit-Limit`,
 * `X-RateLimit-Remaining`, `X-RateLimit-Reset` and `Retry-After` computed by the same formulas
 * (`roll`, `estimate`, `nextAdmissionMs`, `admit`, `refund` there are ported line by line to Lua).
 *
 * Each decision is ONE Lua script run by Redis (EVALSHA, falling back to EVAL when Redis answers
 * NOSCRIPT, as ioredis's `defineCommand` does; Redis docs: "Scripting with Lua", EVAL/EVALSHA).
 * A script runs atomically (no other command or script runs meanwhile), so the read of
 * `{window, prev, curr}`, the roll to the current window, the estimate, the admission and the
 * increment of `curr` cannot interleave with another front end's decision: 200 requests fired at
 * once at a 60/min key admit exactly 60, wherever they arrive. The script touches one key, declared
 * in KEYS, so it also runs on Redis Cluster.
 *
 * Arithmetic: Redis 7 runs Lua 5.1, whose numbers are IEEE doubles like JavaScript's; the script
 * performs the same operations in the same order as the TypeScript (`(now - window * 60000) / 60000`,
 * `prev * (1 - elapsed) + curr`, the same 1e-9 tolerance, the same `ceil(x - 1e-6)`), so its
 * doubles are bit-for-bit the TypeScript's. A Lua number returned to Redis is truncated to an
 * integer reply, so the script returns only integers (window index, counts, Unix seconds, Unix
 * milliseconds, all below 2^53) and the one fractional value, the estimate, as a string formatted
 * with `%.17g`, which round-trips a double exactly. The limit and `nowMs` go in as decimal strings
 * (JavaScript's `String` and Lua's `tonumber` round-trip a double), and the counter is stored as
 * integers (Lua writes a number with 14 significant digits: exact for integers below 10^14).
 *
 * ## Key layout
 *
 * `<prefix>rl:<key>`, a hash with fields `w` (window index, `floor(t_ms / 60000)`), `p` (prev)
 * and `c` (curr), e.g. `synthd:rl:org:acme` and `synthd:rl:addr:203.0.113.7`. The keys are the
 * in-memory limiter's (`orgKey`, `addressKey` in `steps/rateLimit.ts`); the per-address budget of
 * failed authentications can share the org limiter's prefix (its keys start with `addr:`) or use
 * an instance with its own prefix.
 *
 * The script writes the counter back only when it changed (an admission, or a roll to a new
 * window: the stored window is always the window of the key's last decision, as in memory, which
 * `refund` relies on) and then sets a TTL of 2 windows (PEXPIRE 120000 ms). A counter last written
 * at time t in window w still matters until the end of window w + 1 (after that `roll` empties it)
 * and t + 120 s >= (w + 2) * 60 s (expiry runs on the same Redis clock as TIME), so a key never
 * expires while it could affect an estimate, and a key nobody uses goes away by itself (the
 * in-memory limiter's `sweep` is not needed). A decision that changes nothing (a refusal within the
 * window of the last write) writes nothing: a client hammering a key it is refused on costs no writes.
 *
 * ## Clock
 *
 * Production passes no time: the script reads the Redis server's clock (`redis.call('TIME')`,
 * truncated to whole milliseconds), so every front end decides on the same clock and front ends
 * with skewed clocks still agree on windows, estimates and `Reset`; with each front end's own
 * clock, one running a few seconds ahead would roll windows early and admit too much. Redis 7
 * replicates a script's effects (the commands it wrote), not the script, so a non-deterministic
 * command like TIME before a write is allowed and replicas and the AOF get the same values.
 * Tests pass an explicit `nowMs` (Unix milliseconds, an integer) to drive time; the decision is
 * then exactly the in-memory limiter's at that time. A clock that goes back (a failover to a
 * replica whose clock is behind) is handled as in memory: a counter from the future keeps its
 * counts, so it never undercounts.
 *
 * ## Failure behaviour
 *
 * A Redis that is down, unreachable or not answering must not hang a request: every call
 * (`admit`, `refund`, `get`) settles within the command timeout (`commandTimeoutMs`, default
 * 1000 ms) in all. If the connection is not ready (still opening, or lost and being re-opened) the
 * call waits for it for what is left of the timeout, then waits for the script's reply for what is
 * left; ioredis's own `commandTimeout` is set to the same value as a backstop. The client is
 * created with `enableOfflineQueue: false`, `autoResendUnfulfilledCommands: false` and
 * `maxRetriesPerRequest: 0`: nothing is queued while disconnected to be sent after a reconnect, and
 * a command sent on a connection that then broke is not replayed. A decision that the caller has
 * given up on (and answered 503 for) must not run later: replayed after an outage, a backlog of
 * admissions would count requests that never ran and exhaust every budget. A decision can still
 * have been counted by Redis when its reply is lost or late (the count is then one too high, never
 * too low).
 *
 * Every such failure, and any error Redis answers (e.g. OOM, READONLY), is thrown as a
 * {@link RateLimiterUnavailableError} (`reason`: `timeout`, `disconnected` or `redis_error`;
 * `retryAfterSeconds`, default 1); the caller answers 503 with `Retry-After`: it fails closed, no
 * request runs unlimited while the limits cannot be checked. ioredis keeps reconnecting in the
 * background (exponential backoff, at most about 5 s apart) and calls succeed again as soon as it
 * is connected. Arguments out of range (a limit < 1 or not finite, a `nowMs` or window that is not
 * an integer) are programming errors: `RangeError`, not wrapped.
 *
 * ## Why not rate-limiter-flexible
 *
 * rate-limiter-flexible (checked at 11.1.0) has no sliding window counter: its RateLimiterRedis
 * runs `SET key 0 EX duration NX` + `INCRBY` + `PTTL` in one Lua script, i.e. a fixed window that
 * starts at a key's first request (its README: "Flexible Fixed Window algorithm"; COMPARE_ROLLING.md
 * there compares it with rolling-window libraries and chooses the fixed window for speed). With it
 * a client can spend a whole budget at the end of one window and again at the start of the next
 * (twice the limit in a few seconds), its windows are not aligned to the minute, and its
 * `msBeforeNext` is not our `Reset`/`Retry-After`. The in-memory limiter and the contract's
 * headers use the two-window estimate, and both topologies must answer the same headers
 * (docs/decisions.md "The shared topology"), so this module keeps that method; it needs one short
 * script and ioredis, which BullMQ (the shared topology's training queue) uses anyway.
 *
 * ## How the server uses it
 *
 * It implements `RateLimiter` (`rateLimiter.ts`), the one interface `steps/rateLimit.ts` asks:
 * `await limiter.admit(key, limit)` (no clock argument: Redis TIME), the same headers and 429s as
 * the in-memory limiter, and no LMDB write-through (Redis is the store). A failed authentication
 * is counted only once the key is known to be bad: counting every request up front and refunding
 * it once the key proved valid (this module's `refund`) let the provisional counts of concurrent
 * valid requests from one address, alive for a PostgreSQL key lookup each, fill the address's
 * budget and refuse valid requests. Around `admit`, a {@link RateLimiterUnavailableError} becomes
 * 503 `training_service_unavailable` with `Retry-After`.
 * At startup `await limiter.ready()` so the first requests do not meet a connection still opening;
 * at shutdown `await limiter.close()`.
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

/**
 * The rate limits could not be checked (Redis down, unreachable, too slow, or answering an error).
 * The caller answers 503 with `Retry-After: retryAfterSeconds` (whole seconds, >= 1). `cause` is
 * ioredis's error.
 */
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
  /**
   * Where Redis is and how to log in (ioredis options: `host`, `port`, `db`, `username`,
   * `password`, `tls`, ...; default 127.0.0.1:6379). The options of the failure behaviour in the
   * module comment (`commandTimeout`, `enableOfflineQueue`, `autoResendUnfulfilledCommands`,
   * `maxRetriesPerRequest`) are always this module's and override any given here.
   */
  redis?: RedisOptions;
  /** Milliseconds a decision may take (default {@link DEFAULT_COMMAND_TIMEOUT_MS}), >= 1. */
  commandTimeoutMs?: number;
  /** `Retry-After` seconds put on {@link RateLimiterUnavailableError} (default 1), >= 1. */
  unavailableRetryAfterSeconds?: number;
  /** Called with each connection error ioredis reports (default: ignored; it keeps reconnecting). */
  onError?: (err: Error) => void;
  /**
   * Unix milliseconds of a decision whose caller passes no `nowMs` (tests inject a clock to move
   * through windows); default none: Redis's own clock (`TIME`), the same for every front end.
   */
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
 * window, prev, curr, now (Unix ms), estimate (string, %.17g)}.
 *
 * `ceil`, `estimate`, `nextAdmissionMs`, the roll and the rest are rateLimiter.ts's `ceil`,
 * `estimate`, `nextAdmissionMs`, `roll` and `MemoryRateLimiter.admit`, operation for operation, so that
 * the doubles agree (with the counter as three values instead of an object).
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
 * is that window and `curr > 0` (as the in-memory `refund`); the TTL is left as it is. Returns 1 if
 * it did, else 0.
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

/**
 * Sliding window counters by key (`org:NAME`, `addr:ADDRESS`) kept in Redis and shared by every
 * front end that uses the same Redis and prefix. Opens its own ioredis connection when constructed
 * (see {@link ready}) and keeps reconnecting until {@link close}.
 */
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

  /**
   * Resolves once the connection is ready (at once if it is); rejects with a
   * {@link RateLimiterUnavailableError} (`disconnected`) if it is not within `timeoutMs`
   * (default 5000). The limiter stays usable: ioredis goes on reconnecting.
   */
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

  /**
   * Runs one script within the command timeout in all: waits for the connection if it is not ready
   * (opening, or reconnecting after a loss) for what is left of the timeout, then for the reply for
   * what is left. Nothing is queued to be sent later (module comment: "Failure behaviour").
   */
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
   * Decides one request for `key` against `limit` requests per minute (finite, >= 1) and, when
   * admitted, counts it, atomically in Redis (one script). `nowMs` (Unix milliseconds, an integer)
   * is for tests only (as is the `clock` option, used when `nowMs` is absent): production passes
   * neither and the decision uses the Redis server's clock.
   * The result has the in-memory {@link RateLimiter.admit}'s fields and values for the same counter
   * and time, plus `nowMs` and `estimate`.
   *
   * @throws RateLimiterUnavailableError when Redis is not connected, does not answer within the
   *   command timeout, or answers an error.
   * @throws RangeError for a `limit` or `nowMs` out of range.
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

  /**
   * Takes back one request counted by {@link admit} in window `window` (the decision's
   * `counter.window`), atomically, and only while the stored counter is still in that window (no-op
   * once the window has passed, as in memory). Resolves to whether a request was taken back. Used
   * for the per-address budget, which counts only failed authentications.
   *
   * @throws RateLimiterUnavailableError as {@link admit}.
   */
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
