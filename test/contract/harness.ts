/**
 * Fixtures of the contract tests (test/contract/*.test.ts): every test goes over HTTP to a real
 * server (the uWebSockets.js front end of `startServer`, a real LMDB store in a temp directory)
 * backed by the real engine of `src/engine` (`createEngine`, piscina workers).
 *
 * - The engine is wrapped in a {@link FaultEngine}, which passes every call through unless a test
 *   arms a one-shot fault (to reach 503 `training_service_unavailable` and 500 `internal_error`)
 *   or a gate (to hold a request in flight, for idempotency conflicts).
 * - The server's clock is a {@link TestClock}: rate windows, quota months and idempotency expiry
 *   follow it, so no test sleeps to cross a minute, a month or 24 hours.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Engine, RawGeneration } from "../../src/engine/engine";
import { startServer, type RunningServer, type ServerOptions } from "../../src/server/app";
import { createEngine } from "../../src/engine";
import { LmdbStore as Store, type Environment, type Store as StoreApi } from "../../src/store";
import { randomBytes } from "node:crypto";
import { type GenerateRequest, type Generation, type Metadata, type Model, type ModelConfig } from "../../src/contract";

/** A clock the server reads: real time plus an offset, or frozen at one instant. */
export class TestClock {
  private offset = 0;
  private frozen: number | undefined;
  /** Unix milliseconds as the server sees them. */
  readonly now = (): number => this.frozen ?? Date.now() + this.offset;
  /** Freezes the clock at `ms`. */
  freeze(ms: number): void {
    this.frozen = ms;
  }
  /** Moves a frozen clock forward by `ms` (or a running one, via its offset). */
  advance(ms: number): void {
    if (this.frozen !== undefined) this.frozen += ms;
    else this.offset += ms;
  }
  /** Back to real time. */
  reset(): void {
    this.frozen = undefined;
    this.offset = 0;
  }
}

/** Wraps an engine: passes calls through unless a one-shot fault or a gate is armed. */
export class FaultEngine implements Engine {
  /** Error thrown by the next call of each operation (cleared after one throw). */
  readonly fail: { train?: Error; generate?: Error; stop?: Error } = {};
  /** While set, calls of that operation wait for the promise before running. */
  readonly gate: { train?: Promise<void>; generate?: Promise<void> } = {};
  /** Number of generate calls that reached the inner engine. */
  generated = 0;
  /**
   * While true, `train` accepts the work without passing it on: the model stays `training` and
   * costs no compute. For tests that only look at what Create Model answers, so that dozens of
   * such models do not keep the real engine's worker busy.
   */
  skipTraining = false;

  constructor(readonly inner: Engine) {}

  get device(): string {
    return this.inner.device;
  }

  get gpu(): string | undefined {
    return this.inner.gpu;
  }

  /** The inner engine's check, unless training is skipped (then nothing would ever release its queue place). */
  admissionCheck(config: ModelConfig, metadata: Metadata, org: string): void {
    if (!this.skipTraining) this.inner.admissionCheck(config, metadata, org);
  }

  async train(id: string): Promise<void> {
    if (this.gate.train) await this.gate.train;
    throwOnce(this.fail, "train");
    if (this.skipTraining) return;
    return this.inner.train(id);
  }

  async generate(id: string, req: GenerateRequest): Promise<Generation> {
    if (this.gate.generate) await this.gate.generate;
    throwOnce(this.fail, "generate");
    this.generated++;
    return this.inner.generate(id, req);
  }

  async generateRaw(id: string, req: GenerateRequest): Promise<RawGeneration> {
    if (this.gate.generate) await this.gate.generate;
    throwOnce(this.fail, "generate");
    this.generated++;
    return this.inner.generateRaw(id, req);
  }

  async stop(id: string): Promise<void> {
    throwOnce(this.fail, "stop");
    return this.inner.stop(id);
  }

  resumeAll(): Promise<number> {
    return this.inner.resumeAll();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A started contract server. */
export interface Contract {
  url: string;
  server: RunningServer;
  store: StoreApi;
  /**
   * Set when the suite runs against the shared topology (`SYNTHD_CONTRACT_TOPOLOGY=shared`): the
   * second front end's URL (same store, limits and workers) and the options a server of this
   * topology needs (for tests that start one again).
   */
  shared?: { otherUrl: string; serverOptions: Pick<ServerOptions, "sharedLimiter"> };
  /** The store options of an admin command (`synthd usage`, `orgs set`) on this store: `--data-dir` or `--database`. */
  storeArgs: string[];
  /** Resolves once every write so far is on disk (LMDB's flush; the shared store commits before answering). */
  flushed(): Promise<void>;
  engine: FaultEngine;
  clock: TestClock;
  dir: string;
  /** Org `acme`: sandbox and live keys; org `other`: a sandbox key. */
  keys: { test: string; live: string; other: string };
  /** Creates a key for a new (or existing) org, optionally with its own rate limit (requests/minute). */
  newKey(org: string, env?: Environment, rateLimit?: number): Promise<string>;
  stop(): Promise<void>;
}

/** Options of {@link startContract}: server options plus the default org rate limit. */
export type ContractOptions = Partial<Pick<ServerOptions, "debug" | "docsUrl" | "maxBodyBytes" | "authFailureLimit" | "rateLimit" | "maxModelsPerOrg">>;

/**
 * True when the contract suite runs against a front end of the shared topology (issue 14):
 * `SYNTHD_CONTRACT_TOPOLOGY=shared` (test/integration/contract-shared.test.ts sets it).
 */
export const SHARED_TOPOLOGY = process.env.SYNTHD_CONTRACT_TOPOLOGY === "shared";

/** What a contract server runs on: a store and an engine, and how to take them down. */
interface Backend {
  store: StoreApi;
  engine: Engine;
  /** Options every server on this backend needs. */
  serverOptions: Pick<ServerOptions, "sharedLimiter">;
  storeArgs: string[];
  flushed(): Promise<void>;
  /** Closes what the backend started (after the servers and the engine are closed). */
  close(): Promise<void>;
}

/** The embedded server's backend: an LMDB store in `dir` and the real engine with one worker. */
async function embeddedBackend(dir: string, logger: pino.Logger): Promise<Backend> {
  const data = join(dir, "store");
  const store = new Store(data);
  return {
    store,
    engine: await createEngine({ store, dataDir: data, workers: 1, logger }),
    serverOptions: {},
    storeArgs: ["--data-dir", data],
    flushed: async () => {
      await store.root.flushed;
    },
    close: () => store.close(),
  };
}

/**
 * The shared topology's backend: a fresh PostgreSQL database, a Redis key prefix of its own, two
 * workers (`WorkerHost`, one engine thread each, in this process) behind a RemoteEngine, and the
 * Redis rate limiter.
 */
async function sharedBackend(logger: pino.Logger, clock: TestClock): Promise<Backend> {
  const { freshDatabase } = await import("../pg-helpers");
  const { deleteRedisPrefix } = await import("../../bench/topology");
  const { PgStore } = await import("../../src/store/postgres/pgStore");
  const { WorkerHost } = await import("../../src/cluster/worker-host");
  const { RemoteEngine } = await import("../../src/cluster/remote-engine");
  const { RedisRateLimiter } = await import("../../src/server/limits/redisRateLimiter");
  const redisHost = process.env.SYNTHD_TEST_REDIS_HOST ?? "127.0.0.1";
  const redisPort = Number(process.env.SYNTHD_TEST_REDIS_PORT ?? 6379);
  const redisUrl = `redis://${redisHost}:${redisPort}`;
  const db = await freshDatabase();
  const prefix = `synthd_c_${randomBytes(6).toString("hex")}`;
  const store = await PgStore.open(db.url, { logger });
  const worker = (): ReturnType<typeof WorkerHost.start> => WorkerHost.start({ databaseUrl: db.url, redisUrl, prefix, threads: 1, lockDurationMs: 3000, logger });
  const workers = [await worker(), await worker()];
  const sharedLimiter = new RedisRateLimiter({ prefix: `${prefix}:`, redis: { host: redisHost, port: redisPort }, clock: clock.now });
  await sharedLimiter.ready();
  return {
    store,
    engine: await RemoteEngine.connect({ redisUrl, prefix, workerBudgetBytes: 8 * 2 ** 30, logger }),
    serverOptions: { sharedLimiter },
    storeArgs: ["--database", db.url],
    flushed: async () => undefined,
    async close() {
      for (const w of workers) await w.close();
      await sharedLimiter.close();
      await store.close();
      await deleteRedisPrefix(prefix);
      await db.drop();
    },
  };
}

/**
 * Starts a server on 127.0.0.1:0 over a fresh store with the real engine (1 worker); with
 * {@link SHARED_TOPOLOGY}, a front end of the shared topology (and a second one beside it, on the
 * same store, limits and workers). Unless given, the default rate limit and the per-address limit
 * are high (1,000,000/min) so that only the tests about limits meet them; those set their own org
 * limits.
 */
export async function startContract(opts: ContractOptions = {}): Promise<Contract> {
  const dir = mkdtempSync(join(tmpdir(), "synthd-contract-"));
  const logger = pino({ level: "silent" });
  const clock = new TestClock();
  const backend = SHARED_TOPOLOGY ? await sharedBackend(logger, clock) : await embeddedBackend(dir, logger);
  const { store } = backend;
  const engine = new FaultEngine(backend.engine);
  const keys = {
    test: await store.createKey("acme", "test"),
    live: await store.createKey("acme", "live"),
    other: await store.createKey("other", "test"),
  };
  const serverOptions: ServerOptions = {
    host: "127.0.0.1",
    port: 0,
    store,
    engine,
    logger,
    clock: clock.now,
    rateLimit: 1_000_000,
    authFailureLimit: 1_000_000,
    ...backend.serverOptions,
    ...opts,
  };
  const server = await startServer(serverOptions);
  const other = SHARED_TOPOLOGY ? await startServer(serverOptions) : undefined;
  const contract: Contract = {
    url: server.url,
    server,
    store,
    engine,
    clock,
    dir,
    keys,
    ...(other && { shared: { otherUrl: other.url, serverOptions: backend.serverOptions } }),
    storeArgs: backend.storeArgs,
    flushed: backend.flushed,
    async newKey(org, env = "test", rateLimit) {
      const key = await store.createKey(org, env);
      if (rateLimit !== undefined) await store.setOrgLimits(org, { rate_limit: rateLimit });
      return key;
    },
    async stop() {
      await contract.server.close(); // the current server (a test may have replaced it)
      await other?.close();
      await engine.close();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return contract;
}

import { call, throwOnce, type Res } from "../server-helpers";
export { assertError, call, REQUEST_ID, type CallOptions, type Res } from "../server-helpers";

/** ISO 8601 UTC timestamp. */
export const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** The Model's fields, exactly (contract: "Model"). */
export const MODEL_FIELDS = ["config", "created_at", "current_epoch", "error", "id", "status", "train_loss", "updated_at", "val_loss"];

/** Asserts a success envelope of `object` with status `status`; returns its data. */
export function assertEnvelope(r: Res, status: number, object: string): any {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(r.json.object, object);
  assert.match(r.json.metadata.timestamp, ISO_UTC);
  return r.json.data;
}

/** Tiny metadata: features `a` (K=2) and `b` (K=3) with their pair marginal. */
export function tinyMetadata(): Metadata {
  return {
    features: ["a", "b"],
    cardinalities: { a: 2, b: 3 },
    empirical_probs: { a: [0.25, 0.75], b: [0.2, 0.3, 0.5] },
    value_mappings: { a: { x: 0, y: 1 }, b: { p: 0, q: 1, r: 2 } },
    marginals: [{ features: ["a", "b"], probs: [0.05, 0.1, 0.1, 0.15, 0.2, 0.4] }],
  };
}

/** The quick training config of these tests. */
export const QUICK = { model_size: "small", max_epochs: 1, embedding_dim: 8, batch_size: 64 } as const;

/** Creates a model (tiny metadata, quick config unless given) and returns it. */
export async function createModel(c: Contract, key = c.keys.test, config: Record<string, unknown> = QUICK): Promise<Model> {
  const r = await call(c.url, "/v1/models", { key, body: { metadata: tinyMetadata(), config } });
  return assertEnvelope(r, 201, "model");
}

/** Polls Get Model until its status leaves `training`; returns the model. */
export async function waitTrained(c: Contract, id: string, key = c.keys.test, timeoutMs = 60_000): Promise<Model> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(c.url, `/v1/models/${id}`, { key });
    assert.equal(r.status, 200, r.text);
    if (r.json.data.status !== "training") return r.json.data;
    if (Date.now() > deadline) throw new Error(`model ${id} still training after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Creates a model and waits until it is ready. */
export async function readyModel(c: Contract, key = c.keys.test): Promise<Model> {
  const m = await createModel(c, key);
  const done = await waitTrained(c, m.id, key);
  assert.equal(done.status, "ready", JSON.stringify(done.error));
  return done;
}

/** A promise and its resolver, for {@link FaultEngine.gate}. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
