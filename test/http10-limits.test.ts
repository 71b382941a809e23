/**
 * The HTTP/1.0 listener's timeouts and connection cap (src/server/http10.ts `Http10Limits`,
 * docs/operations.md "HTTP edges"), with small limits so that nothing waits long, in front of a
 * stub main listener (a Node `http` server answering 200):
 * - a connection that sends nothing, and one that sends its header section a byte at a time
 *   (slowloris), are closed;
 * - with the cap reached, a new request takes the place of the oldest connection without a
 *   request in progress; when every place has one, a new connection is closed at once without an
 *   answer; the main listener still answers;
 * - the defaults let forwarded requests hold at most a twelfth of the server's descriptors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import pino from "pino";
import { defaultHttp10Limits, startHttp10Listener, type Http10Listener } from "../src/server/http10";

/** A connection to `port` and what becomes of it: its bytes, and when it closed. */
function watch(port: number): { socket: net.Socket; closed: Promise<{ text: string; ms: number }> } {
  const t0 = performance.now();
  const socket = net.connect(port, "127.0.0.1");
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
  socket.on("error", () => undefined);
  const closed = new Promise<{ text: string; ms: number }>((resolve) => socket.on("close", () => resolve({ text, ms: performance.now() - t0 })));
  return { socket, closed };
}

/** Resolves to `p`'s value, or rejects when `ms` passes first (a bound, so that a failure cannot hang the runner). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A GET /v1/models over HTTP/1.0 on a new connection to `port`; the status line. */
async function get10(port: number): Promise<string> {
  const c = watch(port);
  c.socket.on("connect", () => c.socket.write("GET /v1/models HTTP/1.0\r\n\r\n"));
  const { text } = await within(c.closed, 10_000, "an answer");
  return text.split("\r\n")[0];
}

async function withListener(
  limits: Parameters<typeof startHttp10Listener>[0]["limits"],
  body: (h10: Http10Listener, upstreamPort: number, release: () => void, holding: () => number) => Promise<void>,
): Promise<void> {
  // Answers 200 at once, `/hold` once `release` is called.
  let held: (() => void)[] = [];
  let released = false;
  const release = (): void => {
    released = true;
    for (const f of held) f();
    held = [];
  };
  const upstream = http.createServer((req, res) => {
    const answer = (): void => {
      res.writeHead(200, { "Content-Type": "application/json", "X-Request-Id": "req_000000000000000000000000" });
      res.end('{"object":"list","data":[]}');
    };
    if (req.url === "/hold" && !released) held.push(answer);
    else answer();
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const upstreamPort = (upstream.address() as net.AddressInfo).port;
  const h10 = await startHttp10Listener({
    host: "127.0.0.1",
    port: 0,
    upstream: { host: "127.0.0.1", port: upstreamPort },
    secret: "s",
    docsUrl: "http://synthd",
    logger: pino({ level: "silent" }),
    maxBodyBytes: 1024,
    limits,
  });
  try {
    await body(h10, upstreamPort, release, () => held.length);
  } finally {
    await h10.close(100);
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  }
}

test("--http10-port closes a connection that sends nothing and one that trickles its header section", async () => {
  await withListener({ idleTimeoutMs: 300, headersTimeoutMs: 300, checkIntervalMs: 50 }, async (h10) => {
    const idle = watch(h10.port);
    const slow = watch(h10.port);
    // One header byte every 100 ms: never idle for the idle timeout, so only the header timeout ends it.
    const request = "GET /v1/models HTTP/1.1\r\nHost: synthd\r\nX-Slow: " + "a".repeat(200);
    let i = 0;
    const trickle = setInterval(() => {
      if (!slow.socket.destroyed && i < request.length) slow.socket.write(request[i++]);
    }, 100);
    try {
      const [a, b] = await within(Promise.all([idle.closed, slow.closed]), 10_000, "both connections closed");
      // Idle and header timeouts are equal, as by default: whichever Node checks first closes it
      // (nothing sent back, or an empty 408), so either answer, never a request's.
      assert.match(a.text, /^(HTTP\/1\.1 408 |$)/, a.text);
      assert.match(b.text, /^(HTTP\/1\.1 408 |$)/, b.text);
      assert.ok(i < request.length, "the slow header section was cut off before it ended");
    } finally {
      clearInterval(trickle);
      idle.socket.destroy();
      slow.socket.destroy();
    }
    // The listener still answers.
    assert.match(await get10(h10.port), /^HTTP\/1\.1 200 /);
  });
});

test("--http10-port's connection cap: a new request takes the place of the oldest idle connection; with every place busy it is closed at once; the main listener still answers", async () => {
  await withListener({ maxConnections: 3, idleTimeoutMs: 60_000, headersTimeoutMs: 60_000 }, async (h10, upstreamPort, release, holding) => {
    const held = [watch(h10.port), watch(h10.port), watch(h10.port)];
    const busy: ReturnType<typeof watch>[] = [];
    try {
      await Promise.all(held.map((c) => new Promise((r) => c.socket.once("connect", r))));
      held[1].socket.write("GET /v1/mod"); // half a request line: no request in progress either
      // A fourth connection with a request: served; the oldest idle connection was closed for it.
      assert.match(await get10(h10.port), /^HTTP\/1\.1 200 /);
      assert.equal((await within(held[0].closed, 10_000, "the oldest idle connection closed")).text, "");
      // Three requests the main listener holds: every place is busy (the idle ones made room).
      for (let i = 0; i < 3; i++) {
        const c = watch(h10.port);
        c.socket.on("connect", () => c.socket.write("GET /hold HTTP/1.0\r\n\r\n"));
        busy.push(c);
      }
      await within(Promise.all([held[1].closed, held[2].closed]), 10_000, "the other idle connections closed");
      for (const end = Date.now() + 10_000; holding() < 3; ) {
        assert.ok(Date.now() < end, "the three requests reach the main listener");
        await new Promise((r) => setTimeout(r, 10));
      }
      const refused = await within(get10(h10.port), 10_000, "a connection over the cap closed");
      assert.equal(refused, "", "closed without an answer");
      // The main listener is not affected.
      assert.equal((await fetch(`http://127.0.0.1:${upstreamPort}/v1/models`)).status, 200);
      release();
      for (const c of busy) assert.match((await within(c.closed, 10_000, "the held requests answered")).text, /^HTTP\/1\.1 200 /);
      assert.match(await get10(h10.port), /^HTTP\/1\.1 200 /);
    } finally {
      release();
      for (const c of [...held, ...busy]) c.socket.destroy();
    }
  });
});

test("the default limits: forwarded requests hold at most a twelfth of the server's descriptors", () => {
  for (const fds of [1024, 20_000, 1_048_576]) {
    const l = defaultHttp10Limits(fds);
    assert.ok(l.maxConnections <= fds / 12 || l.maxConnections === 64, `${fds}: ${l.maxConnections}`);
    assert.ok(l.maxConnections >= 64);
  }
  assert.equal(defaultHttp10Limits(20_000).maxConnections, 1666);
  const l = defaultHttp10Limits(20_000);
  assert.deepEqual([l.headersTimeoutMs, l.idleTimeoutMs, l.keepAliveTimeoutMs], [10_000, 10_000, 5_000]);
});
