/**
 * The HTTP/1.0 listener in its own process (src/server/http10Process.ts), in front of a stub main
 * listener: it forwards, its log lines reach the server's logger, it is started again on the same
 * port when it dies, `close` waits for its exit, and a port it cannot bind is an error.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import type { Http10Listener } from "../src/server/http10";
import { spawnHttp10Listener } from "../src/server/http10Process";

/** Sends `text` on a new connection to `port`; what came back once the server closed it (or after 10 s). */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    let got = "";
    const timer = setTimeout(() => s.destroy(), 10_000);
    s.on("connect", () => s.write(text));
    s.on("data", (d: Buffer) => (got += d.toString("latin1")));
    s.on("error", () => undefined);
    s.on("close", () => {
      clearTimeout(timer);
      resolve(got);
    });
  });
}

/** Process ids of this process's children (the listener's process is the only one). */
function childPids(): number[] {
  return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

async function poll<T>(what: string, f: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("the HTTP/1.0 listener's process forwards, logs through the server's logger, comes back when killed, and exits on close", async () => {
  const upstream = http.createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ object: "list", secret_seen: req.headers["x-synthd-http10-secret"] === "s3cret" }));
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  let h10: Http10Listener | undefined;
  try {
    h10 = await spawnHttp10Listener({
      host: "127.0.0.1",
      port: 0,
      upstream: { host: "127.0.0.1", port: (upstream.address() as net.AddressInfo).port },
      secret: "s3cret",
      docsUrl: "http://synthd",
      logger: pino({ level: "info" }, sink),
      maxBodyBytes: 1024,
    });
    const [pid] = childPids();
    assert.ok(pid !== undefined && pid !== process.pid, "a process of its own");

    const ok = await exchange(h10.port, "GET /v1/models HTTP/1.0\r\n\r\n");
    assert.match(ok, /^HTTP\/1\.[01] 200 /);
    assert.match(ok, /"secret_seen":true/, "forwarded with the server's secret");

    // The listener's own answer is logged by the server's logger, with its fields and level.
    assert.match(await exchange(h10.port, "NOT A REQUEST\r\n\r\n"), /^HTTP\/1\.[01] 400 /);
    const logged = await poll("the listener's request line", () => lines.find((l) => l.listener === "http10" && l.status === 400));
    assert.equal(logged.level, 30);
    assert.equal(logged.msg, "request");
    assert.ok(!JSON.stringify(lines).includes("s3cret"), "the secret is never logged");

    process.kill(pid, "SIGKILL");
    await poll("the death to be logged", () => lines.find((l) => l.listener === "http10" && l.level === 50));
    const port = h10.port;
    await poll("the listener back on its port", async () => ((await exchange(port, "GET /v1/models HTTP/1.0\r\n\r\n")).startsWith("HTTP/1.1 200 ") ? true : undefined));
    const [again] = childPids();
    assert.ok(again !== undefined && again !== pid);

    await h10.close(1_000);
    assert.deepEqual(childPids(), [], "the process has exited when close resolves");
    const refused = await new Promise<string>((resolve) => {
      const c = net.connect(port, "127.0.0.1");
      c.on("connect", () => (c.destroy(), resolve("connected")));
      c.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    });
    assert.equal(refused, "ECONNREFUSED");
  } finally {
    await h10?.close(100);
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  }
});

test("a port the HTTP/1.0 listener's process cannot bind rejects the start, and no process is left", async () => {
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  try {
    await assert.rejects(
      spawnHttp10Listener({
        host: "127.0.0.1",
        port: (taken.address() as net.AddressInfo).port,
        upstream: { host: "127.0.0.1", port: 9 },
        secret: "s",
        docsUrl: "http://synthd",
        logger: pino({ level: "silent" }),
        maxBodyBytes: 1024,
      }),
      /EADDRINUSE|cannot listen|address/i,
    );
    await poll("the child to exit", () => (childPids().length === 0 ? true : undefined), 5_000);
  } finally {
    await new Promise((r) => taken.close(r));
  }
});
