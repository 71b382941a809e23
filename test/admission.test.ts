/**
 * Admission control (issue 11): the training-memory estimate (src/engine/admission/estimate.ts) against
 * the measured peaks it was calibrated on, the queue policy (src/engine/admission/queue.ts), the
 * budget parsing (src/engine/admission/budget.ts), and the engine wiring them (refusals, queueing, delete of
 * a waiting model, resume oldest first, worker death keeping the reservation).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { estimateTrainingMemory, explainTooLarge, MAX_PARAMS, pairBlockShapes, type EstimateConfig } from "../src/engine/admission/estimate";
import { AdmissionQueue, HOLD_TTL_MS, type QueueLimits } from "../src/engine/admission/queue";
import { formatBytes, machineMemory, parseByteSize } from "../src/engine/admission/budget";
import { createEngine, DEFAULT_MAX_QUEUED_PER_ORG, ModelTooLargeError, OrgQueueFullError, type EngineOptions, type PoolEngine } from "../src/engine";
import { buildTargets, generatorSpec, layoutOf, paramCount } from "../src/model";
import { analyzeTable } from "../src/sdk/metadata/metadata";
import { newModelId, LmdbStore as Store, type ModelRecord, type Store as StoreApi } from "../src/store";
import { CONFIG_DEFAULTS, type Metadata, type ModelConfig, type ModelSize } from "../src/contract";
import { syntheticMetadata } from "../bench/memory";
import { ADULT_CSV } from "../bench/harness";
import { addTrainingModel, fastConfig, TINY_META } from "./fixtures";

const GiB = 2 ** 30;
const MiB = 2 ** 20;

const cfg = (over: Partial<EstimateConfig> = {}): EstimateConfig => ({ ...CONFIG_DEFAULTS, ...over });
const HEAVY = cfg({ model_size: "large", embedding_dim: 4096, batch_size: 65536 });

// ---- the estimate ---------------------------------------------------------------------------

test("the estimate grows with every size it depends on, and counts the generator's parameters exactly", () => {
  const meta = syntheticMetadata(10, 20, 5);
  const base = estimateTrainingMemory(cfg(), meta);
  for (const bigger of [cfg({ batch_size: 1024 }), cfg({ embedding_dim: 512 }), cfg({ model_size: "large" }), cfg({ privacy_enabled: true })]) {
    assert.ok(estimateTrainingMemory(bigger, meta).bytes > base.bytes, JSON.stringify(bigger));
  }
  assert.ok(estimateTrainingMemory(cfg(), syntheticMetadata(10, 40, 5)).bytes > base.bytes, "more codes");
  assert.ok(estimateTrainingMemory(cfg(), syntheticMetadata(10, 20, 20)).bytes > base.bytes, "more pairs");
  assert.ok(estimateTrainingMemory(cfg(), meta, { compute: "tfjs" }).bytes > base.bytes, "tfjs keeps more activations");
  for (const size of ["small", "medium", "large"] as ModelSize[]) {
    const est = estimateTrainingMemory(cfg({ model_size: size, embedding_dim: 37 }), meta);
    assert.equal(est.params, paramCount(generatorSpec(size, 37, layoutOf(meta))));
    assert.equal(est.width, 200);
    assert.equal(est.pairCells, 5 * 400);
  }
});

test("the pair blocks the estimate counts are those buildTargets makes", () => {
  const metas: Metadata[] = [TINY_META, syntheticMetadata(12, 7, 30), syntheticMetadata(30, 3, 12)];
  // Gaps: feature 0 paired with 1, 2 and 9 (a gap wider than K cuts the run), given g-major.
  const gappy = syntheticMetadata(10, 4);
  gappy.marginals = [1, 2, 9].map((g) => ({ features: [`f${g}`, "f0"] as [string, string], probs: Array(16).fill(1 / 16) }));
  metas.push(gappy);
  for (const meta of metas) {
    const layout = layoutOf(meta);
    const got = pairBlockShapes(meta, layout.cardinalities, layout.offsets).blocks.map((b) => `${b.kf}x${b.w}`).sort();
    const want = buildTargets(meta).blocks.map((b) => `${layout.cardinalities[b.f]}x${b.c1 - b.c0}`).sort();
    assert.deepEqual(got, want);
  }
});

/**
 * Peak RSS growth of a `synthd serve` training one model (bench/memory.ts: VmHWM while training
 * minus RSS before the create; native core, AVX-512, 2 cores, 2 workers), bytes. The estimate must
 * stay an upper bound of each, within 1.7x.
 */
let adult: Promise<Metadata> | undefined;
const adultMeta = (): Promise<Metadata> => (adult ??= analyzeTable(ADULT_CSV).then((a) => a.metadata));
const synth = (F: number, K: number, pairs = 0) => async (): Promise<Metadata> => syntheticMetadata(F, K, pairs);
const MEASURED: { name: string; config: EstimateConfig; metadata: () => Promise<Metadata>; bytes: number }[] = [
  { name: "small", config: cfg({ model_size: "small" }), metadata: adultMeta, bytes: 51_023_872 },
  { name: "medium", config: cfg(), metadata: adultMeta, bytes: 77_701_120 },
  { name: "large", config: cfg({ model_size: "large" }), metadata: adultMeta, bytes: 289_685_504 },
  { name: "large, batch 8192, E 512", config: cfg({ model_size: "large", batch_size: 8192, embedding_dim: 512 }), metadata: adultMeta, bytes: 847_589_376 },
  { name: "large, resumed", config: cfg({ model_size: "large" }), metadata: adultMeta, bytes: 349_310_976 },
  { name: "heavy", config: HEAVY, metadata: synth(5, 4), bytes: 6_400_450_560 },
  { name: "heavy, privacy", config: { ...HEAVY, privacy_enabled: true }, metadata: synth(5, 4), bytes: 7_473_848_320 },
  { name: "large, batch 16384, E 4096", config: cfg({ model_size: "large", batch_size: 16384, embedding_dim: 4096 }), metadata: synth(5, 4), bytes: 1_774_977_024 },
  { name: "wide (200 x 1000), medium", config: cfg(), metadata: synth(200, 1000), bytes: 9_903_177_728 },
  { name: "wide (200 x 1000), small", config: cfg({ model_size: "small" }), metadata: synth(200, 1000), bytes: 5_191_950_336 },
  { name: "wide (200 x 1000), small, resumed", config: cfg({ model_size: "small" }), metadata: synth(200, 1000), bytes: 6_812_225_536 },
  { name: "150 pairs (dense), batch 1024", config: cfg({ batch_size: 1024 }), metadata: synth(40, 40, 150), bytes: 216_068_096 },
  { name: "60 pairs (blocks), batch 1024", config: cfg({ batch_size: 1024 }), metadata: synth(60, 100, 60), bytes: 539_619_328 },
];

test("the estimate is an upper bound of the measured peaks, within a sensible margin", async () => {
  for (const m of MEASURED) {
    const est = estimateTrainingMemory(m.config, await m.metadata(), { threads: 4 });
    const ratio = est.bytes / m.bytes;
    assert.ok(ratio >= 1 && ratio <= 1.7, `${m.name}: estimate ${formatBytes(est.bytes)}, measured ${formatBytes(m.bytes)} (${ratio.toFixed(2)}x)`);
  }
});

test("a model too large for the budget is explained by the field that dominates, with a value that fits", () => {
  const meta = syntheticMetadata(5, 4);
  const heavy = explainTooLarge(HEAVY, meta, 4 * GiB, "test budget");
  assert.equal(heavy.param, "body.config.batch_size");
  const n = Number(/batch_size to at most (\d+)/.exec(heavy.message)?.[1]);
  assert.ok(n > 0 && n < 65536, heavy.message);
  assert.ok(estimateTrainingMemory({ ...HEAVY, batch_size: n }, meta).bytes <= 4 * GiB);
  assert.ok(estimateTrainingMemory({ ...HEAVY, batch_size: n + 1 }, meta).bytes > 4 * GiB);
  assert.match(heavy.message, /needs an estimated [\d.]+ GiB .* training budget of 4\.0 GiB \(test budget\)/);

  const wide = explainTooLarge(cfg(), syntheticMetadata(200, 1000), 2 * GiB, "test budget");
  assert.equal(wide.param, "body.metadata.cardinalities");
  assert.match(wide.message, /fewer codes per feature .*200000 codes/);

  const wideEmbedding = explainTooLarge(cfg({ embedding_dim: 4096, batch_size: 16384, model_size: "small" }), meta, 512 * MiB, "b");
  assert.match(wideEmbedding.param, /^body\.config\.(batch_size|embedding_dim)$/);

  // Beyond the compute core's parameter limit, whatever the budget.
  const huge: Metadata = { features: ["x"], cardinalities: { x: 2 ** 21 }, empirical_probs: { x: [] } };
  const est = estimateTrainingMemory(cfg({ model_size: "large" }), huge);
  assert.ok(est.params > MAX_PARAMS);
  const why = explainTooLarge(cfg({ model_size: "large" }), huge, 1e15, "b");
  assert.match(why.message, /2\^30/);
});

// ---- the budget -----------------------------------------------------------------------------

test("memory sizes parse in bytes, binary and decimal units and shares; anything else is refused", () => {
  assert.equal(parseByteSize("1073741824"), GiB);
  assert.equal(parseByteSize("6GiB"), 6 * GiB);
  assert.equal(parseByteSize("6 gib"), 6 * GiB);
  assert.equal(parseByteSize("512MiB"), 512 * MiB);
  assert.equal(parseByteSize("512Mi"), 512 * MiB);
  assert.equal(parseByteSize("1.5G"), 1.5 * GiB);
  assert.equal(parseByteSize("8GB"), 8e9);
  assert.equal(parseByteSize("50%", 1000), 500);
  for (const bad of ["", "GiB", "-1GiB", "6 GiBs", "0", "1e3", "50 %%", "0.1"]) assert.throws(() => parseByteSize(bad), RangeError, bad);
  assert.equal(formatBytes(5.3 * GiB), "5.3 GiB");
  assert.equal(formatBytes(512), "512 B");
  const m = machineMemory();
  assert.ok(m > 0 && m <= totalmem());
});

// ---- the queue policy -----------------------------------------------------------------------

const limits = (over: Partial<QueueLimits> = {}): QueueLimits => ({ budgetBytes: 10, maxTrainingPerOrg: 10, maxQueuedPerOrg: 10, ...over });
let clock = 0;
const t = (id: string, org: string, bytes: number, createdMs = clock++) => ({ id, org, bytes, createdMs });
const ids = (xs: { id: string }[]): string[] => xs.map((x) => x.id);

test("queue: FIFO within the budget; a released reservation starts the next model", () => {
  const q = new AdmissionQueue(limits());
  for (const x of [t("a", "o", 4), t("b", "o", 4), t("c", "o", 4)]) q.enqueue(x);
  assert.deepEqual(ids(q.admit()), ["a", "b"]);
  assert.deepEqual(ids(q.waitingTickets()), ["c"]);
  assert.equal(q.reservedBytes, 8);
  assert.deepEqual(q.admit(), [], "nothing more fits");
  assert.equal(q.release("a"), true);
  assert.equal(q.release("a"), false, "no double release");
  assert.deepEqual(ids(q.admit()), ["c"]);
  assert.equal(q.reservedBytes, 8);
});

test("queue: a model held back by its org's limit does not hold back other orgs", () => {
  const q = new AdmissionQueue(limits({ maxTrainingPerOrg: 1 }));
  for (const x of [t("a1", "A", 1), t("a2", "A", 9), t("b1", "B", 5), t("a3", "A", 1), t("c1", "C", 1)]) q.enqueue(x);
  // a2 neither fits nor may start (A runs a1): it is skipped, not a blocker.
  assert.deepEqual(ids(q.admit()), ["a1", "b1", "c1"]);
  assert.deepEqual(ids(q.waitingTickets()), ["a2", "a3"]);
  q.release("a1");
  // a2 may start now but does not fit (3 free): it holds back a3 behind it.
  assert.deepEqual(q.admit(), []);
  q.release("b1");
  q.release("c1");
  assert.deepEqual(ids(q.admit()), ["a2"]);
});

test("queue: a model that does not fit holds back the smaller ones behind it (no starvation)", () => {
  const q = new AdmissionQueue(limits());
  q.enqueue(t("x", "A", 6));
  assert.deepEqual(ids(q.admit()), ["x"]);
  q.enqueue(t("big", "B", 8));
  for (let i = 0; i < 5; i++) q.enqueue(t(`small${i}`, "C", 1));
  assert.deepEqual(q.admit(), [], "the small ones would fit, but big is first");
  q.release("x");
  assert.deepEqual(ids(q.admit()), ["big", "small0", "small1"]);
});

test("queue: order is create time (a resume enqueues oldest first whatever the call order); waiting models can be removed", () => {
  const q = new AdmissionQueue(limits({ budgetBytes: 1 }));
  q.enqueue(t("late", "o", 1, 300));
  q.enqueue(t("early", "o", 1, 100));
  q.enqueue(t("middle", "o", 1, 200));
  q.enqueue(t("middle", "o", 1, 200)); // again: no-op
  assert.deepEqual(ids(q.waitingTickets()), ["early", "middle", "late"]);
  assert.equal(q.remove("middle"), true);
  assert.equal(q.remove("middle"), false);
  assert.deepEqual(ids(q.admit()), ["early"]);
  q.enqueue(t("early", "o", 1, 100)); // running: no-op
  assert.deepEqual(ids(q.waitingTickets()), ["late"]);
  assert.throws(() => q.enqueue(t("too-big", "o", 2)), RangeError);
  assert.equal(q.canEverFit(1), true);
  assert.equal(q.canEverFit(2), false);
});

test("queue: probe says start, wait or full, counting holds of concurrent creates until enqueued or expired", () => {
  let now = 0;
  const q = new AdmissionQueue(limits({ budgetBytes: 10, maxTrainingPerOrg: 2, maxQueuedPerOrg: 1 }), () => now);
  assert.equal(q.probe("A", 6), "start");
  q.hold("A", 6);
  assert.equal(q.probe("A", 6), "wait", "the held create takes the memory");
  q.hold("A", 6);
  assert.equal(q.probe("A", 6), "full", "A would have two waiting");
  assert.equal(q.probe("B", 6), "wait", "another org's queue is its own");
  assert.equal(q.probe("A", 4), "full", "FIFO: it would wait behind the held 6");
  assert.equal(q.claimHold("A"), 6);
  q.enqueue(t("a1", "A", 6));
  assert.equal(q.claimHold("A"), 6);
  q.enqueue(t("a2", "A", 6));
  assert.equal(q.claimHold("A"), undefined, "no hold left");
  assert.deepEqual(ids(q.admit()), ["a1"]);
  assert.equal(q.probe("A", 1), "full");
  q.hold("B", 1);
  now += HOLD_TTL_MS + 1;
  assert.equal(q.probe("B", 4), "wait", "the expired hold no longer counts; a2 holds back B");
  q.release("a1");
  assert.deepEqual(ids(q.admit()), ["a2"]);
  assert.equal(q.probe("A", 4), "start");
});

test("queue: a claimed hold gives its estimate back only when the org's holds of that config agree", () => {
  const q = new AdmissionQueue(limits({ budgetBytes: 100 }));
  q.hold("A", 5, "cfg1");
  q.hold("A", 7, "cfg1");
  q.hold("A", 9, "cfg2");
  assert.equal(q.claimHold("A", "cfg1"), undefined, "5 or 7: ambiguous (one hold consumed)");
  assert.equal(q.claimHold("A", "cfg1"), 7);
  assert.equal(q.claimHold("A", "cfg1"), undefined);
  assert.equal(q.claimHold("B", "cfg2"), undefined, "another org's hold");
  assert.equal(q.claimHold("A", "cfg2"), 9);
});

test("queue: with no waiting allowed, only a model that starts at once is accepted", () => {
  const q = new AdmissionQueue(limits({ maxTrainingPerOrg: 1, maxQueuedPerOrg: 0 }));
  assert.equal(q.probe("A", 6), "start");
  q.enqueue(t("a", "A", 6));
  q.admit();
  assert.equal(q.probe("A", 1), "full", "org limit");
  assert.equal(q.probe("B", 5), "full", "memory");
  assert.equal(q.probe("B", 4), "start");
  assert.throws(() => new AdmissionQueue(limits({ maxTrainingPerOrg: 0 })), RangeError);
  assert.throws(() => new AdmissionQueue(limits({ maxQueuedPerOrg: -1 })), RangeError);
});

test("queue: memory held outside the reservations reduces what is free", () => {
  const q = new AdmissionQueue(limits());
  q.setUnaccounted(5);
  q.enqueue(t("a", "A", 6));
  assert.deepEqual(q.admit(), []);
  assert.deepEqual(q.headBlocked(), { blocked: true, becauseUnaccounted: true });
  q.setUnaccounted(-3); // clamped
  assert.equal(q.unaccountedBytes, 0);
  assert.deepEqual(ids(q.admit()), ["a"]);
  assert.deepEqual(q.headBlocked(), { blocked: false, becauseUnaccounted: false });
});

// ---- the engine -----------------------------------------------------------------------------

interface Env {
  dir: string;
  store: Store;
  engines: PoolEngine[];
  /** Messages the engines logged. */
  logs: string[];
  done(): Promise<void>;
}

function env(): Env {
  const dir = mkdtempSync(join(tmpdir(), "synthd-admission-"));
  const store = new Store(dir);
  const engines: PoolEngine[] = [];
  const logs: string[] = [];
  return {
    dir,
    store,
    engines,
    logs,
    async done() {
      for (const e of engines) await e.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function start(e: Env, over: Partial<EngineOptions> = {}): Promise<PoolEngine> {
  const logger = pino({ level: "debug" }, { write: (line: string) => void e.logs.push((JSON.parse(line) as { msg: string }).msg) });
  const engine = await createEngine({ store: e.store, dataDir: e.dir, workers: 2, logger, ...over });
  e.engines.push(engine);
  return engine;
}

async function until(pred: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const status = async (store: StoreApi, id: string): Promise<ModelRecord> => (await store.getModel(id)) as ModelRecord;

/** Stores a `training` model of org `o` created at `createdAt`, as Create Model does. */
async function addModelAt(store: Store, config: ModelConfig, createdAt: string): Promise<string> {
  const rec: ModelRecord = {
    id: newModelId(),
    org: "o",
    env: "test",
    status: "training",
    config,
    current_epoch: 0,
    train_loss: null,
    val_loss: null,
    created_at: createdAt,
    updated_at: createdAt,
    error: null,
  };
  await store.createModel(rec, TINY_META);
  return rec.id;
}
const ended = async (store: StoreApi, id: string): Promise<boolean> => (await status(store, id)).status !== "training";

test("engine: a model that can never fit is refused with the field to lower; the org's queue bound gives OrgQueueFullError (429)", async () => {
  const e = env();
  try {
    // A budget of the process's current RSS plus 2 GiB: the base takes the RSS plus headroom.
    const engine = await start(e, { memoryBudget: process.memoryUsage.rss() + 2 * GiB, maxTrainingPerOrg: 1, maxQueuedPerOrg: 1 });
    const state = engine.admission();
    assert.ok(state.trainingBudgetBytes > GiB && state.trainingBudgetBytes < 2 * GiB, JSON.stringify(state));
    const heavy: ModelConfig = { ...CONFIG_DEFAULTS, ...HEAVY, device: "cpu" };
    assert.throws(
      () => engine.admissionCheck(heavy, syntheticMetadata(5, 4), "o"),
      (err: unknown) => err instanceof ModelTooLargeError && err.param === "body.config.batch_size" && /at most \d+/.test(err.message),
    );
    const small = fastConfig(1000);
    engine.admissionCheck(small, TINY_META, "o"); // starts at once
    engine.admissionCheck(small, TINY_META, "o"); // waits (org limit 1)
    assert.throws(
      () => engine.admissionCheck(small, TINY_META, "o"),
      (err: unknown) => err instanceof OrgQueueFullError && err.retryAfterSeconds > 0 && err.limit === 1 && /already has 1 model waiting/.test(err.message),
    );
    engine.admissionCheck(small, TINY_META, "other-org");

    // A stored model that cannot fit (e.g. a smaller budget after a restart) fails instead of waiting forever.
    const id = await addTrainingModel(e.store, heavy, syntheticMetadata(5, 4));
    await engine.train(id);
    await until(() => ended(e.store, id), "the unservable model to fail");
    assert.equal((await status(e.store, id)).status, "failed");
    assert.match((await status(e.store, id)).error?.message ?? "", /needs an estimated/);
  } finally {
    await e.done();
  }
});

test("engine: by default an org's burst of 1,000 creates beyond its training slots is queued, the next one gets OrgQueueFullError; other orgs are not held back", async () => {
  const e = env();
  try {
    const engine = await start(e);
    assert.equal(DEFAULT_MAX_QUEUED_PER_ORG, 1000);
    const small = fastConfig(2);
    const slots = engine.admission().maxTrainingPerOrg;
    // Concurrent creates: each admission check holds its place until the model is queued.
    for (let i = 0; i < slots + DEFAULT_MAX_QUEUED_PER_ORG; i++) engine.admissionCheck(small, TINY_META, "burst");
    assert.throws(
      () => engine.admissionCheck(small, TINY_META, "burst"),
      (err: unknown) => err instanceof OrgQueueFullError && err.limit === 1000 && err.retryAfterSeconds > 0 && /already has 1000 models waiting/.test(err.message),
    );
    engine.admissionCheck(small, TINY_META, "other-org");
  } finally {
    await e.done();
  }
});

test("engine: beyond the org's limit models wait (still training, epoch 0) and start as others end; delete of a waiting model dequeues it", async () => {
  const e = env();
  try {
    const engine = await start(e, { maxTrainingPerOrg: 1 });
    const long = await addTrainingModel(e.store, fastConfig(1000), TINY_META);
    const next = await addTrainingModel(e.store, fastConfig(2), TINY_META);
    const dropped = await addTrainingModel(e.store, fastConfig(2), TINY_META);
    for (const id of [long, next, dropped]) await engine.train(id);
    assert.deepEqual(engine.trainingIds(), [long]);
    assert.deepEqual(engine.waitingIds(), [next, dropped]);
    assert.equal(engine.admission().running.length, 1);
    await until(async () => (await status(e.store, long)).current_epoch >= 1, "an epoch of the first model");
    assert.equal((await status(e.store, next)).current_epoch, 0, "a waiting model makes no progress");
    assert.equal((await status(e.store, next)).status, "training");

    await engine.stop(dropped); // what Delete Model does first
    assert.deepEqual(engine.waitingIds(), [next]);
    await engine.stop(long);
    await until(() => ended(e.store, next), "the waiting model to train once the first one ended");
    assert.equal((await status(e.store, next)).status, "ready");
    assert.equal((await status(e.store, dropped)).current_epoch, 0, "the dequeued model never started");
    assert.deepEqual(engine.waitingIds(), []);
    await until(() => engine.admission().reservedBytes === 0, "every reservation released");
  } finally {
    await e.done();
  }
});

test("engine: resume queues every training model oldest first through the same limits", async () => {
  const e = env();
  try {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      // The last one made is the oldest.
      made.push(await addModelAt(e.store, fastConfig(2), new Date(Date.UTC(2026, 0, 1) + (3 - i) * 1000).toISOString()));
    }
    const engine = await start(e, { maxTrainingPerOrg: 1 });
    assert.equal(await engine.resumeAll(), 3);
    assert.deepEqual(engine.trainingIds(), [made[2]], "the oldest starts");
    assert.deepEqual(engine.waitingIds(), [made[1], made[0]]);
    await until(async () => (await Promise.all(made.map((id) => ended(e.store, id)))).every(Boolean), "all three");
    assert.deepEqual((await Promise.all(made.map((id) => status(e.store, id)))).map((r) => r.status), ["ready", "ready", "ready"]);
  } finally {
    await e.done();
  }
});

test("engine: a worker death resumes the model on its reservation, without a second one or a leak", async () => {
  const e = env();
  try {
    const engine = await start(e, { workers: 1, maxTrainingPerOrg: 1 });
    const first = await addTrainingModel(e.store, fastConfig(4), TINY_META);
    const second = await addTrainingModel(e.store, fastConfig(1), TINY_META);
    await engine.train(first);
    await engine.train(second);
    await until(async () => (await status(e.store, first)).current_epoch >= 1, "an epoch");
    const reserved = engine.admission().reservedBytes;
    await engine.threads()[0].terminate();
    await until(() => e.logs.includes("training worker lost; resuming from the last checkpoint"), "the resumed task");
    const state = engine.admission();
    assert.deepEqual(ids(state.running), [first], "still one reservation, the same model's");
    assert.equal(state.reservedBytes, reserved);
    assert.deepEqual(ids(state.waiting), [second], "the waiting model did not start beside it");
    await until(async () => (await ended(e.store, first)) && (await ended(e.store, second)), "both models");
    assert.equal((await status(e.store, first)).status, "ready");
    assert.equal((await status(e.store, second)).status, "ready");
    await until(() => engine.admission().reservedBytes === 0, "every reservation released");
  } finally {
    await e.done();
  }
});

test("engine: a budget below the server's own footprint is refused at start", async () => {
  const e = env();
  try {
    await assert.rejects(start(e, { memoryBudget: 64 * MiB }), /leaves nothing for training/);
  } finally {
    await e.done();
  }
});
