/**
 * The Redis sliding window counter (src/server/limits/redisRateLimiter.ts) against a real Redis 7 at
 * 127.0.0.1:6379 (CI and the development machines run one; SYNTHD_TEST_REDIS_HOST/PORT point
 * elsewhere): the same decisions as the in-memory RateLimiter, step for step and field for field;
 * exactly `limit` admissions out of 200 concurrent requests from two connections and from two
 * processes; the weighting of the previous window; refunds; the TTL; the failure behaviour (no
 * Redis, a Redis that stops answering); the per-address budget of failed authentications.
 *
 * No Redis is a failure, not a skip. Every key lives under `synthd-test:<random>:` and is deleted
 * at the end. The only timing assertion is the generous bound on how long a failed decision takes.
 *
 * Run as a child process (SYNTHD_RL_CHILD=1) this file is the other front end of the two-process
 * test instead: it admits on its own connection when told to and prints what it decided.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { createInterface } from "node:readline";
import Redis from "ioredis";
import { DEFAULT_AUTH_FAILURE_LIMIT, estimate, MemoryRateLimiter as RateLimiter, nextAdmissionMs, WINDOW_MS, type RateDecision } from "../src/server/limits/rateLimiter";
import { RateLimiterUnavailableError, RedisRateLimiter } from "../src/server/limits/redisRateLimiter";

const HOST = process.env.SYNTHD_TEST_REDIS_HOST ?? "127.0.0.1";
const PORT = Number(process.env.SYNTHD_TEST_REDIS_PORT ?? 6379);

if (process.env.SYNTHD_RL_CHILD === "1") {
  void child();
} else {
  defineTests();
}

/** Child mode: connect, say "ready", wait for "go", fire N admits at once, print them as JSON. */
async function child(): Promise<void> {
  const limiter = new RedisRateLimiter({ prefix: process.env.SYNTHD_RL_PREFIX!, redis: { host: HOST, port: PORT } });
  await limiter.ready();
  const n = Number(process.env.SYNTHD_RL_N);
  const key = process.env.SYNTHD_RL_KEY!;
  const limit = Number(process.env.SYNTHD_RL_LIMIT);
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) if (line.trim() === "go") break;
  const ds = await Promise.all(Array.from({ length: n }, () => limiter.admit(key, limit)));
  process.stdout.write(`result ${JSON.stringify(ds.map((d) => ({ a: d.admitted, r: d.remaining, w: d.counter.window })))}\n`);
  await limiter.close();
  process.exit(0);
}

function defineTests(): void {
  const prefix = `synthd-test:${randomBytes(6).toString("hex")}:`;
  let admin: Redis;
  const limiters: RedisRateLimiter[] = [];

  /** A limiter on the test Redis with a key prefix under this file's. */
  function limiter(sub = "", extra: Partial<ConstructorParameters<typeof RedisRateLimiter>[0]> = {}): RedisRateLimiter {
    const l = new RedisRateLimiter({ prefix: prefix + sub, redis: { host: HOST, port: PORT }, ...extra });
    limiters.push(l);
    return l;
  }

  /** Unix ms by the Redis server's clock. */
  async function redisNow(): Promise<number> {
    const [s, us] = await admin.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }

  /**
   * Waits, if needed, so that at least `marginMs` remain in the current minute by Redis's clock: a
   * burst decided by Redis TIME then falls in one window (a burst straddling a window boundary
   * legitimately admits a different number, see the module comment of rateLimiter.ts).
   */
  async function awayFromWindowEnd(marginMs = 5000): Promise<void> {
    const now = await redisNow();
    const left = WINDOW_MS - (now % WINDOW_MS);
    if (left < marginMs) await new Promise((r) => setTimeout(r, left + 200));
  }

  before(async () => {
    admin = new Redis({ host: HOST, port: PORT, lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    let lastError: Error | undefined;
    admin.on("error", (err: Error) => (lastError = err));
    try {
      await admin.connect();
      const info = await admin.info("server");
      const version = /redis_version:(\S+)/.exec(info)?.[1] ?? "?";
      if (!(Number(version.split(".")[0]) >= 7)) throw new Error(`Redis ${version} found; these tests need Redis 7 or later`);
    } catch (err) {
      admin.disconnect();
      throw new Error(
        `Redis is not usable at ${HOST}:${PORT} (${lastError?.message ?? (err as Error).message}). test/redis-rate-limiter.test.ts needs a real ` +
          `Redis 7 there (CI and the development machines run one; start it with ` +
          `redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no).`,
      );
    }
  });

  after(async () => {
    for (const l of limiters) await l.close();
    if (admin?.status !== "ready") return;
    let cursor = "0";
    do {
      const [next, keys] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await admin.del(...keys);
      cursor = next;
    } while (cursor !== "0");
    const left = await admin.keys(`${prefix}*`);
    await admin.quit();
    assert.deepEqual(left, [], "every test key deleted");
  });

  /** The RateDecision fields of `d` (what the in-memory limiter returns), for deepEqual. */
  function fields(d: RateDecision): RateDecision {
    const out: RateDecision = { admitted: d.admitted, limit: d.limit, remaining: d.remaining, reset: d.reset, counter: d.counter };
    if (d.retryAfter !== undefined) out.retryAfter = d.retryAfter;
    return out;
  }

  test("a scripted series of decisions and refunds equals the in-memory RateLimiter's, field for field", async () => {
    const redis = limiter("series:");
    const mem = new RateLimiter();
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const keys = ["org:a", "org:b", "addr:198.51.100.1"];
    // Each key's usual limit and the one it sometimes has instead (an org whose limit was changed).
    const limits: Record<string, [number, number]> = { "org:a": [10, 2.5], "org:b": [60, 5], "addr:198.51.100.1": [1, 3] };
    let now = 1_000_000 * WINDOW_MS + 12_345; // explicit times: a window index of 1,000,000
    const seen = { admitted: 0, refused: 0, rolls: 0, back: 0, refunds: 0, retryOver1: 0, exact: 0 };
    const lastWindow = new Map<string, number>();
    // After some refusals the next decision on that key comes exactly at (or 1 ms before) the
    // advertised next admission, where the floating-point tolerances decide.
    let exact: { key: string; at: number } | undefined;
    for (let i = 0; i < 2500; i++) {
      const r = rand(100);
      if (exact !== undefined) {
        now = exact.at;
        seen.exact++;
      } else if (r < 1) {
        now -= 70_000 + rand(20_000); // the clock went back past a window boundary
        seen.back++;
      } else if (r < 3) now += WINDOW_MS + rand(2 * WINDOW_MS);
      else now += rand(r < 80 ? 150 : 3000);
      const key = exact?.key ?? keys[rand(keys.length)];
      exact = undefined;
      if (rand(10) === 0) {
        // refund: the last decision's window, or an earlier one
        const w = (lastWindow.get(key) ?? Math.floor(now / WINDOW_MS)) - rand(2);
        const before = mem.get(key);
        const expected = before !== undefined && before.window === w && before.curr > 0;
        mem.refund(key, w);
        assert.equal(await redis.refund(key, w), expected, `refund #${i} ${key} w=${w}`);
        if (expected) seen.refunds++;
      } else {
        const limit = limits[key][rand(8) === 0 ? 1 : 0];
        const m = mem.admit(key, limit, now);
        const d = await redis.admit(key, limit, now);
        const ctx = JSON.stringify({ i, key, limit, now });
        assert.deepEqual(fields(d), m, `decision ${ctx}`);
        assert.equal(d.nowMs, now, ctx);
        assert.equal(d.estimate, estimate(m.counter, now), `the script's double is the TypeScript's ${ctx}`);
        if (m.admitted) seen.admitted++;
        else {
          seen.refused++;
          if (rand(3) === 0) exact = { key, at: nextAdmissionMs(m.counter, limit, now) - rand(2) };
        }
        if ((m.retryAfter ?? 0) > 1) seen.retryOver1++;
        if (lastWindow.has(key) && lastWindow.get(key) !== m.counter.window) seen.rolls++;
        lastWindow.set(key, m.counter.window);
      }
      assert.deepEqual(await redis.get(key), mem.get(key), `stored counter after step ${i}`);
    }
    // The series must have exercised every branch for the comparison to mean something.
    for (const [what, n] of Object.entries(seen)) assert.ok(n >= 10, `the series has ${n} ${what}: ${JSON.stringify(seen)}`);
    console.log(`# series: ${JSON.stringify(seen)}`);
  });

  test("200 concurrent admits from two connections at a 60/min key admit exactly 60 (Redis TIME)", async () => {
    const a = limiter("two-conn:");
    const b = limiter("two-conn:");
    await Promise.all([a.ready(), b.ready()]);
    await awayFromWindowEnd();
    const ds = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).admit("org:burst", 60)));
    const windows = new Set(ds.map((d) => d.counter.window));
    assert.equal(windows.size, 1, "the burst fell in one window");
    const admitted = ds.filter((d) => d.admitted);
    assert.equal(admitted.length, 60);
    // Atomic: each admission saw a different count, so `remaining` runs through 59..0 exactly once.
    assert.deepEqual(admitted.map((d) => d.remaining).sort((x, y) => x - y), Array.from({ length: 60 }, (_, i) => i));
    for (const d of ds.filter((x) => !x.admitted)) {
      assert.equal(d.remaining, 0);
      assert.ok(d.retryAfter !== undefined && d.retryAfter >= 1);
    }
    assert.deepEqual(await a.get("org:burst"), { window: [...windows][0], prev: 0, curr: 60 });
  });

  test("200 concurrent admits from two child processes (two front ends) at a 60/min key admit exactly 60", { timeout: 60_000 }, async () => {
    const key = "org:two-processes";
    const children = [0, 1].map(() =>
      spawn(process.execPath, [__filename], {
        // NODE_TEST_CONTEXT would make the child talk node:test's protocol to its runner.
        env: {
          ...process.env,
          NODE_TEST_CONTEXT: undefined,
          SYNTHD_RL_CHILD: "1",
          SYNTHD_RL_PREFIX: `${prefix}two-proc:`,
          SYNTHD_RL_KEY: key,
          SYNTHD_RL_LIMIT: "60",
          SYNTHD_RL_N: "100",
        },
        stdio: ["pipe", "pipe", "inherit"],
      }),
    );
    const killAll = setTimeout(() => children.forEach((c) => c.kill()), 50_000);
    try {
      const lineReaders = children.map((c) => createInterface({ input: c.stdout! })[Symbol.asyncIterator]());
      const nextLine = async (i: number, startsWith: string): Promise<string> => {
        for (;;) {
          const { value, done } = await lineReaders[i].next();
          if (done) throw new Error(`child ${i} ended before printing "${startsWith}" (exit ${children[i].exitCode})`);
          if ((value as string).startsWith(startsWith)) return value as string;
        }
      };
      await Promise.all([0, 1].map((i) => nextLine(i, "ready")));
      await awayFromWindowEnd();
      for (const c of children) c.stdin!.write("go\n");
      const results = await Promise.all([0, 1].map((i) => nextLine(i, "result ")));
      const ds = results.flatMap((line) => JSON.parse(line.slice("result ".length)) as { a: boolean; r: number; w: number }[]);
      assert.equal(ds.length, 200);
      assert.equal(new Set(ds.map((d) => d.w)).size, 1, "the burst fell in one window");
      assert.equal(ds.filter((d) => d.a).length, 60);
      assert.deepEqual(ds.filter((d) => d.a).map((d) => d.r).sort((x, y) => x - y), Array.from({ length: 60 }, (_, i) => i));
      const perChild = results.map((line) => (JSON.parse(line.slice(7)) as { a: boolean }[]).filter((d) => d.a).length);
      assert.equal(perChild[0] + perChild[1], 60, `admitted per process: ${perChild.join(" + ")}`);
    } finally {
      clearTimeout(killAll);
      for (const c of children) if (c.exitCode === null) c.kill();
    }
  });

  test("window roll-over: 30 s into the next window the previous window counts half, 45 s in a quarter", async () => {
    const l = limiter("roll:");
    const W = 2_000_000;
    const start = W * WINDOW_MS;
    for (let i = 0; i < 60; i++) assert.equal((await l.admit("org:r", 60, start + 10_000)).admitted, true);
    const full = await l.admit("org:r", 60, start + 10_000);
    assert.equal(full.admitted, false);
    // 60 in window W: at 10 s into W+1, a request would make 60 * (1 - 1/6) + 1 = 51 <= 60, but the
    // first admission after the burst is when 60 * (1 - f) + 1 <= 60, f >= 1/60: 1 s into W+1.
    assert.equal(full.retryAfter, 51);
    assert.equal((await l.admit("org:r", 60, start + WINDOW_MS + 999)).admitted, false);

    // 30 s into W+1: estimate 60 * 0.5 = 30, so exactly 30 more are admitted.
    const t = start + WINDOW_MS + 30_000;
    let admitted = 0;
    let last: RateDecision | undefined;
    for (let i = 0; i < 40; i++) {
      const d = await l.admit("org:r", 60, t);
      if (d.admitted) {
        admitted++;
        assert.equal(d.estimate, 30 + admitted);
        assert.equal(d.remaining, 60 - (30 + admitted));
      } else last ??= d;
    }
    assert.equal(admitted, 30);
    assert.deepEqual(last!.counter, { window: W + 1, prev: 60, curr: 30 });
    // Next admission: 60 * (1 - f) + 30 + 1 <= 60  <=>  f >= 31/60, i.e. 31 s into W+1, 1 s from now.
    assert.equal(last!.retryAfter, 1);
    assert.equal(last!.reset, (start + 2 * WINDOW_MS) / 1000, "Reset is the end of the window when that is later");
    assert.equal((await l.admit("org:r", 60, start + WINDOW_MS + 30_999)).admitted, false);
    assert.equal((await l.admit("org:r", 60, start + WINDOW_MS + 31_000)).admitted, true);

    // 45 s into W+2: prev = 31 (W+1's count) weighted 0.25; W's 60 no longer count.
    const u = start + 2 * WINDOW_MS + 45_000;
    const d = await l.admit("org:r", 60, u);
    assert.deepEqual(d.counter, { window: W + 2, prev: 31, curr: 1 });
    assert.equal(d.estimate, 31 * 0.25 + 1);
    assert.equal(d.remaining, Math.floor(60 - (31 * 0.25 + 1)));
    // Two windows later nothing is left.
    const e = await l.admit("org:r", 60, start + 4 * WINDOW_MS);
    assert.deepEqual(e.counter, { window: W + 4, prev: 0, curr: 1 });
  });

  test("floating point: where the 1e-9 tolerances decide, the script decides as the TypeScript", async () => {
    // 15 in window W, then at 20 s into W+1 the estimate is 15 * (1 - 1/3) = 10.000000000000002 in
    // doubles: the 5th admission there (estimate 14.000000000000002 + 1 <= 15) and the `remaining`
    // of the ones before it hold only thanks to the tolerances.
    const l = limiter("float:");
    const mem = new RateLimiter();
    const start = 5_000_000 * WINDOW_MS;
    const times = [...Array<number>(15).fill(start), ...Array<number>(6).fill(start + WINDOW_MS + 20_000)];
    const ds: RateDecision[] = [];
    for (const t of times) {
      const d = await l.admit("org:f", 15, t);
      assert.deepEqual(fields(d), mem.admit("org:f", 15, t), `at ${t - start} ms`);
      ds.push(d);
    }
    assert.deepEqual(
      ds.slice(15).map((d) => [d.admitted, d.remaining]),
      [[true, 4], [true, 3], [true, 2], [true, 1], [true, 0], [false, 0]],
    );
  });

  test("refund gives back one slot, only while the counter is in the same window", async () => {
    const l = limiter("refund:");
    const start = 3_000_000 * WINDOW_MS;
    const ds: RateDecision[] = [];
    for (let i = 0; i < 3; i++) ds.push(await l.admit("addr:a", 3, start + 1000));
    assert.ok(ds.every((d) => d.admitted));
    assert.equal((await l.admit("addr:a", 3, start + 1000)).admitted, false);
    assert.equal(await l.refund("addr:a", ds[2].counter.window), true);
    assert.deepEqual(await l.get("addr:a"), { window: 3_000_000, prev: 0, curr: 2 });
    assert.equal((await l.admit("addr:a", 3, start + 2000)).admitted, true, "the refunded slot is usable");
    assert.equal((await l.admit("addr:a", 3, start + 2000)).admitted, false, "only one slot came back");
    assert.equal(await l.refund("addr:a", 3_000_000 - 1), false, "another window: no-op");
    assert.deepEqual(await l.get("addr:a"), { window: 3_000_000, prev: 0, curr: 3 });
    // Once the counter has rolled to the next window, refunds for the old window do nothing.
    const next = await l.admit("addr:a", 3, start + WINDOW_MS + 59_000);
    assert.deepEqual(next.counter, { window: 3_000_001, prev: 3, curr: 1 });
    assert.equal(await l.refund("addr:a", 3_000_000), false);
    assert.deepEqual(await l.get("addr:a"), { window: 3_000_001, prev: 3, curr: 1 });
    // Never below zero, and nothing for a key that does not exist.
    assert.equal(await l.refund("addr:a", 3_000_001), true);
    assert.equal(await l.refund("addr:a", 3_000_001), false);
    assert.deepEqual(await l.get("addr:a"), { window: 3_000_001, prev: 3, curr: 0 });
    assert.equal(await l.refund("addr:none", 3_000_001), false);
    assert.equal(await l.get("addr:none"), undefined);
  });

  test("every write sets a TTL of two windows; the key layout is <prefix>rl:<key>", async () => {
    const l = limiter("ttl:");
    const d = await l.admit("org:t", 5);
    const key = `${prefix}ttl:rl:org:t`;
    assert.equal(l.redisKey("org:t"), key);
    assert.deepEqual(await admin.hgetall(key), { w: String(d.counter.window), p: "0", c: "1" });
    const ttl = await admin.pttl(key);
    assert.ok(ttl > WINDOW_MS && ttl <= 2 * WINDOW_MS, `PTTL ${ttl} ms is within (1, 2] windows`);
    await admin.pexpire(key, 5000);
    await l.admit("org:t", 5);
    const again = await admin.pttl(key);
    assert.ok(again > WINDOW_MS && again <= 2 * WINDOW_MS, `an admission sets it again: PTTL ${again} ms`);
    // An expired key is a fresh counter (it expires only once it no longer counts: module comment).
    await admin.del(key);
    assert.deepEqual((await l.admit("org:t", 5)).counter.curr, 1);
  });

  test("Redis unreachable (port 1): RateLimiterUnavailableError within the bound, no hang", async () => {
    const l = limiter("down:", { redis: { host: "127.0.0.1", port: 1 }, commandTimeoutMs: 1000, unavailableRetryAfterSeconds: 2 });
    for (const call of [() => l.admit("org:x", 60), () => l.refund("org:x", 1), () => l.admit("org:x", 60, 1_000_000 * WINDOW_MS)]) {
      const t0 = Date.now();
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(err instanceof RateLimiterUnavailableError, String(err));
        assert.equal(err.reason, "disconnected");
        assert.equal(err.retryAfterSeconds, 2);
        assert.match(err.message, /127\.0\.0\.1:1/);
        return true;
      });
      assert.ok(Date.now() - t0 < 5000, `failed in ${Date.now() - t0} ms`);
    }
    await new Promise((r) => setTimeout(r, 300)); // after the refused connection, while reconnecting
    const t0 = Date.now();
    await assert.rejects(l.admit("org:x", 60), RateLimiterUnavailableError);
    await assert.rejects(l.ready(500), RateLimiterUnavailableError);
    assert.ok(Date.now() - t0 < 5000);
  });

  test("a Redis that stops answering: RateLimiterUnavailableError (timeout) after the command timeout", async () => {
    // A TCP relay to the real Redis that can be frozen: bytes in either direction are then dropped,
    // as on a dead network path (the connection stays open, so only the command timeout can help).
    let frozen = false;
    const sockets: net.Socket[] = [];
    const relay = net.createServer((client) => {
      const upstream = net.connect(PORT, HOST);
      sockets.push(client, upstream);
      client.on("data", (b) => frozen || upstream.write(b));
      upstream.on("data", (b) => frozen || client.write(b));
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
    const port = (relay.address() as net.AddressInfo).port;
    try {
      const l = limiter("hang:", { redis: { host: "127.0.0.1", port }, commandTimeoutMs: 1000 });
      await l.ready();
      const ok = await l.admit("org:h", 60);
      assert.equal(ok.admitted, true);
      frozen = true;
      const t0 = Date.now();
      await assert.rejects(l.admit("org:h", 60), (err: unknown) => {
        assert.ok(err instanceof RateLimiterUnavailableError, String(err));
        assert.equal(err.reason, "timeout");
        assert.equal(err.retryAfterSeconds, 1);
        return true;
      });
      assert.ok(Date.now() - t0 < 5000, `failed in ${Date.now() - t0} ms`);
      // The command never reached Redis: the count is still the one admission.
      const direct = limiter("hang:");
      assert.equal((await direct.get("org:h"))!.curr, 1);
      await l.close();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => relay.close(r));
    }
  });

  test("failed authentications per address, in a namespace of their own, decide as in memory", async () => {
    // Count every request of an address up front and refund it when the key turns out valid: the
    // two limiters agree on admissions and refunds. (The server no longer does this, it counts a
    // failed authentication only once the key is known bad, but `refund` keeps its contract.)
    const addrRedis = limiter("auth:");
    const orgRedis = limiter("org:");
    const mem = new RateLimiter();
    const start = 4_000_000 * WINDOW_MS;
    const key = "addr:203.0.113.7";
    const limit = DEFAULT_AUTH_FAILURE_LIMIT;
    let refused = 0;
    for (let i = 0; i < 150; i++) {
      const now = start + 100 * i;
      const validKey = i % 3 === 0;
      const m = mem.admit(key, limit, now);
      const d = await addrRedis.admit(key, limit, now);
      assert.deepEqual(fields(d), m, `request ${i}`);
      if (!d.admitted) {
        refused++;
        continue;
      }
      if (validKey) {
        mem.refund(key, m.counter.window);
        assert.equal(await addrRedis.refund(key, d.counter.window), true);
      }
    }
    // 60 failures fit the budget; the valid requests among the first ones were given back.
    assert.deepEqual(await addrRedis.get(key), mem.get(key));
    assert.equal((await addrRedis.get(key))!.curr, limit);
    assert.ok(refused > 0);
    // The org namespace knows nothing of it, and its own budget for the same key is untouched.
    assert.equal(await orgRedis.get(key), undefined);
    assert.equal((await orgRedis.admit(key, limit, start)).remaining, limit - 1);
  });
}
