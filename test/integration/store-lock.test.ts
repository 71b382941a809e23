/**
 * One owner per store (issue 11, src/store/lmdb/ownerLock.ts), with real processes: a second
 * `synthd serve` on a data dir in use exits 1 with one line naming the owner and touches nothing
 * (the first keeps its in-flight idempotency records, its rate counters and its models, and keeps
 * serving); the store commands documented to work while the server runs take no lock; after
 * `kill -9` of the owner the kernel has released the lock, so a new server starts at once.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Synthd, Synthesizer } from "../../src/sdk";
import { LmdbStore as Store, type IdempotencyScope } from "../../src/store";
import { OWNER_LOCK_FILE } from "../../src/store/lmdb/ownerLock";
import { ADULT_CSV, removeDir, runCli, startServer, tempDir, waitFor, type ServerProcess } from "../../bench/harness";

const RATE_ENV = { SYNTHD_RATE_LIMIT: "1000" };

let dir: string;
let dataDir: string;
let owner: ServerProcess;
let key: string;
let modelId: string;

before(async () => {
  dir = tempDir();
  dataDir = join(dir, "store");
  owner = await startServer(dataDir, [], 60_000, RATE_ENV);
  key = owner.sandboxKey!;
  const client = new Synthd({ apiKey: key, baseUrl: owner.url });
  const synth = await Synthesizer.fit(client, ADULT_CSV, { config: { model_size: "small", max_epochs: 2 }, wait: false });
  modelId = synth.id;
});

after(async () => {
  await owner?.kill("SIGKILL");
  removeDir(dir);
});

/** GET /v1/models on `url` with the sandbox key: status and the model ids. */
async function listModels(url: string): Promise<{ status: number; ids: string[] }> {
  const r = await fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${key}` } });
  const body = (await r.json()) as { data?: { id: string }[] };
  return { status: r.status, ids: (body.data ?? []).map((m) => m.id) };
}

test("a second serve on a data dir in use exits 1 with one line naming the owner, and the first is unaffected", async () => {
  const lockFile = JSON.parse(readFileSync(join(dataDir, OWNER_LOCK_FILE), "utf8")) as Record<string, unknown>;
  assert.equal(lockFile.pid, owner.child.pid);
  assert.equal(lockFile.url, owner.url);

  // An in-flight idempotency record, as a request of the first server leaves while it runs: a
  // second server that got as far as the store would release it at start-up.
  const side = new Store(dataDir);
  const scope: IdempotencyScope = { org: "default", env: "test", key: "store-lock-in-flight" };
  try {
    assert.equal((await side.beginIdempotent(scope, "fp", Date.now(), 86_400_000)).kind, "started");
    assert.equal((await listModels(owner.url)).status, 200);
    // The server persists an admitted request's counter after answering: wait until it is written.
    const counters = await waitFor("the owner's rate counters to settle", async () => {
      const seen = JSON.stringify((await side.rateCounterEntries()));
      await new Promise((r) => setTimeout(r, 200));
      return JSON.stringify((await side.rateCounterEntries())) === seen ? seen : undefined;
    }, 10_000, 0);

    const second = await runCli(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir], RATE_ENV, 60_000);
    assert.equal(second.code, 1, second.stderr);
    assert.equal(second.stdout, "");
    const pid = owner.child.pid!;
    const line = new RegExp(
      `^synthd: the data dir ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is in use by synthd serve pid ${pid} ` +
        `\\(started \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ, ${owner.url}\\); stop it first or use another --data-dir\\.\\n$`,
    );
    assert.match(second.stderr, line, "exactly one line on stderr, naming the owner");

    assert.equal((await side.getIdempotency(scope))?.state, "in_flight", "the owner's in-flight record is kept");
    assert.equal(JSON.stringify((await side.rateCounterEntries())), counters, "the owner's rate counters are untouched");
    const later = await listModels(owner.url);
    assert.equal(later.status, 200, "the first server still answers");
    assert.ok(later.ids.includes(modelId));
  } finally {
    await side.abandonIdempotent(scope);
    await side.close();
  }
});

test("keys create, orgs set and usage work while the server runs (they take no owner lock)", async () => {
  const created = await runCli(["keys", "create", "--data-dir", dataDir, "--org", "acme", "--env", "live"]);
  assert.equal(created.code, 0, created.stderr);
  const newKey = created.stdout.trim();
  assert.match(newKey, /^svc_live_[A-Za-z0-9]{32}$/);
  const r = await fetch(`${owner.url}/v1/models`, { headers: { Authorization: `Bearer ${newKey}` } });
  assert.equal(r.status, 200, "the running server accepts the key just created");
  const set = await runCli(["orgs", "set", "--data-dir", dataDir, "--org", "acme", "--rate-limit", "500"]);
  assert.equal(set.code, 0, set.stderr);
  const usage = await runCli(["usage", "--data-dir", dataDir, "--json"]);
  assert.equal(usage.code, 0, usage.stderr);
  JSON.parse(usage.stdout);
});

test("after SIGKILL of the owner a new server starts on the dir at once, with its models intact", async (t) => {
  await owner.kill("SIGKILL");
  const t0 = performance.now();
  owner = await startServer(dataDir, [], 60_000, RATE_ENV);
  const ms = performance.now() - t0;
  t.diagnostic(`new server listening ${ms.toFixed(0)} ms after the owner's SIGKILL`);
  // The kernel drops the lock with the process: the bound is the server's own start-up time.
  assert.ok(ms < 20_000, `took ${ms} ms`);
  const lockFile = JSON.parse(readFileSync(join(dataDir, OWNER_LOCK_FILE), "utf8")) as Record<string, unknown>;
  assert.equal(lockFile.pid, owner.child.pid, "the lock file names the new owner");
  const listed = await waitFor("the models list", async () => {
    const l = await listModels(owner.url);
    return l.status === 200 ? l : undefined;
  }, 30_000);
  assert.deepEqual(listed.ids, [modelId]);
});
