/**
 * The HTTP front end at the edges of HTTP/1.1, on a real `synthd serve` process spoken to with raw
 * `net.Socket` writes (docs/operations.md "HTTP edges: what the front end guarantees"):
 * - a Generate without an Idempotency-Key whose client goes away, before the response or in the
 *   middle of it, is refunded in full: usage counts only responses written to their end;
 * - requests pipelined behind one with a body are refused by uWebSockets.js (the connection is
 *   closed), and none of them runs: nothing is charged, no model is made;
 * - what uWebSockets.js answers itself, before any of synthd's code runs (HTTP/1.0, malformed
 *   request lines, TLS on the plain port, a request line split across reads, NUL or obs-fold in
 *   a header), exactly as documented;
 * - `config.privacy_noise` is bounded at the edge (400 naming the field).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { join } from "node:path";
import { LmdbStore as Store } from "../../src/store";
import { monthOf } from "../../src/usage/quota";
import { removeDir, startServer, tempDir, waitFor, type ServerProcess } from "../../bench/harness";
import { validCreateBody } from "../server-helpers";
import { exchange, rawPost } from "./raw-http";

async function post(url: string, apiKey: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

/** Request log lines (pino JSON) of generate requests the server has finished. */
function generateLogLines(server: ServerProcess): any[] {
  return server
    .stderr()
    .split("\n")
    .filter((l) => l.includes('"msg":"request"') && l.includes('"/v1/models/:model_id/generate"'))
    .map((l) => JSON.parse(l));
}

/** Waits until the server has logged `n` finished generate requests (refunds happen before the log line). */
async function generatesLogged(server: ServerProcess, n: number): Promise<any[]> {
  return waitFor(`${n} generate requests logged`, async () => {
    const lines = generateLogLines(server);
    return lines.length >= n ? lines : undefined;
  }, 120_000, 50);
}

/**
 * A table of `features` columns with `k` codes each (uniform). 200 binary columns: 20,000 rows
 * make an 8 MB JSON body (more than the socket buffers hold) for little compute.
 */
function wideMetadata(features: number, k: number): unknown {
  const names = Array.from({ length: features }, (_, i) => `c${i}`);
  return {
    features: names,
    cardinalities: Object.fromEntries(names.map((n) => [n, k])),
    empirical_probs: Object.fromEntries(names.map((n) => [n, Array.from({ length: k }, () => 1 / k)])),
  };
}

/** One server on a fresh store with a live key whose quota is far above what the tests generate. */
async function liveServer(): Promise<{
  server: ServerProcess;
  dir: string;
  storeDir: string;
  apiKey: string;
  org: string;
  usage: () => Promise<number>;
  ledger: () => Promise<{ kind: string; rows: number; request_id: string }[]>;
}> {
  const dir = tempDir();
  const storeDir = join(dir, "store");
  const org = "edges";
  const setup = new Store(storeDir);
  const apiKey = await setup.createKey(org, "live");
  await setup.setOrgLimits(org, { live_quota: 1_000_000_000 });
  await setup.close();
  const server = await startServer(storeDir, ["--workers", "1"]);
  const usage = async (): Promise<number> => {
    const s = new Store(storeDir);
    try {
      return await s.getUsage(org, "live", monthOf(Date.now()));
    } finally {
      await s.close();
    }
  };
  const ledger = async (): Promise<{ kind: string; rows: number; request_id: string }[]> => {
    const s = new Store(storeDir);
    try {
      return await s.ledgerEntries(org, monthOf(Date.now()));
    } finally {
      await s.close();
    }
  };
  return { server, dir, storeDir, apiKey, org, usage, ledger };
}

test("a Generate without an Idempotency-Key whose client goes away is refunded: usage equals the rows delivered", async () => {
  const { server, dir, apiKey, usage, ledger } = await liveServer();
  try {
    const created = await post(server.url, apiKey, "/v1/models", { metadata: wideMetadata(200, 2), config: { model_size: "small", max_epochs: 1 } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const path = `/v1/models/${created.json.data.id}/generate`;

    // 1. Three clients give up 50 ms after sending (curl --max-time 0.05): no byte arrives.
    for (let i = 0; i < 3; i++) {
      const r = await exchange(server.url, [rawPost(path, apiKey, { embedding: { num_rows: 20_000, seed: i } })], 50);
      assert.equal(r.bytes.length, 0, "the generation cannot be done in 50 ms: the client must leave before the answer");
    }
    const early = await generatesLogged(server, 3);
    assert.ok(early.every((l) => l.aborted === true), JSON.stringify(early));
    assert.equal(await usage(), 0, "rows of answers nobody received were charged");
    // Each was charged while it generated, and refunded: the path under test ran.
    const entries = await ledger();
    for (const l of early) {
      const mine = entries.filter((e) => e.request_id === l.req_id).map((e) => e.rows);
      assert.deepEqual(mine, [20_000, -20_000], `request ${l.req_id}: ledger ${JSON.stringify(mine)}`);
    }

    // 2. A client that reads the start of a large response and then closes: refunded in full.
    const partial = await new Promise<{ received: number; declared: number }>((resolve, reject) => {
      const { hostname, port } = new URL(server.url);
      const s = net.connect(Number(port), hostname);
      let head = "";
      let received = 0;
      s.on("error", () => undefined);
      s.on("connect", () => s.write(rawPost(path, apiKey, { embedding: { num_rows: 20_000, seed: 7 } })));
      s.once("data", (d: Buffer) => {
        // Stop reading: the kernel buffers fill and the server has to wait for the client.
        s.pause();
        head = d.toString("latin1");
        received = d.length;
        setTimeout(() => {
          s.destroy();
          const m = /Content-Length: (\d+)/i.exec(head);
          if (m === null) reject(new Error(`no Content-Length in ${head.slice(0, 300)}`));
          else resolve({ received, declared: Number(m[1]) });
        }, 1500);
      });
    });
    assert.ok(partial.received < partial.declared, "the client must have stopped before the end of the body");
    assert.ok(partial.declared > 6 * 1024 * 1024, `response of ${partial.declared} bytes is too small to fill the socket buffers`);
    const afterPartial = await generatesLogged(server, 4);
    const cut = afterPartial[3];
    assert.equal(cut.status, null, JSON.stringify(cut));
    assert.equal(cut.aborted, true);
    assert.equal(cut.refunded_rows, 20_000, `the cut-off response must be refunded by the write tracking: ${JSON.stringify(cut)}`);
    assert.equal(await usage(), 0, "rows of a response cut off mid-body were charged");
    assert.deepEqual((await ledger()).filter((e) => e.request_id === cut.req_id).map((e) => e.rows), [20_000, -20_000]);

    // 3. Answers read to the end are charged exactly their rows.
    const full = await post(server.url, apiKey, path, { embedding: { num_rows: 1_234, seed: 1 } });
    assert.equal(full.status, 200);
    assert.equal(full.json.data.num_rows, 1_234);
    const big = await post(server.url, apiKey, path, { embedding: { num_rows: 20_000, seed: 2 } });
    assert.equal(big.status, 200);
    await generatesLogged(server, 6);
    assert.equal(big.json.data.num_rows, 20_000);
    assert.equal(await usage(), 21_234);
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

test("requests pipelined behind one with a body: the connection is refused and none of them runs (nothing charged, no model made)", async () => {
  const { server, dir, storeDir, apiKey, org, usage } = await liveServer();
  try {
    const created = await post(server.url, apiKey, "/v1/models", { ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } });
    assert.equal(created.status, 201);
    const path = `/v1/models/${created.json.data.id}/generate`;

    // Two generates written at once on one connection.
    const gen = rawPost(path, apiKey, { embedding: { num_rows: 25_000 } });
    const gens = await exchange(server.url, [gen + gen], 10_000);
    assert.equal(gens.closedByServer, true);
    assert.equal(gens.bytes.length, 0, `expected no answer, got ${gens.text.slice(0, 200)}`);
    // Two creates written at once.
    const create = rawPost("/v1/models", apiKey, { ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } });
    const creates = await exchange(server.url, [create + create], 10_000);
    assert.equal(creates.closedByServer, true);
    assert.equal(creates.bytes.length, 0, `expected no answer, got ${creates.text.slice(0, 200)}`);
    // A generate with a GET pipelined behind it.
    const mixed = await exchange(server.url, [gen + `GET /v1/models HTTP/1.1\r\nHost: synthd\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`], 10_000);
    assert.equal(mixed.closedByServer, true);
    assert.equal(mixed.bytes.length, 0);

    // The same requests one after the other on one connection (the next sent once the answer
    // arrived) are each answered, in order, and each runs.
    const { hostname, port } = new URL(server.url);
    const statuses = await new Promise<number[]>((resolve, reject) => {
      const s = net.connect(Number(port), hostname);
      const got: number[] = [];
      let buf = "";
      const queue = [gen, create];
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`sequential requests: only ${got.length} answers (${got.join(", ")}); pending ${buf.slice(0, 200)}`));
      }, 60_000);
      s.on("close", () => clearTimeout(timer));
      s.on("connect", () => s.write(queue.shift()!));
      s.on("data", (d: Buffer) => {
        buf += d.toString("latin1");
        const headEnd = buf.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const head = buf.slice(0, headEnd);
        const length = /\r\nContent-Length: (\d+)/i.exec(head);
        if (length === null) return reject(new Error(`no Content-Length: ${head}`));
        const end = headEnd + 4 + Number(length[1]);
        if (buf.length < end) return;
        got.push(Number(head.slice(9, 12)));
        buf = buf.slice(end);
        const next = queue.shift();
        if (next === undefined) {
          clearTimeout(timer);
          s.destroy();
          resolve(got);
        } else s.write(next);
      });
    });
    assert.deepEqual(statuses, [200, 201]);

    await generatesLogged(server, 3);
    assert.equal(await usage(), 25_000, "only the generate that was answered may be charged");
    await server.kill("SIGTERM");
    const store = new Store(storeDir);
    try {
      const models = (await store.listModels(org, "live", 100)).items;
      assert.equal(models.length, 2, "only the two creates that were answered may have made a model");
    } finally {
      await store.close();
    }
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

test("what uWebSockets.js answers itself: HTTP/1.0, malformed request lines, TLS, split request lines, NUL, control characters and obs-fold in headers, no Host", async () => {
  const dir = tempDir();
  const server = await startServer(join(dir, "store"));
  try {
    const HTML_505 =
      "HTTP/1.1 505 HTTP Version Not Supported\r\nConnection: close\r\n\r\n" +
      "<h1>HTTP Version Not Supported</h1><p>This server does not support HTTP/1.0.</p><hr><i>uWebSockets/20 Server</i>";
    const longPath = "/v1/" + "a".repeat(100_000);
    const clientHello = Buffer.from("16030100f4010000f00303" + "00".repeat(32) + "20" + "11".repeat(32) + "0002130101000095", "hex");
    const HTML_400 = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n<h1>Bad Request</h1><hr><i>uWebSockets/20 Server</i>";
    const [http10, http10Post, garbage, lowercase, tls, splitLine, nul, fold, longWhole, http11, ctl, spaceColon, noHeaders, noHost] = await Promise.all([
      exchange(server.url, ["GET /v1/models HTTP/1.0\r\nHost: synthd\r\n\r\n"], 5_000),
      exchange(server.url, ['POST /v1/models HTTP/1.0\r\nHost: synthd\r\nContent-Length: 2\r\n\r\n{}'], 5_000),
      exchange(server.url, ["GARBAGE\r\n\r\n"], 5_000),
      exchange(server.url, ["GET /v1/models http/1.1\r\nHost: synthd\r\n\r\n"], 5_000),
      exchange(server.url, [clientHello], 5_000),
      // The request line arrives in two reads (a long path over a real network).
      exchange(server.url, [`GET ${longPath.slice(0, 50_000)}`, `${longPath.slice(50_000)} HTTP/1.1\r\nHost: synthd\r\n\r\n`], 5_000, 100),
      // No answer: uWS waits for a valid header and closes at its 10 s idle timeout.
      exchange(server.url, ["GET /v1/models HTTP/1.1\r\nHost: synthd\r\nX-A: a\0b\r\n\r\n"], 30_000),
      exchange(server.url, ["GET /v1/models HTTP/1.1\r\nHost: synthd\r\nX-A: a\r\n b\r\n\r\n"], 30_000),
      // A 30 KB path in one read reaches synthd: our 404 envelope (outside /v1, no key needed). (A
      // 100 KB one written at once may reach the server in two reads on loopback, and is then the
      // split case above: which one a client meets depends on the network, not on synthd.)
      exchange(server.url, [`GET /${"a".repeat(30_000)} HTTP/1.1\r\nHost: synthd\r\n\r\n`], 2_000),
      exchange(server.url, ["GET /v1/models HTTP/1.1\r\nHost: synthd\r\n\r\n"], 2_000),
      exchange(server.url, ["GET /v1/models HTTP/1.1\r\nHost: synthd\r\nX-A: a\u0001b\r\n\r\n"], 30_000),
      exchange(server.url, ["GET /v1/models HTTP/1.1\r\nHost : synthd\r\n\r\n"], 30_000),
      exchange(server.url, ["GET /v1/models HTTP/1.1\r\n\r\n"], 30_000),
      exchange(server.url, ["GET /v1/models HTTP/1.1\r\nAccept: */*\r\n\r\n"], 5_000),
    ]);
    for (const [name, r] of Object.entries({ http10, http10Post, garbage, lowercase, tls, splitLine })) {
      assert.equal(r.text, HTML_505, `${name}: ${r.text.slice(0, 200)}`);
      assert.equal(r.closedByServer, true, name);
    }
    assert.equal(noHost.text, HTML_400);
    assert.equal(noHost.closedByServer, true);
    for (const [name, r] of Object.entries({ nul, fold, ctl, spaceColon, noHeaders })) {
      assert.equal(r.bytes.length, 0, `${name}: ${r.text.slice(0, 200)}`);
      assert.equal(r.closedByServer, true, `${name}: the connection must be closed (uWS idle timeout), not left open`);
    }
    assert.match(longWhole.text, /^HTTP\/1\.1 404 Not Found\r\n/);
    assert.equal(JSON.parse(longWhole.text.slice(longWhole.text.indexOf("\r\n\r\n") + 4)).error.code, "route_not_found");
    assert.match(http11.text, /^HTTP\/1\.1 401 Unauthorized\r\n/);
    assert.equal(JSON.parse(http11.text.slice(http11.text.indexOf("\r\n\r\n") + 4)).error.code, "api_key_missing");
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});

test("config.privacy_noise is bounded at the edge: above 1e6 is 400 parameter_invalid naming the field, and nothing is made", async () => {
  const dir = tempDir();
  const server = await startServer(join(dir, "store"));
  try {
    const key = server.sandboxKey!;
    for (const noise of [1e308, 1_000_001, 1e7]) {
      const r = await post(server.url, key, "/v1/models", { ...validCreateBody(), config: { privacy_enabled: true, privacy_noise: noise } });
      assert.equal(r.status, 400, `${noise}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, "parameter_invalid");
      assert.equal(r.json.error.param, "body.config.privacy_noise");
      assert.match(r.json.error.message, /1000000/);
    }
    const list = await fetch(server.url + "/v1/models", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(((await list.json()) as any).data.length, 0);
    const ok = await post(server.url, key, "/v1/models", { ...validCreateBody(), config: { privacy_enabled: true, privacy_noise: 1_000_000, model_size: "small", max_epochs: 1 } });
    assert.equal(ok.status, 201, JSON.stringify(ok.json));
    assert.equal(ok.json.data.config.privacy_noise, 1_000_000);
    // The largest accepted value trains to the end (1e308 made the model fail at its first step).
    const id: string = ok.json.data.id;
    const final = await waitFor("the model to finish training", async () => {
      const g = await fetch(`${server.url}/v1/models/${id}`, { headers: { authorization: `Bearer ${key}` } });
      const m = ((await g.json()) as any).data;
      return m.status === "training" ? undefined : m;
    }, 120_000, 250);
    assert.equal(final.status, "ready", JSON.stringify(final.error));
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
});
