/**
 * Synthesizer fit/sample/writeCsv against a fake server that implements the endpoints it uses
 * (create, get, metadata, generate with seeded codes).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { DataError, MIN_ROWS, Rng, Synthd, Synthesizer, fitConfig, type CreateModelRequest, type GenerateRequest, type LatentSpec, type Metadata, type Model } from "../src/sdk";
import { filterDrawCap } from "../src/sdk/generate/synthesizer";
import { evaluate } from "../src/sdk/evaluate";
import { CONFIG_DEFAULTS } from "../src/contract";
import { MAJOR_FIELDS, majors } from "./rules-fixtures";

const ADULT = "/work/shared/datasets/adult.csv";
const dir = mkdtempSync(join(tmpdir(), "synthd-sdk-synth-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

/** Fake synthd: one model; generate draws each code from the 1-way marginal with the request's seed. */
async function fakeServer() {
  let metadata: Metadata | undefined;
  let polls = 0;
  const generateBodies: GenerateRequest[] = [];
  const createBodies: CreateModelRequest[] = [];
  const now = new Date(0).toISOString();
  const model = (status: Model["status"]): Model => ({
    id: "mdl_0123456789ab",
    status,
    config: { ...CONFIG_DEFAULTS, device: "cpu" },
    current_epoch: polls,
    train_loss: null,
    val_loss: null,
    created_at: now,
    updated_at: now,
    error: null,
  });
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const send = (status: number, object: string, data: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ object, data, metadata: { timestamp: now } }));
      };
      if (req.method === "POST" && req.url === "/v1/models") {
        createBodies.push(JSON.parse(body) as CreateModelRequest);
        metadata = createBodies[createBodies.length - 1].metadata;
        return send(201, "model", model("training"));
      }
      if (req.method === "GET" && req.url === "/v1/models/mdl_0123456789ab") {
        polls++;
        return send(200, "model", model(polls >= 2 ? "ready" : "training"));
      }
      if (req.method === "GET" && req.url === "/v1/models/mdl_0123456789ab/metadata") return send(200, "model_metadata", metadata);
      if (req.method === "POST" && req.url === "/v1/models/mdl_0123456789ab/generate") {
        const g = JSON.parse(body) as GenerateRequest;
        generateBodies.push(g);
        const { num_rows, seed } = g.embedding as LatentSpec;
        const rng = new Rng(seed ?? 0);
        const columns: Record<string, number[]> = {};
        for (const f of metadata!.features) {
          const p = metadata!.empirical_probs[f];
          columns[f] = Array.from({ length: num_rows }, () => {
            let u = rng.next();
            for (let k = 0; k < p.length; k++) if ((u -= p[k]) < 0) return k;
            return p.length - 1;
          });
        }
        return send(200, "generation", { model_id: "mdl_0123456789ab", num_rows, features: metadata!.features, columns });
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // close drops open connections first: a request left in flight by a failed test cannot hold it open.
  return { url, generateBodies, createBodies, close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())) };
}

test("fit extracts metadata, creates the model and waits; sample batches and decodes", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const progress: number[] = [];
    const synth = await Synthesizer.fit(client, ADULT, {
      config: { max_epochs: 3 },
      waitOptions: { pollIntervalMs: 5 },
      onProgress: (m) => progress.push(m.current_epoch),
    });
    assert.equal(synth.id, "mdl_0123456789ab");
    assert.equal(synth.model.status, "ready");
    assert.deepEqual(progress, [1, 2]);
    assert.equal(synth.metadata.features.length, 15);
    const batches: number[] = [];
    // Batching alone: the near-copy filter (on by default) would drop rows and top them up.
    const t = await synth.sample(250, { seed: 3, batchSize: 100, temperature: 0.8, nearCopyFilter: false, onProgress: (p) => batches.push(p.rowsDone) });
    assert.equal(t.rows.length, 250);
    assert.deepEqual(t.columns, synth.metadata.features);
    assert.deepEqual(batches, [100, 200, 250]);
    const sizes = srv.generateBodies.map((b) => (b.embedding as LatentSpec).num_rows);
    assert.deepEqual(sizes, [100, 100, 50]);
    const seeds = srv.generateBodies.map((b) => (b.embedding as LatentSpec).seed);
    assert.equal(new Set(seeds).size, 3, "a different derived seed per batch");
    assert.ok(srv.generateBodies.every((b) => b.temperature === 0.8 && b.top_p === undefined));
    assert.ok(srv.generateBodies.every((b) => (b.embedding as LatentSpec).calibrate === true), "calibrated by default");
  } finally {
    await srv.close();
  }
});

test("sampleWithCodes: the rows sample gives for the seed, and each row's generated code of the features asked for, across batches", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const synth = await Synthesizer.fit(client, ADULT, { wait: false });
    const opts = { seed: 7, batchSize: 100, nearCopyFilter: false };
    const plain = await synth.sample(250, opts);
    const { table, codes } = await synth.sampleWithCodes(250, ["sex", "race"], opts);
    assert.deepEqual(table, plain);
    // Row rules (a husband is male) rewrite a few decoded cells; the codes are as drawn.
    for (const [k, f] of ["sex", "race"].entries()) {
      const j = table.columns.indexOf(f);
      const mapping = synth.metadata.value_mappings![f];
      assert.equal(codes[k].length, 250);
      const agree = table.rows.filter((r, i) => mapping[r[j]] === codes[k][i]).length;
      assert.ok(agree >= 0.9 * 250, `${f}: a row's value is its code's (${agree} of 250)`);
    }
    await assert.rejects(synth.sampleWithCodes(5, ["no such"], opts), RangeError);
  } finally {
    await srv.close();
  }
});

test("the same seed gives a byte-identical CSV with the original header; fromModel decodes the same", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const synth = await Synthesizer.fit(client, ADULT, { wait: false });
    const a = join(dir, "a.csv");
    const b = join(dir, "b.csv");
    assert.equal(await synth.writeCsv(a, 1500, { seed: 42, batchSize: 1000 }), 1500);
    const again = await Synthesizer.fromModel(client, synth.id);
    assert.deepEqual(again.metadata, synth.metadata);
    await again.writeCsv(b, 1500, { seed: 42, batchSize: 1000 });
    const textA = readFileSync(a);
    assert.ok(textA.equals(readFileSync(b)), "byte-identical");
    assert.equal(textA.toString().split("\n")[0], readFileSync(ADULT, "utf8").split("\n")[0].trim(), "original header, original order");
    assert.equal(textA.toString().trimEnd().split("\n").length, 1501);
    const c = join(dir, "c.csv");
    await synth.writeCsv(c, 1500, { seed: 43, batchSize: 1000 });
    assert.ok(!textA.equals(readFileSync(c)), "another seed, other rows");
    // streams: written to a PassThrough that stays open
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on("data", (d) => chunks.push(d));
    await synth.writeCsv(sink, 1500, { seed: 42, batchSize: 1000 });
    assert.ok(Buffer.concat(chunks).equals(textA));
    assert.equal(sink.writableEnded, false, "a caller's stream is left open");
    // the fake draws independent columns: evaluable like any synthetic file
    const r = await evaluate(ADULT, a);
    assert.ok(r.tvd["1"] < 0.1 && r.tvd["2"] > r.tvd["1"]);
  } finally {
    await srv.close();
  }
});

test("calibrate: off on request, and off by default for metadata measured with privacy noise", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    const synth = await Synthesizer.fit(client, ADULT, { wait: false });
    assert.equal(synth.isPrivate(), false);
    await synth.sample(10, { calibrate: false });
    assert.equal((srv.generateBodies.at(-1)!.embedding as LatentSpec).calibrate, undefined, "the plain draw sends nothing");
    // As `privacy` records it (src/sdk/metadata/dp.ts): the budget on every column's stats.
    for (const stats of Object.values(synth.metadata.column_stats!)) stats.privacy = { epsilon: 1, delta: 1e-9, rho: 0.015, sigma: 36.8 };
    assert.equal(synth.isPrivate(), true);
    await synth.sample(10);
    assert.equal((srv.generateBodies.at(-1)!.embedding as LatentSpec).calibrate, undefined);
    await synth.sample(10, { calibrate: true });
    assert.equal((srv.generateBodies.at(-1)!.embedding as LatentSpec).calibrate, true, "an explicit true wins");
  } finally {
    await srv.close();
  }
});

test("sample validates n and batchSize", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    const synth = await Synthesizer.fit(client, ADULT, { wait: false });
    await assert.rejects(synth.sample(0), RangeError);
    await assert.rejects(synth.sample(10, { batchSize: 100_001 }), RangeError);
  } finally {
    await srv.close();
  }
});

test("sampleBatches asks for the next batch while the current one is consumed, and nothing past the last", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "k", baseUrl: srv.url });
    const synth = await Synthesizer.fit(client, ADULT, { wait: false });
    const before = srv.generateBodies.length;
    const it = synth.sampleBatches(3000, { batchSize: 1000, seed: 5, calibrate: false });
    const first = await it.next();
    assert.equal(first.value?.rows.length, 1000);
    // The second request goes out before the first batch is taken further.
    for (let i = 0; i < 200 && srv.generateBodies.length < before + 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(srv.generateBodies.length, before + 2, "one request ahead");
    let rows = 1000;
    for await (const t of it) rows += t.rows.length;
    assert.equal(rows, 3000);
    assert.equal(srv.generateBodies.length, before + 3, "no request past the last batch");
  } finally {
    await srv.close();
  }
});

test("fit: a table under 20 rows is a DataError before any request (a 1-row table is not copied back); minRows lowers the limit", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const rows = (n: number) => ({ columns: ["a", "b"], rows: Array.from({ length: n }, (_, i) => [String(i % 3), "xyz"[i % 2]]) });
    assert.equal(MIN_ROWS, 20);
    await assert.rejects(Synthesizer.fit(client, rows(1)), (e: unknown) => {
      assert.ok(e instanceof DataError);
      assert.match(e.message, /has 1 data row; at least 20 are needed to model it, because .* copies of the rows/);
      return true;
    });
    await assert.rejects(Synthesizer.fit(client, rows(19)), /has 19 data rows; at least 20/);
    assert.equal(srv.createBodies.length, 0, "no model was created");
    await Synthesizer.fit(client, rows(20), { wait: false });
    await Synthesizer.fit(client, rows(1), { wait: false, minRows: 1 });
    assert.equal(srv.createBodies.length, 2);
  } finally {
    await srv.close();
  }
});

test("fit: model_size and max_epochs the config leaves out are chosen by the table's rows and sent explicitly", async () => {
  assert.deepEqual(fitConfig(20).config, { model_size: "small", max_epochs: 15 });
  assert.deepEqual(fitConfig(499).config, { model_size: "small", max_epochs: 15 });
  assert.deepEqual(fitConfig(500).config, { model_size: "small", max_epochs: 30 });
  assert.deepEqual(fitConfig(999).config, { model_size: "small", max_epochs: 30 });
  assert.deepEqual(fitConfig(1_000).config, { model_size: "small", max_epochs: 60 });
  assert.deepEqual(fitConfig(9_999).config, { model_size: "small", max_epochs: 60 });
  assert.deepEqual(fitConfig(10_000).config, { model_size: "medium", max_epochs: 100 });
  assert.deepEqual(fitConfig(406, { max_epochs: 5, batch_size: 64 }), { config: { model_size: "small", max_epochs: 5, batch_size: 64 }, chosen: ["model_size"] });
  assert.deepEqual(fitConfig(406, { model_size: "L", max_epochs: 7 }).chosen, [], "what the caller gave is kept");
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const table = { columns: ["a", "b"], rows: Array.from({ length: 406 }, (_, i) => [String(i % 3), "xyz"[i % 2]]) };
    const seen: unknown[] = [];
    await Synthesizer.fit(client, table, { wait: false, onConfig: (c, chosen, rows) => seen.push({ c, chosen, rows }) });
    assert.deepEqual(srv.createBodies[0].config, { model_size: "small", max_epochs: 15 });
    assert.deepEqual(seen, [{ c: { model_size: "small", max_epochs: 15 }, chosen: ["model_size", "max_epochs"], rows: 406 }]);
    assert.deepEqual(srv.createBodies[0].metadata.column_stats?.b?.rare_threshold, 2, "406 rows keep k = 2 (k = 5 cost cars its fidelity)");
    await Synthesizer.fit(client, { columns: table.columns, rows: table.rows.slice(0, 100) }, { wait: false });
    assert.deepEqual(srv.createBodies[1].metadata.column_stats?.b?.rare_threshold, 5, "a table under 160 rows gets k = 5 (issue 24: near-copies)");
    await Synthesizer.fit(client, table, { wait: false, config: { model_size: "medium", max_epochs: 100 } });
    assert.deepEqual(srv.createBodies[2].config, { model_size: "medium", max_epochs: 100 });
  } finally {
    await srv.close();
  }
});

test("a near-copy filter that drops every row stops after drawing 3 times the rows asked for, at least 1,024, and says how many rows it did not check", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const synth = await Synthesizer.fit(client, ADULT, { waitOptions: { pollIntervalMs: 5 }, nearCopyFilter: false });
    let checked = 0;
    // A filter under which every row is a near-copy (a table whose rows all look alike).
    synth.nearCopyFilter = { keep: async (batch: { rows: unknown[] }) => ((checked += batch.rows.length), []) } as unknown as typeof synth.nearCopyFilter;
    const seen: (number | undefined)[] = [];
    const t = await synth.sample(100, { seed: 1, onProgress: (p) => seen.push(p.unfiltered) });
    assert.equal(t.rows.length, 100, "the rows asked for are written");
    assert.equal(filterDrawCap(100), 1024, "a small sample may draw 1,024 rows");
    assert.equal(filterDrawCap(10_000), 30_016);
    assert.ok(checked >= 1024 && checked <= 1024 + 100, `rows checked ${checked}`);
    assert.equal(seen[seen.length - 1], 100, "every written row is reported unchecked");
    assert.equal(seen[0], undefined, "the first batch was checked");
  } finally {
    await srv.close();
  }
});

test("sample: a grid whose rows are all near-copies keeps its key once the filter stops, from the rows the filter dropped", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    // Each (variety, site) once with its yield: every coherent synthetic row is a near-copy.
    const rng = new Rng(3);
    const rows = Array.from({ length: 120 }, (_, i) => [`variety ${i % 12}`, `site ${Math.floor(i / 12)}`, String(20 + rng.int(40))]);
    const synth = await Synthesizer.fit(client, { columns: ["variety", "site", "yield"], rows }, { wait: false, nearCopyFilter: false });
    assert.ok(synth.metadata.rules?.some((r) => r.type === "unique" && r.columns.join() === "variety,site"));
    let drawn = 0;
    synth.nearCopyFilter = { keep: async (batch: { rows: unknown[] }) => ((drawn += batch.rows.length), []) } as unknown as typeof synth.nearCopyFilter;
    let last: { unfiltered?: number; unkeyed?: number } = {};
    const t = await synth.sample(100, { seed: 4, onProgress: (p) => void (last = p) });
    assert.equal(t.rows.length, 100);
    assert.equal(new Set(t.rows.map((r) => `${r[0]}|${r[1]}`)).size, 100, "no key repeated");
    assert.deepEqual([last.unfiltered, last.unkeyed ?? 0], [100, 0], "every row is written past the filter, none past the key check");
    assert.ok(drawn <= filterDrawCap(100), `rows drawn ${drawn}: no more than the filter's bound`);
  } finally {
    await srv.close();
  }
});

test("sample: a key's spare rows are written farthest from the real rows first, and a non-copy of a key is kept over its near-copy drawn first", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    // Each (variety, site) once: grade A marks a row the filter below finds no real row near, B a near-copy.
    const rng = new Rng(3);
    const rows = Array.from({ length: 120 }, (_, i) => [`variety ${i % 12}`, `site ${Math.floor(i / 12)}`, i % 10 === 0 ? "A" : "B", String(20 + rng.int(40))]);
    const synth = await Synthesizer.fit(client, { columns: ["variety", "site", "grade", "yield"], rows }, { wait: false, nearCopyFilter: false });
    assert.ok(synth.metadata.rules?.some((r) => r.type === "unique" && r.columns.join() === "variety,site"));
    // Every decoded row, kept or not: the cells an A row was drawn for.
    const drawnA = new Set<string>();
    const decode = synth.decoder.decodeBatch.bind(synth.decoder);
    synth.decoder.decodeBatch = (...args: Parameters<typeof decode>) => {
      const b = decode(...args);
      for (const r of b.toTable().rows) if (r[2] === "A") drawnA.add(`${r[0]}|${r[1]}`);
      return b;
    };
    // A filter in drop mode: keeps the A rows (those first, one per key), drops every B row as a near-copy.
    type Opts = { claim?: (r: number) => boolean; onDistance?: (d: Uint8Array) => void };
    synth.nearCopyFilter = {
      keep: async (batch: { rows: string[][] }, _tally: unknown, limit: number, _balance: unknown, opts: Opts = {}) => {
        opts.onDistance?.(Uint8Array.from(batch.rows, (r) => (r[2] === "A" ? 2 : 1)));
        const out: number[] = [];
        batch.rows.forEach((r, i) => void (r[2] === "A" && out.length < limit && (opts.claim?.(i) ?? true) && out.push(i)));
        return out.sort((a, b) => a - b);
      },
    } as unknown as typeof synth.nearCopyFilter;
    const t = await synth.sample(100, { seed: 4 });
    assert.equal(t.rows.length, 100);
    assert.equal(new Set(t.rows.map((r) => `${r[0]}|${r[1]}`)).size, 100, "no key repeated");
    const writtenA = t.rows.filter((r) => r[2] === "A").map((r) => `${r[0]}|${r[1]}`);
    assert.ok(drawnA.size >= 20 && drawnA.size < 100, `cells drawn with an A row: ${drawnA.size}`);
    assert.deepEqual(writtenA.sort(), [...drawnA].sort(), "every cell an A row was drawn for is written with one");
  } finally {
    await srv.close();
  }
});

test("sample: R's row names are written 1 .. n without gaps when the near-copy filter drops rows, spare rows included", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const rng = new Rng(3);
    // A grid (each (variety, site) once) written with R's row names 1 .. 120.
    const rows = Array.from({ length: 120 }, (_, i) => [String(i + 1), `variety ${i % 12}`, `site ${Math.floor(i / 12)}`, String(20 + rng.int(40))]);
    const synth = await Synthesizer.fit(client, { columns: ["rownames", "variety", "site", "yield"], rows }, { wait: false, nearCopyFilter: false });
    const st = synth.metadata.column_stats?.rownames;
    assert.ok(st?.type === "id" && st.id_shape?.kind === "integer" && st.id_shape.counter === true, JSON.stringify(st));
    const numbers = (t: { rows: string[][] }) => t.rows.map((r) => r[0]);
    const oneToN = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1));
    // A filter that drops every other row it is shown: the kept rows' drawn numbers have gaps.
    type Opts = { claim?: (r: number) => boolean };
    synth.nearCopyFilter = {
      keep: async (batch: { rows: unknown[] }, _tally: unknown, limit: number, _balance: unknown, opts: Opts = {}) => {
        const out: number[] = [];
        for (let i = 0; i < batch.rows.length && out.length < limit; i += 2) if (opts.claim?.(i) ?? true) out.push(i);
        return out;
      },
    } as unknown as typeof synth.nearCopyFilter;
    assert.deepEqual(numbers(await synth.sample(100, { seed: 4 })), oneToN(100));
    // A filter that drops every row: the sample is filled from its spare rows, numbered on.
    synth.nearCopyFilter = { keep: async () => [] } as unknown as typeof synth.nearCopyFilter;
    assert.deepEqual(numbers(await synth.sample(100, { seed: 4 })), oneToN(100));
    // Without the filter, the same numbers.
    assert.deepEqual(numbers(await synth.sample(100, { seed: 4, nearCopyFilter: false })), oneToN(100));
  } finally {
    await srv.close();
  }
});

test("sample: a daily series sampled at half its length repeats no date (rows repeating one are redrawn)", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const day = (i: number): string => new Date(Date.UTC(2021, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
    const rng = new Rng(5);
    const rows = Array.from({ length: 300 }, (_, i) => [day(i), String(Math.round(1000 + 500 * rng.next()))]);
    const synth = await Synthesizer.fit(client, { columns: ["date", "riders"], rows }, { wait: false, nearCopyFilter: false });
    assert.ok(synth.metadata.rules?.some((r) => r.type === "unique" && r.columns.join() === "date"));
    let unkeyed = 0;
    // Half the key space: within the draws a key may cost (3n + 16, the near-copy filter's bound).
    const t = await synth.sample(150, { seed: 2, onProgress: (p) => void (unkeyed = p.unkeyed ?? 0) });
    assert.equal(t.rows.length, 150);
    assert.equal(unkeyed, 0);
    assert.equal(new Set(t.rows.map((r) => r[0])).size, 150);
  } finally {
    await srv.close();
  }
});

test("sample: an identifier whose prefix names its category keeps its codes distinct when the near-copy filter drops rows (a dropped row's code is free again)", async () => {
  const srv = await fakeServer();
  try {
    const client = new Synthd({ apiKey: "svc_test_x", baseUrl: srv.url });
    const synth = await Synthesizer.fit(client, majors(), { wait: false, nearCopyFilter: false });
    assert.ok(synth.metadata.rules?.some((r) => r.type === "code_prefix"), "the code_prefix rule is found");
    // A filter that keeps one row in three: the sample decodes about three times the rows it writes,
    // more codes than a one-prefix field's 100 (about 70 of its rows are written).
    let drawn = 0;
    synth.nearCopyFilter = {
      keep: async (batch: { rows: unknown[] }, _tally: unknown, limit = Infinity) => {
        drawn += batch.rows.length;
        return Array.from({ length: batch.rows.length }, (_, r) => r).filter((r) => r % 3 === 0).slice(0, limit);
      },
    } as unknown as typeof synth.nearCopyFilter;
    const t = await synth.sample(420, { seed: 5 });
    assert.equal(t.rows.length, 420);
    assert.ok(drawn >= 1000, `rows drawn ${drawn}`);
    const prefixes = new Map(MAJOR_FIELDS);
    const agree = t.rows.filter((r) => prefixes.get(r[1])?.includes(r[0].slice(0, 2))).length;
    assert.equal(agree, 420, "every code starts with a prefix of its field");
    assert.equal(new Set(t.rows.map((r) => r[0])).size, 420, "no code repeated");
  } finally {
    await srv.close();
  }
});
