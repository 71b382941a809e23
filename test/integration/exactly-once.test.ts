/**
 * Exactly-once billing across crashes (issue 11, acceptance 2; docs/operations.md "What survives
 * kill -9"). A real server process is killed with SIGKILL at a random point of each idempotent
 * Create Model and Generate (24 kills), restarted on the same store, and the client retries the
 * same key until it gets an answer, as the SDK does. Afterwards:
 * - usage equals the rows the client actually received, one answer per key;
 * - the ledger charges each generate key exactly once (net of refunds), under the request id of
 *   the answer the client holds: no key executed twice;
 * - every create key made exactly one model, and the models of the org are exactly those;
 * - sending each key once more replays the answer the client already has.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { LmdbStore as Store } from "../../src/store";
import { monthOf } from "../../src/usage/quota";
import { removeDir, startServer, tempDir, type ServerProcess } from "../../bench/harness";
import { mulberry32 } from "../fixtures";
import { validCreateBody } from "../server-helpers";

/** One operation of the client: its key, what it sent, and the answer it finally got. */
interface Op {
  kind: "create" | "generate";
  key: string;
  body: unknown;
  /** The final answer: status, X-Request-Id, parsed body. */
  answer?: { status: number; requestId: string; json: any };
}

async function send(url: string, apiKey: string, op: Op): Promise<Op["answer"]> {
  const path = op.kind === "create" ? "/v1/models" : `/v1/models/${(op.body as { model: string }).model}/generate`;
  const body = op.kind === "create" ? op.body : { embedding: (op.body as { embedding: unknown }).embedding };
  const res = await fetch(url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "idempotency-key": op.key },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, requestId: res.headers.get("x-request-id") ?? "", json: JSON.parse(text) };
}

const SERVE_ARGS = ["--workers", "1"];

test("SIGKILL at random points of idempotent creates and generates: usage equals rows returned, no key executes twice", async (t) => {
  const dir = tempDir();
  const storeDir = join(dir, "store");
  const org = "billing";
  const month = monthOf(Date.now());
  // A live key (ledger) with a quota far above what the test generates.
  const setup = new Store(storeDir);
  const apiKey = await setup.createKey(org, "live");
  await setup.setOrgLimits(org, { live_quota: 1_000_000_000 });
  await setup.close();

  let server: ServerProcess = await startServer(storeDir, SERVE_ARGS);
  const rand = mulberry32(11); // the same kill schedule on every run
  let kills = 0;
  let answeredBeforeKill = 0;
  let reconciled = 0;
  const ops: Op[] = [];
  try {
    const first: Op = { kind: "create", key: randomUUID(), body: { ...validCreateBody(), config: { model_size: "small", max_epochs: 2 } } };
    first.answer = await send(server.url, apiKey, first);
    assert.equal(first.answer?.status, 201, JSON.stringify(first.answer?.json));
    const modelId: string = first.answer!.json.data.id;

    ops.push(first);
    for (let i = 0; i < 24; i++) {
      const op: Op =
        i % 4 === 3
          ? { kind: "create", key: randomUUID(), body: { ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } } }
          : { kind: "generate", key: randomUUID(), body: { model: modelId, embedding: { num_rows: 5_000 + Math.floor(rand() * 95_000), seed: i } } };
      ops.push(op);
      // Kill at a random point: before the request is read, while it charges or generates, while
      // the response is stored, or after it was sent.
      const delayMs = Math.floor(rand() * 120);
      const attempt = send(server.url, apiKey, op).then(
        (a) => a,
        () => undefined,
      );
      await new Promise((r) => setTimeout(r, delayMs));
      await server.kill("SIGKILL");
      kills++;
      op.answer = await attempt;
      if (op.answer !== undefined) answeredBeforeKill++;
      server = await startServer(storeDir, SERVE_ARGS);
      if (/reconciled requests left unfinished/.test(server.stderr())) reconciled++;
      // Retry the same key until an answer that is final (2xx or 4xx), as a client would.
      for (let tries = 0; op.answer === undefined || op.answer.status >= 500 || op.answer.status === 409; tries++) {
        assert.ok(tries < 20, `no final answer for ${op.kind} ${op.key}: ${JSON.stringify(op.answer)}`);
        op.answer = await send(server.url, apiKey, op).catch(() => undefined);
        if (op.answer === undefined || op.answer.status >= 500 || op.answer.status === 409) await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(op.answer.status === 200 || op.answer.status === 201, `${op.kind}: ${op.answer.status} ${JSON.stringify(op.answer.json)}`);
    }
    assert.ok(kills >= 20, `only ${kills} kills`);

    // Every key replays the answer the client holds (same request id, same data).
    for (const op of ops) {
      const again = await send(server.url, apiKey, op);
      assert.equal(again?.status, op.answer!.status);
      assert.equal(again?.requestId, op.answer!.requestId, `${op.kind} ${op.key} executed again instead of replaying`);
      assert.deepEqual(again?.json.data, op.answer!.json.data);
    }
  } finally {
    await server.kill("SIGTERM");
  }

  const store = new Store(storeDir);
  try {
    const gens = ops.filter((o) => o.kind === "generate");
    const delivered = gens.reduce((s, o) => s + (o.answer!.json.data.num_rows as number), 0);
    assert.equal((await store.getUsage(org, "live", month)), delivered, "usage must equal the rows the client received");
    // The ledger, net per request id: the request that produced each answer is charged its rows
    // once; every other request (executions cut off by a kill) nets to zero.
    const net = new Map<string, number>();
    for (const e of (await store.ledgerEntries(org, month))) net.set(e.request_id, (net.get(e.request_id) ?? 0) + e.rows);
    const answered = new Map(gens.map((o) => [o.answer!.requestId, o.answer!.json.data.num_rows as number]));
    for (const [rid, rows] of net) {
      assert.equal(rows, answered.get(rid) ?? 0, `request ${rid} nets ${rows} rows`);
    }
    for (const [rid, rows] of answered) assert.equal(net.get(rid), rows, `answer ${rid} is not charged exactly once`);
    // One model per create key, and no other model.
    const created = ops.filter((o) => o.kind === "create").map((o) => o.answer!.json.data.id as string);
    assert.equal(new Set(created).size, created.length);
    const stored = (await store.listModels(org, "live", 100)).items.map((m) => m.id);
    assert.deepEqual([...stored].sort(), [...created].sort(), "models of the org must be exactly one per create key");
    assert.equal((await store.modelsWithStatus("training")).length + (await store.modelsWithStatus("ready")).length >= created.length, true);
    assert.ok(kills >= 20);
    const cutOff = [...net.entries()].filter(([rid, rows]) => rows === 0 && !answered.has(rid)).length;
    t.diagnostic(`${kills} kills: ${answeredBeforeKill} answers arrived before the kill, ${reconciled} restarts reconciled an unfinished request, ${cutOff} generate executions were cut off and refunded`);
  } finally {
    await store.close();
    removeDir(dir);
  }
});
