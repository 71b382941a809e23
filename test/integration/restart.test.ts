/**
 * Crash safety (DESIGN §4): SIGKILL the server while a model trains, start it again on the same
 * store, and the model continues from its last checkpointed epoch (never back to 0) to `ready`.
 * The model ends on its time limit, not on an epoch count, so it is still training when killed
 * however fast the machine runs its epochs (five epochs of Adult took less than one 100 ms poll).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Synthd, Synthesizer } from "../../src/sdk";
import { ADULT_CSV, removeDir, startServer, tempDir, waitFor } from "../../bench/harness";

test("after SIGKILL mid-training a restart resumes the model from its checkpoint and reaches ready", async () => {
  const dir = tempDir();
  const store = join(dir, "store");
  let server = await startServer(store);
  try {
    const key = server.sandboxKey!;
    let client = new Synthd({ apiKey: key, baseUrl: server.url });
    const trainSeconds = 15;
    const synth = await Synthesizer.fit(client, ADULT_CSV, {
      config: { model_size: "small", max_epochs: 1_000_000, max_training_time: trainSeconds, early_stop_patience: 0 },
      wait: false,
    });
    const before = await waitFor("two checkpointed epochs", async () => {
      const m = await client.models.retrieve(synth.id);
      return m.current_epoch >= 2 ? m : undefined;
    }, 180_000, 100);
    assert.equal(before.status, "training", `precondition: two epochs within the model's ${trainSeconds} s of training`);
    await server.kill("SIGKILL");

    server = await startServer(store);
    assert.equal(server.sandboxKey, undefined, "the sandbox key is printed on first start only");
    client = new Synthd({ apiKey: key, baseUrl: server.url });
    const epochs: number[] = [];
    const done = await waitFor("the resumed model to finish", async () => {
      const m = await client.models.retrieve(synth.id);
      epochs.push(m.current_epoch);
      return m.status === "training" ? undefined : m;
    }, 300_000, 100);
    assert.equal(done.status, "ready", `model ended ${done.status}: ${JSON.stringify(done.error)}`);
    assert.ok(done.current_epoch > before.current_epoch, `trained on after the restart: epoch ${done.current_epoch}`);
    // Never below the epoch checkpointed before the kill: training continued, it did not restart.
    assert.ok(Math.min(...epochs) >= before.current_epoch, `epochs after restart: ${epochs.join(",")}`);
    const rows = await Synthesizer.fromModel(client, synth.id).then((s) => s.sample(100, { seed: 1 }));
    assert.equal(rows.rows.length, 100);
  } finally {
    await server.kill("SIGKILL");
    removeDir(dir);
  }
});
