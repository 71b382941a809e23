/**
 * Test fixtures for the HTTP server tests: a real uWS server on a random port over a real LMDB
 * store in a temp directory, with an in-test engine that records calls and can be told to fail.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import type { Engine, RawGeneration } from "../src/engine/engine";
import { startServer, type RunningServer, type ServerOptions } from "../src/server/app";
import { LmdbStore as Store } from "../src/store";
import { ERROR_CODES, type ErrorCode, type GenerateRequest, type Generation, type Metadata } from "../src/contract";

/** An Engine that records calls, returns a fixed Generation, and throws what it is told to. */
/** Engine operations a test engine can be told to fail. */
export type EngineOp = "train" | "generate" | "stop";

/** Throws (and clears) the error a test stored in `fail[op]`, if any: a one-shot injected failure. */
export function throwOnce(fail: { [K in EngineOp]?: Error }, op: EngineOp): void {
  const err = fail[op];
  if (err !== undefined) {
    delete fail[op];
    throw err;
  }
}

export class FakeEngine implements Engine {
  readonly device = "cpu";
  /** A GPU name to pretend the engine has (config.device `auto`/`gpu` then report it); none by default. */
  gpu?: string;
  readonly calls: { op: "train" | "generate" | "stop"; id: string; req?: GenerateRequest }[] = [];
  /** Error to throw from the next call of each operation (cleared after one throw). */
  readonly fail: { train?: Error; generate?: Error; stop?: Error } = {};

  /** Admits everything (the real check is tested in test/admission.test.ts). */
  admissionCheck(): void {}

  async train(id: string): Promise<void> {
    this.calls.push({ op: "train", id });
    throwOnce(this.fail, "train");
  }

  async generate(id: string, req: GenerateRequest): Promise<Generation> {
    this.calls.push({ op: "generate", id, req });
    throwOnce(this.fail, "generate");
    const e = req.embedding;
    const n = Array.isArray(e) ? e.length : "seed_data" in e ? e.seed_data.rows.length : e.num_rows;
    return { model_id: id, num_rows: n, features: ["a", "b"], columns: { a: new Array(n).fill(1), b: new Array(n).fill(0) } };
  }

  async generateRaw(id: string, req: GenerateRequest): Promise<RawGeneration> {
    const g = await this.generate(id, req); // a test may replace generate: its codes as Int32Array
    return { ...g, columns: Object.fromEntries(g.features.map((f) => [f, Int32Array.from(g.columns[f])])) };
  }

  async stop(id: string): Promise<void> {
    this.calls.push({ op: "stop", id });
    throwOnce(this.fail, "stop");
  }

  async resumeAll(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {}
}

/** A started server with its store, engine, keys and captured log lines. */
export interface Harness {
  server: RunningServer;
  url: string;
  store: Store;
  engine: FakeEngine;
  /** Sandbox and live keys of org `acme`, and a sandbox key of org `other`. */
  keys: { test: string; live: string; other: string };
  /** Every log line written so far, raw JSON text. */
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1:0 with a fresh store; `opts` override server options. Rate limits
 * default to 1,000,000 per minute here (these tests are about other behaviour); the limit tests
 * in test/contract set their own.
 */
export async function startHarness(opts: Partial<ServerOptions> = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "synthd-server-"));
  const store = new Store(dir);
  const engine = new FakeEngine();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const keys = {
    test: await store.createKey("acme", "test"),
    live: await store.createKey("acme", "live"),
    other: await store.createKey("other", "test"),
  };
  const server = await startServer({
    host: "127.0.0.1",
    port: 0,
    store,
    engine,
    logger: pino({ level: "info" }, sink),
    rateLimit: 1_000_000,
    authFailureLimit: 1_000_000,
    ...opts,
  });
  return {
    server,
    url: server.url,
    store,
    engine,
    keys,
    logs,
    async stop() {
      await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A response read in full. */
export interface Res {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** Options of {@link call}. */
export interface CallOptions {
  method?: string;
  /** API key sent as `Authorization: Bearer <key>`; omit for no header. */
  key?: string;
  /** Serialised with JSON.stringify unless it is a string. */
  body?: unknown;
  /** Extra or replacing headers (a JSON Content-Type is added for bodies unless set here). */
  headers?: Record<string, string>;
}

/** Sends one request to `base + path` and reads the whole response. */
export async function call(base: string, path: string, o: CallOptions = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
  let body: string | undefined;
  if (o.body !== undefined) {
    body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
    headers["content-type"] = "application/json";
  }
  Object.assign(headers, o.headers ?? {});
  const r = await fetch(base + path, { method: o.method ?? (body !== undefined ? "POST" : "GET"), headers, body });
  const text = await r.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json };
}

/** `req_` + 24 alphanumerics (DESIGN §3). */
export const REQUEST_ID = /^req_[A-Za-z0-9]{24}$/;

/**
 * Asserts `r` is the contract's error envelope for `code`: status and type from ERROR_CODES,
 * doc_url `${docsBase}/docs/errors#code`, request_id equal to X-Request-Id, and `param` exactly
 * as given (absent when `param` is undefined).
 */
export function assertError(r: Res, code: ErrorCode, param: string | undefined, docsBase?: string): void {
  const { status, type } = ERROR_CODES[code];
  assert.equal(r.status, status, `status for ${code}: ${r.text}`);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(r.json?.error?.code, code, r.text);
  assert.equal(r.json.error.type, type);
  assert.equal(typeof r.json.error.message, "string");
  assert.ok(r.json.error.message.length > 0);
  if (docsBase !== undefined) assert.equal(r.json.error.doc_url, `${docsBase}/docs/errors#${code}`);
  else assert.match(r.json.error.doc_url, new RegExp(`/docs/errors#${code}$`));
  assert.match(r.json.request_id, REQUEST_ID);
  assert.equal(r.headers.get("x-request-id"), r.json.request_id);
  if (param === undefined) assert.equal("param" in r.json.error, false, `no param expected: ${r.text}`);
  else assert.equal(r.json.error.param, param, r.text);
  assert.deepEqual(Object.keys(r.json).sort(), ["error", "request_id"]);
}

/** A valid Create Model body over features `a` (K=2) and `b` (K=3). */
export function validCreateBody(): { metadata: Metadata; config?: Record<string, unknown> } {
  return {
    metadata: {
      features: ["a", "b"],
      cardinalities: { a: 2, b: 3 },
      empirical_probs: { a: [0.25, 0.75], b: [0.2, 0.3, 0.5] },
      value_mappings: { a: { x: 0, y: 1 }, b: { p: 0, q: 1, r: 2 } },
      marginals: [{ features: ["a", "b"], probs: [0.05, 0.1, 0.1, 0.15, 0.2, 0.4] }],
    },
  };
}

/**
 * Creates a model from {@link validCreateBody} (with `config`, if given) with the harness's
 * sandbox key and returns its id; asserts the 201.
 */
export async function createTestModel(h: Harness, config?: Record<string, unknown>): Promise<string> {
  const r = await call(h.url, "/v1/models", { key: h.keys.test, body: { ...validCreateBody(), config } });
  assert.equal(r.status, 201, r.text);
  return r.json.data.id;
}
