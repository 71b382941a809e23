/**
 * The HTTP/1.0 listener (`synthd serve --http10-port`, src/server/http10.ts) on a real
 * `synthd serve` process spoken to with raw `net.Socket` writes (docs/operations.md "HTTP edges"):
 * - HTTP/1.0 requests (no Host, GET and POST with a body) are answered by synthd with a
 *   `Content-Length` body, never chunked, and the connection is closed after; HTTP/1.0 with
 *   `Connection: keep-alive` and HTTP/1.1 keep-alive connections carry several requests; a chunked
 *   HTTP/1.1 upload arrives; a Generate through it is billed its rows and logged like any other;
 * - what Node's parser refuses there (malformed request lines, a TLS ClientHello, NUL, control
 *   characters and obs-fold in headers) and targets that are not a path (absolute-form, `*`) get
 *   400 in the contract's error envelope, over-long header sections 431, with `Connection:
 *   close`; the main port answers as before (http-edges.test.ts pins uWS's answers);
 * - the main port's answers pass through as they are: a 70 MB body's 413 (the main port answers
 *   it and closes while the body is still coming), and a request whose body never comes after
 *   `Expect: 100-continue` is closed without a 503;
 * - the failed-login budget (issue 28 item 4) counts the client's own address through the
 *   listener, and no one can claim an address with the listener's headers: sent to the main port,
 *   or to the listener itself, they are ignored;
 * - SIGTERM: a request in flight on the listener is answered, new connections are refused, and the
 *   process exits 0;
 * - idle connections that take every descriptor of the server's process do not stop the listener
 *   (a process of its own) from accepting and forwarding.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { LmdbStore as Store } from "../../src/store";
import { monthOf } from "../../src/usage/quota";
import { removeDir, startServer, tempDir, waitFor, type ServerProcess } from "../../bench/harness";
import { validCreateBody } from "../server-helpers";
import { exchange, type RawResult } from "./raw-http";

/** One parsed HTTP response: status line, headers (lower-case names, repeated ones joined), body. */
interface Parsed {
  statusLine: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses the response at the start of `text` (a `Content-Length` body, or everything after the head). */
function parse(text: string): Parsed & { rest: string } {
  const end = text.indexOf("\r\n\r\n");
  assert.ok(end >= 0, `no response head in ${JSON.stringify(text.slice(0, 300))}`);
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const colon = l.indexOf(":");
    const k = l.slice(0, colon).toLowerCase();
    const v = l.slice(colon + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  const after = text.slice(end + 4);
  const length = headers["content-length"];
  const body = length === undefined ? after : after.slice(0, Number(length));
  return { statusLine, status: Number(statusLine.slice(9, 12)), headers, body, rest: after.slice(body.length) };
}

/**
 * Asserts `r` is one whole response to an HTTP/1.0 request: an HTTP/1.x status line, a
 * `Content-Length` that matches the body, no chunking, and the connection closed after it.
 */
function assertHttp10Answer(r: RawResult, status: number): Parsed {
  const p = parse(r.text);
  assert.match(p.statusLine, new RegExp(`^HTTP/1\\.[01] ${status} `), p.statusLine);
  assert.equal(p.headers["transfer-encoding"], undefined, "never chunked to an HTTP/1.0 client");
  assert.ok(p.headers["content-length"] !== undefined, "a Content-Length body");
  assert.equal(Buffer.byteLength(p.body, "latin1"), Number(p.headers["content-length"]));
  assert.equal(p.rest, "", "nothing after the body");
  assert.equal(r.closedByServer, true, "the connection is closed after the answer");
  return p;
}

/** HTTP/1.0 request text: `GET`/`POST` with optional key, JSON body and extra header lines. */
function http10(method: string, path: string, o: { key?: string; body?: unknown; lines?: string[] } = {}): string {
  const body = o.body === undefined ? "" : JSON.stringify(o.body);
  const lines = [`${method} ${path} HTTP/1.0`, ...(o.key === undefined ? [] : [`Authorization: Bearer ${o.key}`]), ...(o.lines ?? [])];
  if (o.body !== undefined) lines.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

/**
 * Sends `requests` one after the other on one connection (the next once the previous answer is
 * complete); resolves to the answers, and whether the connection was still open after the last.
 */
function sequential(url: string, requests: string[]): Promise<{ answers: Parsed[]; openAfter: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname);
    const answers: Parsed[] = [];
    const queue = [...requests];
    let buf = "";
    let closed = false;
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`only ${answers.length} of ${requests.length} answers; pending ${JSON.stringify(buf.slice(0, 200))}`));
    }, 30_000);
    s.on("error", () => undefined);
    s.on("close", () => {
      closed = true;
      if (answers.length < requests.length) {
        clearTimeout(timer);
        reject(new Error(`connection closed after ${answers.length} of ${requests.length} answers`));
      }
    });
    s.on("connect", () => s.write(queue.shift()!));
    s.on("data", (d: Buffer) => {
      buf += d.toString("latin1");
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = /\r\ncontent-length: (\d+)/i.exec(buf.slice(0, end));
      if (length === null || buf.length < end + 4 + Number(length[1])) return;
      const p = parse(buf);
      answers.push(p);
      buf = p.rest;
      const next = queue.shift();
      if (next !== undefined) return void s.write(next);
      clearTimeout(timer);
      const openAfter = !closed;
      s.destroy();
      resolve({ answers, openAfter });
    });
  });
}

/** The error envelope of a response this listener wrote itself, checked against the contract. */
function assertEnvelope(p: Parsed, status: number, code: string, param: string | undefined): void {
  assert.equal(p.status, status, p.statusLine);
  assert.equal(p.headers["content-type"], "application/json");
  assert.equal(p.headers["connection"], "close");
  const json = JSON.parse(p.body);
  assert.equal(json.error.code, code, p.body);
  assert.equal(json.error.type, "invalid_request_error");
  assert.equal(json.error.param, param);
  assert.match(json.error.doc_url, new RegExp(`/docs/errors#${code}$`));
  assert.match(json.request_id, /^req_[A-Za-z0-9]{24}$/);
  assert.equal(p.headers["x-request-id"], json.request_id);
}

/** A server with the HTTP/1.0 listener on a fresh store, and a live key with a large quota. */
async function http10Server(extraArgs: string[] = []): Promise<{
  server: ServerProcess;
  h10: string;
  dir: string;
  apiKey: string;
  usage: () => Promise<number>;
}> {
  const dir = tempDir();
  const storeDir = join(dir, "store");
  const setup = new Store(storeDir);
  const apiKey = await setup.createKey("h10", "live");
  await setup.setOrgLimits("h10", { live_quota: 1_000_000_000 });
  await setup.close();
  const server = await startServer(storeDir, ["--workers", "1", "--http10-port", "0", ...extraArgs]);
  const h10 = /synthd HTTP\/1\.0 listener on (http:\/\/\S+)/.exec(server.stdout())?.[1];
  assert.ok(h10 !== undefined, `no HTTP/1.0 listener line in ${server.stdout()}`);
  const usage = async (): Promise<number> => {
    const s = new Store(storeDir);
    try {
      return await s.getUsage("h10", "live", monthOf(Date.now()));
    } finally {
      await s.close();
    }
  };
  return { server, h10, dir, apiKey, usage };
}

test("HTTP/1.0 on --http10-port: answered by synthd with a Content-Length body and the connection closed; keep-alive when asked; billed and logged as on the main port", async () => {
  const { server, h10, dir, apiKey, usage } = await http10Server();
  try {
    // No Host (HTTP/1.0 needs none), no key: the public error docs.
    const docs = assertHttp10Answer(await exchange(h10, ["GET /docs/errors HTTP/1.0\r\n\r\n"], 10_000), 200);
    assert.match(docs.body, /parameter_invalid/);
    // An authenticated GET, and the same without a key: the contract's answers.
    const list = assertHttp10Answer(await exchange(h10, [http10("GET", "/v1/models", { key: apiKey })], 10_000), 200);
    assert.equal(JSON.parse(list.body).object, "list");
    assert.equal(list.headers["x-ratelimit-limit"], "1000000", "the org's rate limit applied");
    const missing = assertHttp10Answer(await exchange(h10, [http10("GET", "/v1/models")], 10_000), 401);
    assert.equal(JSON.parse(missing.body).error.code, "api_key_missing");
    // The same request on the main port: uWS's own 505, as before (http-edges.test.ts).
    assert.match((await exchange(server.url, [http10("GET", "/v1/models", { key: apiKey })], 5_000)).text, /^HTTP\/1\.1 505 /);

    // POST with a body: create a model, then generate from it.
    const created = assertHttp10Answer(
      await exchange(h10, [http10("POST", "/v1/models", { key: apiKey, body: { ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } } })], 30_000),
      201,
    );
    const id: string = JSON.parse(created.body).data.id;
    await waitFor("the model to finish training", async () => {
      const r = await fetch(`${server.url}/v1/models/${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
      const m = ((await r.json()) as any).data;
      return m.status === "ready" ? m : undefined;
    }, 120_000, 250);
    const gen = assertHttp10Answer(
      await exchange(h10, [http10("POST", `/v1/models/${id}/generate`, { key: apiKey, body: { embedding: { num_rows: 20_000, seed: 3 } } })], 60_000),
      200,
    );
    assert.equal(JSON.parse(gen.body).data.num_rows, 20_000);
    const line = await waitFor("the generate request logged", async () =>
      server
        .stderr()
        .split("\n")
        .filter((l) => l.includes('"msg":"request"') && l.includes('"/v1/models/:model_id/generate"'))
        .map((l) => JSON.parse(l))[0],
    30_000, 50);
    assert.equal(line.status, 200);
    assert.equal(line.req_id, gen.headers["x-request-id"], "the main listener's request, logged there");
    assert.equal(await usage(), 20_000, "the rows delivered through the HTTP/1.0 port are billed");
    assert.doesNotMatch(server.stderr(), /x-synthd-http10-secret/i, "the listener's secret never reaches the log");

    // HTTP/1.0 with Connection: keep-alive, and HTTP/1.1 (keep-alive by default): several
    // requests on one connection, which stays open.
    const get10 = http10("GET", "/v1/models", { key: apiKey, lines: ["Connection: keep-alive"] });
    const ka10 = await sequential(h10, [get10, get10, get10]);
    assert.deepEqual(ka10.answers.map((a) => a.status), [200, 200, 200]);
    assert.equal(ka10.openAfter, true);
    const get11 = `GET /v1/models HTTP/1.1\r\nHost: synthd\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`;
    const chunked =
      `POST /v1/models HTTP/1.1\r\nHost: synthd\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n` +
      (() => {
        const b = JSON.stringify({ ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } });
        const half = Math.floor(b.length / 2);
        return `${half.toString(16)}\r\n${b.slice(0, half)}\r\n${(b.length - half).toString(16)}\r\n${b.slice(half)}\r\n0\r\n\r\n`;
      })();
    const ka11 = await sequential(h10, [get11, chunked, get11]);
    assert.deepEqual(ka11.answers.map((a) => a.status), [200, 201, 200], ka11.answers.map((a) => a.body).join("\n"));
    assert.match(ka11.answers[0].statusLine, /^HTTP\/1\.1 200 /);
    assert.equal(JSON.parse(ka11.answers[2].body).data.length, 2, "the chunked upload made the second model");
    assert.equal(ka11.openAfter, true);
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

test("malformed requests on --http10-port get 400 (431 for an over-long head) in the contract's error envelope with Connection: close", async () => {
  const { server, h10, dir } = await http10Server();
  try {
    const clientHello = Buffer.from("16030100f4010000f00303" + "00".repeat(32) + "20" + "11".repeat(32) + "0002130101000095", "hex");
    const cases: Record<string, { send: string | Buffer; status: number; code: string; param: string | undefined }> = {
      garbage: { send: "GARBAGE\r\n\r\n", status: 400, code: "parameter_invalid", param: undefined },
      lowercaseVersion: { send: "GET /v1/models http/1.1\r\nHost: synthd\r\n\r\n", status: 400, code: "parameter_invalid", param: undefined },
      tls: { send: clientHello, status: 400, code: "parameter_invalid", param: undefined },
      nul: { send: "GET /v1/models HTTP/1.0\r\nX-A: a\0b\r\n\r\n", status: 400, code: "parameter_invalid", param: "headers" },
      obsFold: { send: "GET /v1/models HTTP/1.0\r\nX-A: a\r\n b\r\n\r\n", status: 400, code: "parameter_invalid", param: "headers" },
      control: { send: "GET /v1/models HTTP/1.1\r\nHost: synthd\r\nX-A: a\u0001b\r\n\r\n", status: 400, code: "parameter_invalid", param: "headers" },
      spaceColon: { send: "GET /v1/models HTTP/1.1\r\nHost : synthd\r\n\r\n", status: 400, code: "parameter_invalid", param: "headers" },
      twoLengths: {
        send: "POST /v1/models HTTP/1.0\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        status: 400,
        code: "parameter_invalid",
        param: "headers.content-length",
      },
      teGzip: {
        send: "POST /v1/models HTTP/1.1\r\nHost: synthd\r\nTransfer-Encoding: gzip\r\n\r\n",
        status: 400,
        code: "parameter_invalid",
        param: "headers.transfer-encoding",
      },
      absoluteForm: { send: "GET http://127.0.0.1/v1/models HTTP/1.1\r\nHost: synthd\r\n\r\n", status: 400, code: "parameter_invalid", param: undefined },
      asterisk: { send: "OPTIONS * HTTP/1.1\r\nHost: synthd\r\n\r\n", status: 400, code: "parameter_invalid", param: undefined },
      noHost11: { send: "GET /v1/models HTTP/1.1\r\nAccept: */*\r\n\r\n", status: 400, code: "parameter_invalid", param: "headers.host" },
      longPath: { send: `GET /v1/${"a".repeat(100_000)} HTTP/1.0\r\n\r\n`, status: 431, code: "request_too_large", param: "headers" },
      longHeader: { send: `GET /v1/models HTTP/1.0\r\nX-A: ${"a".repeat(20_000)}\r\n\r\n`, status: 431, code: "request_too_large", param: "headers" },
    };
    const results = await Promise.all(Object.values(cases).map((c) => exchange(h10, [c.send], 10_000)));
    Object.entries(cases).forEach(([name, c], i) => {
      const r = results[i];
      assert.equal(r.closedByServer, true, `${name}: connection closed`);
      const p = parse(r.text);
      assert.equal(p.headers["content-length"], String(Buffer.byteLength(p.body, "latin1")), name);
      assertEnvelope(p, c.status, c.code, c.param);
    });
    // The listener still serves after all that.
    assertHttp10Answer(await exchange(h10, ["GET /docs/errors HTTP/1.0\r\n\r\n"], 10_000), 200);
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

/**
 * Sends a request head and the first `firstBytes` of its body on a new connection to `url` (the
 * first flight of a client that does not wait for `100 Continue`), then only reads until the server
 * closes the connection; resolves to what came back. Nothing is written after that first flight,
 * so a reset that follows the answer (a server closing on a body it did not read) cannot make the
 * client drop the answer, whatever the machine's speed.
 */
function uploadThenRead(url: string, head: string, firstBytes: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(port), hostname);
    let got = "";
    const timer = setTimeout(() => s.destroy(), 30_000);
    s.on("data", (d: Buffer) => (got += d.toString("latin1")));
    s.on("error", () => undefined);
    s.on("close", () => {
      clearTimeout(timer);
      resolve(got);
    });
    s.on("connect", () => s.write(Buffer.concat([Buffer.from(head, "latin1"), Buffer.alloc(firstBytes, "x")])));
  });
}

test("--http10-port passes the main port's refusals through: a 70 MB body gets its 413, and Expect: 100-continue without the body no 503", async () => {
  const { server, h10, dir, apiKey } = await http10Server();
  try {
    const size = 70 * 1024 * 1024;
    const head = `POST /v1/models HTTP/1.1\r\nHost: synthd\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    const [viaH10, viaMain, expect] = await Promise.all([
      uploadThenRead(h10, head, 1 << 20),
      uploadThenRead(server.url, head, 1 << 20),
      // The head and nothing more: Node answers 100 Continue, the body never comes; the main port
      // drops the request at its idle timeout (about 10 s) and the listener closes the connection.
      exchange(h10, [head.replace(`Content-Length: ${size}`, "Content-Length: 10").replace("\r\n\r\n", "\r\nExpect: 100-continue\r\n\r\n")], 30_000),
    ]);
    for (const [name, text] of [["http10", viaH10], ["main", viaMain]]) {
      const p = parse(text);
      assert.equal(p.status, 413, `${name}: ${p.statusLine}`);
      assert.equal(JSON.parse(p.body).error.code, "request_too_large", name);
    }
    assert.equal(expect.closedByServer, true);
    assert.equal(expect.text, "HTTP/1.1 100 Continue\r\n\r\n", "no final answer, and no 503 a client would retry");
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

/** Waits, if less than 15 s of the current minute are left, for the next one (see auth-limits.test.ts). */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 200));
}

test("the failed-login budget counts the client's own address through --http10-port, and the listener's headers cannot be forged", async () => {
  const { server, h10, dir, apiKey } = await http10Server();
  try {
    const badKey = (i: number): string => `svc_live_${String(i).padStart(8, "0")}${"Z".repeat(40)}`;
    /** GET /v1/models from `from` (an address of this host) on `url`; the status. */
    const get = async (url: string, from: string, key: string | undefined, lines: string[] = []): Promise<number> => {
      const headLines = ["GET /v1/models HTTP/1.0", ...(key === undefined ? [] : [`Authorization: Bearer ${key}`]), ...lines];
      return parse((await exchange(url, [`${headLines.join("\r\n")}\r\n\r\n`], 10_000, 0, from)).text).status;
    };
    await awayFromMinuteEnd();
    // 61 bad keys from 127.0.0.2 through the listener: 60 x 401, then 429 for that address.
    const bad: number[] = [];
    for (let i = 0; i < 61; i++) bad.push(await get(h10, "127.0.0.2", badKey(i)));
    assert.deepEqual(bad, [...Array(60).fill(401), 429]);
    // A valid key from the same address is served; its next bad key is still refused.
    assert.equal(await get(h10, "127.0.0.2", apiKey), 200);
    assert.equal(await get(h10, "127.0.0.2", badKey(62)), 429);
    // The listener's own peer address on the main port (127.0.0.1) was charged nothing, nor
    // another client of the listener: their bad keys are 401.
    assert.equal(await get(h10, "127.0.0.3", badKey(64)), 401);
    // Naming 127.0.0.3 from 127.0.0.2 with the listener's headers (a guessed secret) does not get
    // 127.0.0.2 out of its budget, on either port; nor does naming 127.0.0.2 get 127.0.0.1 into it.
    const forged = (client: string): string[] => [`X-Synthd-Http10-Client: ${client}`, `X-Synthd-Http10-Secret: ${"A".repeat(43)}`];
    assert.equal(await get(h10, "127.0.0.2", badKey(65), forged("127.0.0.3")), 429);
    const main11 = (from: string, client: string, i: number): Promise<number> =>
      exchange(server.url, [`GET /v1/models HTTP/1.1\r\nHost: synthd\r\nConnection: close\r\nAuthorization: Bearer ${badKey(i)}\r\n${forged(client).join("\r\n")}\r\n\r\n`], 10_000, 0, from).then(
        (r) => parse(r.text).status,
      );
    assert.equal(await main11("127.0.0.2", "127.0.0.3", 67), 429, "a forged client address on the main port is ignored");
    assert.equal(await main11("127.0.0.1", "127.0.0.2", 68), 401, "the main port still sees the loopback peer");
    assert.equal(await main11("127.0.0.1", "127.0.0.1", 63), 401);
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

test("SIGTERM: a request in flight on --http10-port is answered, new connections are refused, and the process exits 0", async () => {
  const { server, h10, dir, apiKey } = await http10Server();
  try {
    // A first request leaves a forwarding connection open to the main listener.
    assertHttp10Answer(await exchange(h10, [http10("GET", "/v1/models", { key: apiKey })], 10_000), 200);
    const body = JSON.stringify({ ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } });
    const { hostname, port } = new URL(h10);
    const s = net.connect(Number(port), hostname);
    let got = "";
    const closed = new Promise<void>((r) => s.on("close", () => r()));
    s.on("error", () => undefined);
    s.on("data", (d: Buffer) => (got += d.toString("latin1")));
    s.write(
      `POST /v1/models HTTP/1.1\r\nHost: synthd\r\nConnection: close\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
    );
    // The listener has the request (Node answers 100 Continue as it hands it on); the body is not sent yet.
    await waitFor("100 Continue", async () => (got.startsWith("HTTP/1.1 100 Continue\r\n\r\n") ? true : undefined), 10_000, 20);
    got = "";
    server.child.kill("SIGTERM");
    await waitFor("the server to begin shutting down", async () => (server.stderr().includes('"msg":"shutting down"') ? true : undefined), 10_000, 20);
    // New connections are refused while the request in flight is served.
    const refused = await new Promise<string>((resolve) => {
      const c = net.connect(Number(port), hostname);
      c.on("connect", () => {
        c.destroy();
        resolve("connected");
      });
      c.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? "error"));
    });
    assert.equal(refused, "ECONNREFUSED");
    s.write(body);
    await closed;
    const created = assertHttp10Answer({ bytes: Buffer.from(got, "latin1"), text: got, closedByServer: true }, 201);
    assert.match(JSON.parse(created.body).data.id, /^mdl_/);
    // The first SIGTERM ends the process (another one would end it at once).
    if (server.child.exitCode === null && server.child.signalCode === null) await new Promise((r) => server.child.once("exit", r));
    assert.equal(server.child.exitCode, 0, server.stderr().slice(-2000));
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

test("idle connections that take every descriptor of the server's process leave --http10-port answering (its own process)", async () => {
  const { server, h10, dir, apiKey } = await http10Server();
  const idle: net.Socket[] = [];
  try {
    const pid = server.child.pid!;
    const mainPort = Number(new URL(server.url).port);
    // From now on the server's process may hold 200 descriptors more than it does; 300 idle
    // connections to the main port take them all, the last 100 wait in the kernel's accept queue
    // until uWS closes the first ones (10 s idle).
    const limit = readdirSync(`/proc/${pid}/fd`).length + 200;
    execFileSync("prlimit", ["--pid", String(pid), `--nofile=${limit}:${limit}`]);
    await Promise.all(
      Array.from(
        { length: 300 },
        () =>
          new Promise<void>((resolve) => {
            const s = net.connect(mainPort, "127.0.0.1");
            idle.push(s);
            s.on("error", () => undefined);
            s.once("connect", () => resolve());
            s.once("close", () => resolve());
          }),
      ),
    );
    await waitFor("the server's descriptors to run out", async () => (readdirSync(`/proc/${pid}/fd`).length >= limit - 2 ? true : undefined), 10_000, 20);
    // Accepted and forwarded by the listener's process; the forwarding connection waits for a
    // descriptor of the server's process like any client of the main port.
    const r = await exchange(h10, [http10("GET", "/v1/models", { key: apiKey })], 30_000);
    assertHttp10Answer(r, 200);
  } finally {
    for (const s of idle) s.destroy();
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});
