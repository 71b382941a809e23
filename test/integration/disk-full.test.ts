/**
 * A full disk (docs/operations.md "A full disk"). The store lives on a small tmpfs
 * (mounted by the test: CI runs as root on this machine kind) that a filler file then fills.
 * While the disk is full, every request gets an answer of the contract — 200 when its writes
 * still fit in the room the store's file owns, else 503 `training_service_unavailable` with `Retry-After` —
 * never a 500, a dropped connection, a dead worker or a failed model; nothing is billed that was not delivered; a
 * response that could not be stored is not sent; a model training meanwhile pauses (it stays
 * `training`). Once space is freed, the same keys execute once and the training finishes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { LmdbStore as Store } from "../../src/store";
import { monthOf } from "../../src/usage/quota";
import { fillDisk, removeDir, startServer, tempDir, waitFor, withServerState, type ServerProcess } from "../../bench/harness";
import { validCreateBody } from "../server-helpers";

const MOUNT_MIB = 48;
/** How long a stopping server may take before it is killed (and the test fails). */
const SHUTDOWN_MS = 60_000;

/**
 * A tmpfs of `mib` MiB mounted in a fresh temporary directory, for `fn`; unmounted and removed
 * afterwards whatever happens (a failed unmount is reported after `fn`'s own error).
 */
async function onTmpfs(mib: number, fn: (mount: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  try {
    const mount = join(dir, "disk");
    mkdirSync(mount);
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${mib}m`, "tmpfs", mount]);
    try {
      await fn(mount);
    } finally {
      execFileSync("umount", ["-l", mount]);
    }
  } finally {
    removeDir(dir);
  }
}

/**
 * A medium model that ends only by its training-time limit: paused time does not count toward it,
 * so it is still training whenever the disk fills, however fast the machine.
 */
const MEDIUM_UNTIL_TIME_LIMIT = { model_size: "medium", max_epochs: 1_000_000, max_training_time: 45, early_stop_patience: 0 };

/**
 * Asserts the server outlived the full disk, stops it, and asserts its log shows no unhandled
 * rejection, no worker thread that died and no model that failed, and that the store's usage
 * equals the rows `delivered`.
 */
async function stopCleanly(server: ServerProcess, storeDir: string, delivered: number): Promise<void> {
  assert.equal(server.child.exitCode, null, "the server must keep running");
  const killer = setTimeout(() => server.child.kill("SIGKILL"), SHUTDOWN_MS);
  try {
    await server.kill("SIGTERM");
  } finally {
    clearTimeout(killer);
  }
  assert.equal(server.child.signalCode, null, `the server stopped on SIGTERM within ${SHUTDOWN_MS} ms`);
  const log = server.stderr();
  assert.doesNotMatch(log, /unhandled rejection/i, "no unhandled rejections");
  assert.doesNotMatch(log, /exited unexpectedly|training failed|worker lost/i, "no worker thread died, no model failed");
  const store = new Store(storeDir);
  try {
    assert.equal(await store.getUsage("disk", "live", monthOf(Date.now())), delivered, "usage equals the rows delivered");
  } finally {
    await store.close();
  }
}

test("a full disk: contract answers (503 with Retry-After, never 500), no bill without delivery, keys execute once after space is freed", async () => {
  await onTmpfs(MOUNT_MIB, async (mount) => {
    const storeDir = join(mount, "store");
    let server: ServerProcess | undefined;
    try {
      const setup = new Store(storeDir);
      const apiKey = await setup.createKey("disk", "live");
      await setup.setOrgLimits("disk", { live_quota: 1_000_000_000 });
      await setup.close();
      server = await startServer(storeDir, ["--workers", "1"]);
      const url = server.url;
      const post = async (path: string, body: unknown, key?: string): Promise<{ status: number; json: any; headers: Headers }> => {
        const res = await fetch(url + path, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
          body: JSON.stringify(body),
        });
        return { status: res.status, json: await res.json(), headers: res.headers };
      };
      const created = await post("/v1/models", { ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } });
      assert.equal(created.status, 201);
      const id: string = created.json.data.id;
      await waitFor("the model to be ready", async () => {
        const r = await fetch(`${url}/v1/models/${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
        const m = ((await r.json()) as { data: { status: string } }).data;
        return m.status === "ready" ? m : undefined;
      }, 120_000, 100);

      // A model that trains across the full disk: its checkpoints cannot be written, so it pauses.
      const trainsThrough = await post("/v1/models", { ...validCreateBody(), config: MEDIUM_UNTIL_TIME_LIMIT });
      assert.equal(trainsThrough.status, 201);
      const tid: string = trainsThrough.json.data.id;
      fillDisk(mount);
      let delivered = 0;
      const refused: { key: string; rows: number }[] = [];
      // The store owns some room ahead of its data (src/store/lmdb/space.ts): stored responses of
      // keyed generates use it up, then writes are refused.
      for (let i = 0; i < 120 && refused.length < 2; i++) {
        const rows = 100_000;
        const key = `full-${i}`;
        const r = await post(`/v1/models/${id}/generate`, { embedding: { num_rows: rows, seed: i } }, i % 2 === 0 ? key : undefined);
        assert.ok(r.status === 200 || r.status === 503, `generate ${i}: ${r.status} ${JSON.stringify(r.json)}`);
        if (r.status === 200) delivered += r.json.data.num_rows;
        else {
          assert.equal(r.json.error.code, "training_service_unavailable");
          assert.match(r.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/);
          if (i % 2 === 0) refused.push({ key, rows });
        }
      }
      const c = await post("/v1/models", { ...validCreateBody(), config: { model_size: "small", max_epochs: 1 } }, "full-create");
      assert.ok(c.status === 201 || c.status === 503, `create: ${c.status} ${JSON.stringify(c.json)}`);
      assert.ok(refused.length > 0 || c.status === 503, "the full disk refused nothing: the test did not fill it");

      await waitFor("the training to pause on the full disk", async () => (/training paused until it can/.test(server!.stderr()) ? true : undefined), 60_000, 200);
      const modelOf = async (): Promise<{ status: string; current_epoch: number; error: unknown }> =>
        ((await (await fetch(`${url}/v1/models/${tid}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { data: { status: string; current_epoch: number; error: unknown } }).data;
      const paused = await modelOf();
      assert.equal(paused.status, "training", "a full disk pauses training; it does not fail the model");

      // Space again: the refused keys execute (once), the training continues, the server never stopped.
      rmSync(join(mount, "filler"));
      // Resumed: it commits checkpoints again (it ends only by its time limit, not waited for here).
      const resumed = await waitFor("the paused model to write a checkpoint again", async () => {
        const m = await modelOf();
        return m.status !== "training" || m.current_epoch > paused.current_epoch ? m : undefined;
      }, 180_000, 200);
      assert.ok(resumed.status === "training" || resumed.status === "ready", JSON.stringify(resumed));
      for (const { key, rows } of refused) {
        const r = await waitFor(`key ${key} to execute`, async () => {
          const a = await post(`/v1/models/${id}/generate`, { embedding: { num_rows: rows, seed: Number(key.slice(5)) } }, key);
          return a.status === 200 ? a : undefined;
        }, 30_000, 500);
        delivered += r.json.data.num_rows;
      }
      await stopCleanly(server, storeDir, delivered);
      server = undefined;
    } catch (err) {
      // The server's state and log beside the failure: a dead server and a failed test read alike otherwise.
      throw withServerState(err, server);
    } finally {
      await server?.kill("SIGKILL");
    }
  });
});

/** A client of `url` with `apiKey`: POST (optionally keyed) and GET a model. */
function clientFor(url: string, apiKey: string) {
  return {
    async post(path: string, body: unknown, key?: string): Promise<{ status: number; json: any; headers: Headers }> {
      const res = await fetch(url + path, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: await res.json(), headers: res.headers };
    },
    async model(id: string): Promise<{ id: string; status: string; current_epoch: number; error: unknown }> {
      const r = await fetch(`${url}/v1/models/${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
      return ((await r.json()) as { data: { id: string; status: string; current_epoch: number; error: unknown } }).data;
    },
  };
}

test("a full disk under several trainings (a medium model mid-training, models created while full): none fails, the medium one pauses once the store's room is used up, all resume once space is freed (the small ones to ready); usage equals rows delivered", async () => {
  // 96 MiB: on a smaller disk the store of these models (a medium checkpoint takes about 6 MB,
  // twice while it is rewritten, and the stored responses that use up the room fragment LMDB's
  // free pages) can grow to the whole disk once space is freed, and the medium model stays paused
  // in `training`: never failed, but it cannot reach `ready` there.
  await onTmpfs(96, async (mount) => {
    const storeDir = join(mount, "store");
    let server: ServerProcess | undefined;
    try {
      const setup = new Store(storeDir);
      const apiKey = await setup.createKey("disk", "live");
      await setup.setOrgLimits("disk", { live_quota: 1_000_000_000 });
      await setup.close();
      // Several models train at once (the default lets an org train 2 and queues the rest).
      server = await startServer(storeDir, ["--workers", "2", "--max-training-per-org", "8"]);
      const c = clientFor(server.url, apiKey);
      const small = (epochs: number) => ({ ...validCreateBody(), config: { model_size: "small", max_epochs: epochs, early_stop_patience: 0 } });

      // Training when the disk fills: a medium model and a small one.
      const medium = await c.post("/v1/models", { ...validCreateBody(), config: MEDIUM_UNTIL_TIME_LIMIT });
      assert.equal(medium.status, 201, JSON.stringify(medium.json));
      const before = await c.post("/v1/models", small(40));
      assert.equal(before.status, 201, JSON.stringify(before.json));
      const ids: string[] = [medium.json.data.id, before.json.data.id];
      await waitFor("the medium model's second checkpoint", async () => ((await c.model(ids[0])).current_epoch >= 2 ? true : undefined), 120_000, 200);

      // Full, with a few pages left: creates are accepted (201) in the room the store's file owns.
      fillDisk(mount, 512 * 1024);
      const acceptedWhileFull: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await c.post("/v1/models", small(3));
        assert.ok(r.status === 201 || r.status === 503, `create while full: ${r.status} ${JSON.stringify(r.json)}`);
        if (r.status === 201) acceptedWhileFull.push(r.json.data.id);
      }
      assert.ok(acceptedWhileFull.length >= 1, "no create was accepted while the disk was full: the scenario did not happen");
      ids.push(...acceptedWhileFull);

      // Then to the last byte. Keyed generates store their responses until the store's room is used
      // up and one is refused (503); the medium model's checkpoint, larger than such a response,
      // cannot be written after that, so the medium model pauses.
      fillDisk(mount);
      let delivered = 0;
      const refused: { key: string; seed: number }[] = [];
      for (let i = 0; i < 120 && refused.length === 0; i++) {
        const key = `full-gen-${i}`;
        const r = await c.post(`/v1/models/${ids[0]}/generate`, { embedding: { num_rows: 100_000, seed: i } }, key);
        assert.ok(r.status === 200 || r.status === 503, `generate while full: ${r.status} ${JSON.stringify(r.json)}`);
        if (r.status === 200) delivered += r.json.data.num_rows;
        else refused.push({ key, seed: i });
      }
      assert.equal(refused.length, 1, "a full disk refused no write: the test did not fill it");
      await waitFor("a training to pause on the full disk", async () => (/training paused until it can/.test(server!.stderr()) ? true : undefined), 60_000, 200);
      let pausedEpoch = 0;
      for (const id of ids) {
        const m = await c.model(id);
        assert.ok(m.status === "training" || m.status === "ready", `model ${id} while the disk is full: ${JSON.stringify(m)}`);
        if (id === ids[0]) {
          assert.equal(m.status, "training", `the medium model while the disk is full: ${JSON.stringify(m)}`);
          pausedEpoch = m.current_epoch;
        }
      }

      // Space again: every model resumes on its own; the small ones end ready, the medium one
      // (which ends only by its time limit) writes checkpoints again; the refused keys execute once.
      rmSync(join(mount, "filler"));
      const resumed = await waitFor("the medium model to write a checkpoint again", async () => {
        const r = await c.model(ids[0]);
        return r.status !== "training" || r.current_epoch > pausedEpoch ? r : undefined;
      }, 400_000, 500);
      assert.ok(resumed.status === "training" || resumed.status === "ready", JSON.stringify(resumed));
      for (const id of ids.slice(1)) {
        const m = await waitFor(`model ${id} to end`, async () => {
          const r = await c.model(id);
          return r.status === "training" ? undefined : r;
        }, 400_000, 500);
        assert.equal(m.status, "ready", `model ${id}: ${JSON.stringify(m.error)}`);
      }
      for (const { key, seed } of refused) {
        const r = await waitFor(`key ${key} to execute`, async () => {
          const a = await c.post(`/v1/models/${ids[0]}/generate`, { embedding: { num_rows: 100_000, seed } }, key);
          return a.status === 200 ? a : undefined;
        }, 60_000, 500);
        delivered += r.json.data.num_rows;
      }
      await stopCleanly(server, storeDir, delivered);
      server = undefined;
    } catch (err) {
      // The server's state and log beside the failure: a dead server and a failed test read alike otherwise.
      throw withServerState(err, server);
    } finally {
      await server?.kill("SIGKILL");
    }
  });
});
