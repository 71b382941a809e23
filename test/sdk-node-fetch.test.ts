/**
 * `src/sdk/client/node-fetch.ts`: the client on `nodeFetch` sends and reads what it sends and reads on
 * Node's fetch (the method, headers, JSON body with its length; the status, headers, bytes), and
 * fails the same way (connection refused, unknown scheme, timeout, the caller's abort).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Synthd } from "../src/sdk/client/client";
import { nodeFetch } from "../src/sdk/client/node-fetch";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A server that answers every request by its path (`/stall`: never; `/binary`: bytes; else JSON echo). */
async function serve(): Promise<{ url: string; seen: Seen[]; close: () => void }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url!.startsWith("/stall")) return;
      if (req.url!.startsWith("/binary")) {
        res.writeHead(200, { "Content-Type": "application/vnd.apache.arrow.stream", "X-Request-Id": "req_bin" });
        res.end(Buffer.from([0, 1, 2, 250, 255]));
        return;
      }
      res.writeHead(req.url!.startsWith("/missing") ? 404 : 200, { "Content-Type": "application/json", "X-Request-Id": "req_1", "X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59" });
      res.end(JSON.stringify(req.url!.startsWith("/missing") ? { error: { type: "invalid_request_error", code: "model_not_found", message: "No such model." } } : { echo: body, é: "ü" }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const clients = (baseUrl: string, opts: { timeoutMs?: number } = {}): [string, Synthd][] => [
  ["fetch", new Synthd({ apiKey: "svc_test_k", baseUrl, maxRetries: 0, ...opts })],
  ["nodeFetch", new Synthd({ apiKey: "svc_test_k", baseUrl, maxRetries: 0, fetch: nodeFetch, ...opts })],
];

test("the same requests sent and the same responses read as with fetch", async () => {
  const s = await serve();
  try {
    const results = [];
    for (const [name, c] of clients(s.url)) {
      const before = s.seen.length;
      const post = await c.request<unknown>({ method: "POST", path: "/v1/echo", body: { a: "é", n: 1 }, idempotencyKey: "k1" });
      const get = await c.request<unknown>({ method: "GET", path: "/v1/echo", query: { limit: 2 } });
      const bin = await c.request<Uint8Array>({ method: "POST", path: "/binary", body: {}, accept: "application/vnd.apache.arrow.stream", binaryType: "application/vnd.apache.arrow.stream" });
      const missing = (await c.request({ method: "GET", path: "/missing" }).catch((e: unknown) => e)) as { code?: string; status?: number; requestId?: string };
      const [p, g] = s.seen.slice(before);
      results.push({
        name,
        sent: [p, g].map((x) => ({ method: x.method, url: x.url, body: x.body, length: x.headers["content-length"], type: x.headers["content-type"], auth: x.headers.authorization, key: x.headers["idempotency-key"], accept: x.headers.accept })),
        read: { post: post.body, get: get.body, requestId: post.requestId, status: get.status, rate: c.lastRateLimit, bin: Array.from(bin.body), missing: [missing.code, missing.status, missing.requestId] },
      });
    }
    assert.deepEqual(results[1].sent, results[0].sent);
    assert.deepEqual(results[1].read, results[0].read);
    assert.equal(results[1].sent[0].length, String(Buffer.byteLength('{"a":"é","n":1}')));
    assert.deepEqual(results[1].read.bin, [0, 1, 2, 250, 255]);
  } finally {
    s.close();
  }
});

test("the same failures: connection refused, unknown scheme, timeout, the caller's abort", async () => {
  const s = await serve();
  const closed = await serve();
  closed.close();
  try {
    const failures = [];
    for (const [name, c] of clients(closed.url)) {
      const e = (await c.request({ method: "GET", path: "/v1/x" }).catch((x: unknown) => x)) as Error & { code?: string };
      failures.push([name, "refused", e.constructor.name, e.code, e.message]);
    }
    for (const [name, c] of clients("ftp://127.0.0.1:1")) {
      const e = (await c.request({ method: "GET", path: "/v1/x" }).catch((x: unknown) => x)) as Error & { code?: string };
      failures.push([name, "scheme", e.constructor.name, e.code, e.message]);
    }
    for (const [name, c] of clients(s.url, { timeoutMs: 200 })) {
      const e = (await c.request({ method: "GET", path: "/stall" }).catch((x: unknown) => x)) as Error & { code?: string };
      failures.push([name, "timeout", e.constructor.name, e.code, e.message]);
    }
    for (const [name, c] of clients(s.url)) {
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error("stopped by the caller")), 50);
      const e = (await c.request({ method: "POST", path: "/stall", body: {}, signal: ac.signal }).catch((x: unknown) => x)) as Error;
      failures.push([name, "abort", e.constructor.name, undefined, e.message]);
    }
    const [viaFetch, viaNode] = [failures.filter((f) => f[0] === "fetch"), failures.filter((f) => f[0] === "nodeFetch")];
    assert.deepEqual(viaNode.map((f) => f.slice(1)), viaFetch.map((f) => f.slice(1)));
    assert.match(String(viaNode[0][4]), /Could not reach the synthd server at .* \(connect ECONNREFUSED /);
  } finally {
    s.close();
  }
});

test("bytes: a body of known length is read into the caller's memory; one longer, shorter or without a length is handled", async () => {
  const server = createServer((req, res) => {
    const body = Buffer.from("0123456789".repeat(50_000)); // several socket reads
    if (req.url === "/short") {
      res.writeHead(200, { "content-length": String(body.length + 10) });
      res.write(body);
      res.socket?.destroy(); // ends before its Content-Length
      return;
    }
    if (req.url === "/chunked") {
      res.writeHead(200, { "transfer-encoding": "chunked" });
      res.end(body);
      return;
    }
    res.writeHead(200, { "content-length": String(body.length) });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const expected = Buffer.from("0123456789".repeat(50_000));
    const memory = new Uint8Array(expected.length + 100);
    const asked: number[] = [];
    const into = (size: number): Uint8Array => {
      asked.push(size);
      return memory;
    };
    const res = (await nodeFetch(`${url}/whole`)) as unknown as { bytes(into: (n: number) => Uint8Array): Promise<Uint8Array> };
    const got = await res.bytes(into);
    assert.deepEqual(asked, [expected.length], "asked once, for the Content-Length");
    assert.equal(got.buffer, memory.buffer, "the caller's memory");
    assert.ok(Buffer.from(got).equals(expected));

    const chunked = (await nodeFetch(`${url}/chunked`)) as unknown as { bytes(into: (n: number) => Uint8Array): Promise<Uint8Array> };
    const all = await chunked.bytes(into);
    assert.equal(asked.length, 1, "no length: the caller's memory is not asked for");
    assert.ok(Buffer.from(all).equals(expected));

    await assert.rejects(async () => {
      const short = (await nodeFetch(`${url}/short`)) as unknown as { bytes(into: (n: number) => Uint8Array): Promise<Uint8Array> };
      await short.bytes(() => new Uint8Array(expected.length + 10));
    }, "a body cut short fails, never a view of bytes that were not sent");
  } finally {
    server.close();
  }
});
