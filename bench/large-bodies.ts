/**
 * `npm run bench -- large-bodies` (issue 39, defect 3): one tenant sends a large Create Model body
 * (default 860,000 `value_mappings` entries over a feature of as many codes: 13.8 MiB, the issue's
 * size; 1.2M entries are 19.5 MiB, over the 16 MiB body limit) once a second while another
 * organization sends `GET /v1/models?limit=1` every 50 ms; reports its GET p50/p99/max per
 * kind of body, against the same GETs on the idle server.
 *
 * Body kinds, each built from one valid metadata (one categorical feature, `value_mappings`
 * mapping `entries` values onto its codes):
 * - `valid`: 201 (a model that trains one short epoch);
 * - `json`: the valid body with one extra `}` at the end (400 param `body`);
 * - `schema`: the last mapping's code is a string (400 on its typia path);
 * - `semantic`: the last mapping's code is out of range (400 from the metadata checks).
 *
 * Embedded server by default; `--shared` runs the same against a front end of the shared topology
 * (PostgreSQL, Redis, one worker; bench/topology.ts).
 */
import { Agent, request } from "node:http";
import { removeDir, runCli, startServer, tempDir } from "./harness";

/** Options of {@link largeBodiesBench}. */
export interface LargeBodiesOptions {
  /** `value_mappings` entries of the body. */
  entries: number;
  /** Seconds of load per kind. */
  seconds: number;
  /** Comma-separated kinds: valid, json, schema, semantic. */
  kinds: string;
  /** Milliseconds between the other organization's GETs. */
  getEveryMs: number;
  shared: boolean;
  json: boolean;
}

/** The kinds of large body, see the module comment. */
export type BodyKind = "valid" | "json" | "schema" | "semantic";

/**
 * A Create Model body of `entries` value mappings over one feature `f` of as many codes (a
 * feature maps at most its cardinality of values), as bytes, made invalid as `kind` says. Past
 * about 500,000 entries the metadata is over the 8 MiB bound of stored metadata, so `valid` and
 * `semantic` bodies are refused on `body.metadata` (after being parsed and checked in full).
 */
export function largeCreateBody(entries: number, kind: BodyKind): Buffer {
  const cardinality = entries;
  const parts: string[] = [];
  for (let i = 0; i < entries; i++) {
    const last = i === entries - 1;
    let code = String(i);
    if (last && kind === "schema") code = '"7"';
    if (last && kind === "semantic") code = String(cardinality);
    parts.push(`"v${i.toString(36).padStart(4, "0")}":${code}`);
  }
  const probs = `[1${",0".repeat(cardinality - 1)}]`;
  const config = JSON.stringify({ model_size: "small", embedding_dim: 8, batch_size: 64, max_epochs: 1, early_stop_patience: 0 });
  const text =
    `{"metadata":{"features":["f"],"cardinalities":{"f":${cardinality}},"empirical_probs":{"f":${probs}},` +
    `"value_mappings":{"f":{${parts.join(",")}}}},"config":${config}}` +
    (kind === "json" ? "}" : "");
  return Buffer.from(text);
}

/** Latency summary in milliseconds. */
export interface Latencies {
  n: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** p50/p99/max of `times` (milliseconds). */
export function summarize(times: number[]): Latencies {
  const s = [...times].sort((a, b) => a - b);
  const q = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
  const r = (x: number): number => Math.round(x * 10) / 10;
  return { n: s.length, p50_ms: r(q(0.5)), p99_ms: r(q(0.99)), max_ms: r(s[s.length - 1] ?? NaN) };
}

/** One HTTP request on `agent`; resolves with the status and body text. */
export function send(
  agent: Agent,
  url: string,
  method: string,
  path: string,
  key: string,
  body?: Buffer,
  timeoutMs = 60_000,
): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(body.length);
    }
    const req = request({ host: u.hostname, port: u.port, path, method, agent, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * The other organization's GETs, one every `everyMs` (each waits for the previous one), until
 * `stop()`; resolves with their latencies (a failed or timed-out GET counts as its time so far).
 */
export function pollGets(url: string, key: string, everyMs: number): { stop: () => Promise<number[]> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const r = await send(agent, url, "GET", "/v1/models?limit=1", key, undefined, 10_000);
        if (r.status !== 200) throw new Error(`GET /v1/models: ${r.status} ${r.text}`);
      } catch {
        // counted with its time so far
      }
      const dt = performance.now() - t0;
      times.push(dt);
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - dt)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      agent.destroy();
      return times;
    },
  };
}

/**
 * Sends `body` as a Create Model once every `everyMs` for `seconds` (without waiting for the
 * answers) and resolves once all were answered: the statuses seen, with counts.
 */
export async function sendLargeBodies(url: string, key: string, body: Buffer, seconds: number, everyMs = 1000): Promise<Record<string, number>> {
  const agent = new Agent({ keepAlive: true });
  const sent: Promise<string>[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    sent.push(
      send(agent, url, "POST", "/v1/models", key, body, 300_000).then(
        (r) => {
          const code = r.status >= 400 ? (JSON.parse(r.text) as { error?: { code?: string } }).error?.code : "";
          return `${r.status}${code ? ` ${code}` : ""}`;
        },
        (err: unknown) => `failed: ${err instanceof Error ? err.message : String(err)}`,
      ),
    );
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const statuses: Record<string, number> = {};
  for (const s of await Promise.all(sent)) statuses[s] = (statuses[s] ?? 0) + 1;
  agent.destroy();
  return statuses;
}

/** The benchmark (see the module comment). */
export async function largeBodiesBench(opts: LargeBodiesOptions): Promise<void> {
  const kinds = opts.kinds.split(",").map((k) => k.trim()) as BodyKind[];
  for (const k of kinds) if (!["valid", "json", "schema", "semantic"].includes(k)) throw new Error(`unknown kind ${k}`);
  const target = await (opts.shared ? sharedTarget() : embeddedTarget());
  try {
    const idle = pollGets(target.url, target.otherKey, opts.getEveryMs);
    await new Promise((r) => setTimeout(r, 5_000));
    const result: Record<string, unknown> = {
      topology: opts.shared ? "shared" : "embedded",
      entries: opts.entries,
      idle: summarize(await idle.stop()),
    };
    for (const kind of kinds) {
      const body = largeCreateBody(opts.entries, kind);
      const gets = pollGets(target.url, target.otherKey, opts.getEveryMs);
      const statuses = await sendLargeBodies(target.url, target.tenantKey, body, opts.seconds);
      result[kind] = { body_mib: Math.round((body.length / 2 ** 20) * 100) / 100, statuses, other_org_gets: summarize(await gets.stop()) };
      if (!opts.json) console.log(kind, JSON.stringify(result[kind]));
    }
    if (opts.json) console.log(JSON.stringify(result));
    else console.log("idle", JSON.stringify(result.idle));
  } finally {
    await target.close();
  }
}

interface Target {
  url: string;
  tenantKey: string;
  otherKey: string;
  close(): Promise<void>;
}

async function embeddedTarget(): Promise<Target> {
  const dir = tempDir("synthd-bench-large-");
  const server = await startServer(dir);
  try {
    const created = await runCli(["keys", "create", "--data-dir", dir, "--org", "other"]);
    if (created.code !== 0) throw new Error(`keys create: ${created.stderr}`);
    return {
      url: server.url,
      tenantKey: server.sandboxKey!,
      otherKey: created.stdout.trim(),
      close: async () => {
        await server.kill();
        removeDir(dir);
      },
    };
  } catch (err) {
    await server.kill();
    removeDir(dir);
    throw err;
  }
}

async function sharedTarget(): Promise<Target> {
  const { Topology } = await import("./topology");
  const t = await Topology.start({ workers: 1, frontEnds: 1, threads: 1 });
  try {
    return { url: t.frontEnds[0].url, tenantKey: await t.createKey("tenant"), otherKey: await t.createKey("other"), close: () => t.close() };
  } catch (err) {
    await t.close();
    throw err;
  }
}
