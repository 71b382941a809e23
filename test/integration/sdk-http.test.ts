/**
 * The SDK against the real server process over HTTP: fit -> ready -> sample -> decode, the
 * resource endpoints, typed errors, and the API staying responsive while models train.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  Synthd,
  Synthesizer,
  NotFoundError,
  InvalidRequestError,
  AuthenticationError,
  type Model,
} from "../../src/sdk";
import { ADULT_CSV, removeDir, startServer, tempDir, waitFor, type ServerProcess } from "../../bench/harness";

let server: ServerProcess;
let dir: string;
let client: Synthd;
let smallCsv: string;

before(async () => {
  dir = tempDir();
  server = await startServer(join(dir, "store"), ["--workers", "2"]);
  assert.match(server.sandboxKey ?? "", /^svc_test_/);
  client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
  // The first 3,000 rows of Adult: real data, small enough for a few quick epochs.
  const lines = readFileSync(ADULT_CSV, "utf8").split("\n");
  smallCsv = join(dir, "adult-3000.csv");
  writeFileSync(smallCsv, lines.slice(0, 3001).join("\n") + "\n");
});

after(async () => {
  await server?.kill("SIGTERM");
  removeDir(dir);
});

test("fit on a real table reaches ready; the same seed samples the same rows with the original columns", async () => {
  const synth = await Synthesizer.fit(client, smallCsv, {
    config: { model_size: "small", max_epochs: 2 },
    waitOptions: { pollIntervalMs: 200 },
  });
  assert.equal(synth.model.status, "ready");
  assert.equal(synth.model.current_epoch > 0, true);
  assert.equal(typeof synth.model.train_loss, "number");
  assert.equal(typeof synth.model.val_loss, "number");
  const header = readFileSync(smallCsv, "utf8").split("\n")[0].split(",");
  const a = await synth.sample(500, { seed: 11 });
  const b = await synth.sample(500, { seed: 11 });
  const c = await synth.sample(500, { seed: 12 });
  assert.deepEqual(a.columns, header);
  assert.equal(a.rows.length, 500);
  assert.deepEqual(a.rows, b.rows);
  assert.notDeepEqual(a.rows, c.rows);
  const age = header.indexOf("age");
  const income = header.indexOf("income");
  for (const r of a.rows) {
    assert.match(r[age], /^\d+$/, "an integer column decodes to integers");
    assert.ok(["<=50K", ">50K"].includes(r[income]), `income is a real category, got ${r[income]}`);
  }
});

test("get, list, metadata and delete go through the SDK; a deleted model is not found", async () => {
  const synth = await Synthesizer.fit(client, smallCsv, { config: { model_size: "small", max_epochs: 1 }, wait: false });
  const got = await client.models.retrieve(synth.id);
  assert.equal(got.id, synth.id);
  assert.match(got.id, /^mdl_[0-9a-f]{12}$/);
  const listed: string[] = [];
  for await (const m of client.models.list({ limit: 1 })) listed.push(m.id);
  assert.equal(listed[0], synth.id, "newest first");
  assert.equal(new Set(listed).size, listed.length, "auto-pagination yields each model once");
  const meta = await client.models.metadata(synth.id);
  assert.deepEqual(meta.features, synth.metadata.features);
  await client.models.delete(synth.id);
  await assert.rejects(client.models.retrieve(synth.id), NotFoundError);
  await assert.rejects(client.models.generate(synth.id, { embedding: { num_rows: 1 } }), NotFoundError);
});

test("a malformed body raises InvalidRequestError naming the parameter; a wrong key raises AuthenticationError", async () => {
  await assert.rejects(
    client.models.create({
      metadata: { features: ["a"], cardinalities: { a: 2 }, empirical_probs: { a: [0.5, 0.5] } },
      config: { batch_size: 0 },
    }),
    (e: unknown) => e instanceof InvalidRequestError && e.param === "body.config.batch_size",
  );
  const bad = new Synthd({ apiKey: "svc_test_not_a_key", baseUrl: server.url, maxRetries: 0 });
  await assert.rejects(async () => bad.models.list(), (e: unknown) => e instanceof AuthenticationError && e.code === "api_key_invalid");
});

test("GET /v1/models/{id} keeps answering while two models train", async () => {
  // More epochs than the test waits for: it stops both models (DELETE) once it has seen what it
  // asks, so a fast machine cannot finish training between two answers and a slow one only waits longer.
  const config = { model_size: "medium" as const, max_epochs: 500, early_stop_patience: 0 };
  // No near-copy filter: building it from the rows on this thread would delay the second create
  // until the first model is nearly trained.
  const [m1, m2] = await Promise.all([
    Synthesizer.fit(client, ADULT_CSV, { config, wait: false, nearCopyFilter: false }),
    Synthesizer.fit(client, ADULT_CSV, { config, wait: false, nearCopyFilter: false }),
  ]);
  try {
    // Training must progress on the workers while the HTTP thread answers: an answer finds both
    // training at once, and each model's epoch advances between answers given while it trains.
    const epochsWhileTraining = [new Set<number>(), new Set<number>()];
    let answersWhileBothTraining = 0;
    await waitFor("both models to train at once and each to advance an epoch", async () => {
      const [a, b]: Model[] = await Promise.all([client.models.retrieve(m1.id), client.models.retrieve(m2.id)]);
      assert.ok(a.status !== "failed" && b.status !== "failed", `a model failed: ${a.status}, ${b.status}`);
      if (a.status === "training") epochsWhileTraining[0].add(a.current_epoch);
      if (b.status === "training") epochsWhileTraining[1].add(b.current_epoch);
      if (a.status === "training" && b.status === "training") answersWhileBothTraining++;
      return answersWhileBothTraining >= 1 && epochsWhileTraining.every((s) => s.size >= 2) ? true : undefined;
    }, 300_000, 100);
  } finally {
    await Promise.all([client.models.delete(m1.id), client.models.delete(m2.id)]);
  }
});
