/**
 * Admission control with real processes (issue 11, item 1: "50 creates with model_size large,
 * embedding_dim 4096, batch_size 65536 are all accepted in 118 ms; RSS passes 6 GB in 27 s ...
 * after the process dies resumeAll restarts every model at once: a crash loop").
 *
 * A `synthd serve` with a memory budget that fits one such model but not two gets 50 concurrent
 * creates of it. Its RSS (VmRSS of /proc/PID/status) is sampled throughout and must stay under
 * the budget; GETs are timed throughout (p99 < 100 ms, the acceptance criterion); every
 * create is accepted (201, training, epoch 0) or refused with a contract error (400
 * parameter_invalid / 429 rate_limit_exceeded with Retry-After: the org's queue is full). With
 * `--max-queued-per-org 1`, one model trains, one waits, the rest are refused. The server is
 * SIGKILLed while the first trains; a restart on the same store resumes both through the queue,
 * oldest first, RSS still under the budget, and each accepted model ends `ready` (or `failed`
 * with an error).
 *
 * The model at full size takes ~30 s a step on the 2-core test machine (peak RSS growth
 * 5.6 GiB; `npm run bench -- memory`, case "heavy", measures it against the estimate), and this
 * test ran 155 s with it. The burst here uses the same model at a quarter of its batch
 * (batch_size 16384, estimate 2.50 GiB; case "quarter-1step" of the benchmark) against a budget
 * scaled with it (3.5 GiB: one fits; two at once would not, at twice the ~1.9 GiB one adds),
 * which exercises the same estimate, budget, queue and resume in ~31 s. The models use
 * max_training_time 1 (one step, validation, the checkpoint) and the queue bound keeps the work
 * to two such trainings after the restart (two are the fewest that show a resume in turn rather
 * than at once). The full-size model is still refused below a budget it can never fit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { removeDir, runCli, startServer, tempDir, waitFor, type ServerProcess } from "../../bench/harness";
import { procMemory, syntheticMetadata } from "../../bench/memory";

const BUDGET = "3.5GiB";
const BUDGET_BYTES = 3.5 * 2 ** 30;
/** The model (estimate 7.26 GiB). */
const HEAVY = { model_size: "large", embedding_dim: 4096, batch_size: 65536, max_training_time: 1, early_stop_patience: 0 };
/** The model at a quarter of its batch (estimate 2.50 GiB, peak RSS of the server ~2.1 GiB): one fits {@link BUDGET}, two do not. */
const QUARTER = { ...HEAVY, batch_size: 16384 };
const CREATES = 50;
const SERVE_ARGS = ["--memory-budget", BUDGET, "--max-queued-per-org", "1", "--workers", "2"];

/** VmRSS of `pid`, bytes (0 once the process is gone: no status file, or no VmRSS in it). */
function rssOf(pid: number): number {
  try {
    return procMemory(pid).rss || 0;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every 25 ms until stopped; keeps the maximum. */
class RssSampler {
  max = 0;
  samples = 0;
  private readonly timer: NodeJS.Timeout;
  constructor(pid: number) {
    const sample = (): void => {
      this.max = Math.max(this.max, rssOf(pid));
      this.samples++;
    };
    sample();
    this.timer = setInterval(sample, 25);
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** GETs `path()` back to back (25 ms apart) until stopped; records each latency (ms) of a 200. */
class GetLoop {
  readonly ms: number[] = [];
  errors = 0;
  private running = true;
  private readonly done: Promise<void>;
  constructor(url: string, key: string, path: () => string) {
    this.done = (async () => {
      while (this.running) {
        const t0 = performance.now();
        try {
          const r = await fetch(`${url}${path()}`, { headers: { Authorization: `Bearer ${key}` } });
          await r.arrayBuffer();
          if (r.status === 200) this.ms.push(performance.now() - t0);
          else this.errors++;
        } catch {
          this.errors++;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
  }
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)];
}

interface Created {
  status: number;
  retryAfter: string | null;
  body: { data?: { id: string; status: string; current_epoch: number }; error?: { code: string; message: string; param?: string } };
}

test("50 heavy creates against a budget for one: RSS stays under it, GETs stay fast, the rest is refused or queued; a restart resumes in turn", async (t) => {
  const started = performance.now();
  const dir = tempDir("synthd-admission-");
  const store = join(dir, "store");
  let server: ServerProcess | undefined;
  // Stopped in `finally` too: a failed assertion must not leave their timers keeping the test
  // file's process alive (the runner would wait for it forever).
  let sampler: RssSampler | undefined;
  let gets: GetLoop | undefined;
  try {
    server = await startServer(store, SERVE_ARGS);
    const key = server.sandboxKey!;
    const latencies: number[] = [];

    // ---- phase A: the burst ----
    sampler = new RssSampler(server.child.pid!);
    gets = new GetLoop(server.url, key, () => "/v1/models?limit=5");
    const metadata = syntheticMetadata(5, 4);
    const created: Created[] = await Promise.all(
      Array.from({ length: CREATES }, async () => {
        const r = await fetch(`${server!.url}/v1/models`, {
          method: "POST",
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: JSON.stringify({ metadata, config: QUARTER }),
        });
        return { status: r.status, retryAfter: r.headers.get("retry-after"), body: (await r.json()) as Created["body"] };
      }),
    );
    const accepted: string[] = [];
    for (const c of created) {
      if (c.status === 201) {
        assert.equal(c.body.data?.status, "training");
        assert.equal(c.body.data?.current_epoch, 0);
        accepted.push(c.body.data!.id);
      } else if (c.status === 429) {
        assert.equal(c.body.error?.code, "rate_limit_exceeded");
        assert.ok(Number(c.retryAfter) >= 1, `Retry-After ${c.retryAfter}`);
        assert.match(c.body.error?.message ?? "", /waiting to train/);
      } else {
        assert.equal(c.status, 400, JSON.stringify(c.body));
        assert.equal(c.body.error?.code, "parameter_invalid");
      }
    }
    const refused = created.filter((c) => c.status !== 201).length;
    const firstRefusal = created.find((c) => c.status !== 201)?.body.error?.message;
    t.diagnostic(`creates: ${accepted.length} accepted, ${refused} refused (${created.filter((c) => c.status === 429).length} with 429; ${firstRefusal})`);
    assert.equal(accepted.length, 2, "one trains, one waits (--max-queued-per-org 1), the rest are refused");
    const [first, second] = accepted;

    // The first model is allocating and training; the second waits with no progress.
    await waitFor("the first model's memory", async () => (rssOf(server!.child.pid!) > 2 ** 29 ? true : undefined), 120_000, 100);
    const waiting = await fetch(`${server.url}/v1/models/${second}`, { headers: { Authorization: `Bearer ${key}` } }).then(
      (r) => r.json() as Promise<{ data: { status: string; current_epoch: number } }>,
    );
    assert.deepEqual([waiting.data.status, waiting.data.current_epoch], ["training", 0]);
    await gets.stop();
    latencies.push(...gets.ms);
    await server.kill("SIGKILL");
    sampler.stop();
    const maxA = sampler.max;
    assert.ok(maxA < BUDGET_BYTES, `RSS ${maxA} exceeded the budget before the kill`);

    // ---- phase B: the restart resumes both, one at a time ----
    server = await startServer(store, SERVE_ARGS);
    sampler = new RssSampler(server.child.pid!);
    gets = new GetLoop(server.url, key, () => `/v1/models/${first}`);
    const final = await waitFor(
      "both models to finish after the restart",
      async () => {
        const ms = await Promise.all(
          accepted.map((id) =>
            fetch(`${server!.url}/v1/models/${id}`, { headers: { Authorization: `Bearer ${key}` } }).then(
              (r) => r.json() as Promise<{ data: { id: string; status: string; created_at: string; updated_at: string; error: unknown } }>,
            ),
          ),
        );
        return ms.every((m) => m.data.status !== "training") ? ms.map((m) => m.data) : undefined;
      },
      300_000,
      500,
    );
    await gets.stop();
    latencies.push(...gets.ms);
    sampler.stop();
    const maxB = sampler.max;
    for (const m of final) {
      assert.ok(m.status === "ready" || (m.status === "failed" && m.error !== null), `${m.id} ended ${m.status}: ${JSON.stringify(m.error)}`);
    }
    // "Older" as the engine orders a restart's resumes: created_at, then id (two creates can share
    // a millisecond, and then the client's order of acceptance says nothing).
    const [older, newer] = [...final].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : 1));
    assert.ok(older.updated_at <= newer.updated_at, `the older model was resumed first: ${JSON.stringify(final)}`);
    assert.ok(maxB > 1.5 * 2 ** 30, `a heavy model trained while sampled: ${JSON.stringify(final)}`);
    assert.ok(maxB < BUDGET_BYTES, `RSS ${maxB} exceeded the budget while resuming`);

    const p = p99(latencies);
    t.diagnostic(
      `max RSS ${(maxA / 2 ** 30).toFixed(2)} GiB before the kill, ${(maxB / 2 ** 30).toFixed(2)} GiB while resuming (budget ${BUDGET}); ` +
        `GET p99 ${p.toFixed(1)} ms over ${latencies.length} GETs; wall ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    assert.ok(latencies.length >= 100, `only ${latencies.length} GETs answered`);
    assert.ok(p < 100, `GET p99 ${p.toFixed(1)} ms`);
  } finally {
    sampler?.stop();
    await gets?.stop();
    await server?.kill("SIGKILL");
    removeDir(dir);
  }
});

test("a model that can never fit the budget is refused with 400 parameter_invalid naming the field to lower; nothing is stored", async () => {
  const dir = tempDir("synthd-admission-");
  const server = await startServer(join(dir, "store"), ["--memory-budget", "3GiB"]);
  try {
    const key = server.sandboxKey!;
    const r = await fetch(`${server.url}/v1/models`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: syntheticMetadata(5, 4), config: HEAVY }),
    });
    const body = (await r.json()) as { error: { code: string; param?: string; message: string } };
    assert.equal(r.status, 400);
    assert.equal(body.error.code, "parameter_invalid");
    assert.equal(body.error.param, "body.config.batch_size");
    assert.match(body.error.message, /needs an estimated [\d.]+ GiB .*training budget of [\d.]+ GiB .*Lower config\.batch_size to at most \d+/);
    const list = (await fetch(`${server.url}/v1/models`, { headers: { Authorization: `Bearer ${key}` } }).then((x) => x.json())) as { data: unknown[] };
    assert.deepEqual(list.data, []);
  } finally {
    await server.kill("SIGKILL");
    removeDir(dir);
  }
});

test("serve refuses a malformed --memory-budget (usage, exit 2) and one below its own footprint (exit 1)", async () => {
  const dir = tempDir("synthd-admission-");
  try {
    const args = ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", join(dir, "store")];
    const malformed = await runCli([...args, "--memory-budget", "12XB"], {}, 60_000);
    assert.equal(malformed.code, 2);
    assert.match(malformed.stderr, /--memory-budget must be bytes or a size with a unit/);
    const tiny = await runCli([...args, "--memory-budget", "64MiB"], {}, 60_000);
    assert.equal(tiny.code, 1);
    assert.match(tiny.stderr, /leaves nothing for training/);
  } finally {
    removeDir(dir);
  }
});
