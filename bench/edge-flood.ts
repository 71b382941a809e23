/**
 * Issue 39's acceptance item 2 (docs/operations.md "HTTP edges"): one `synthd serve --http10-port`
 * process, run with the machine's own descriptor limit, gets `--idle` idle connections and
 * `--slow` slowloris connections (one header byte every 5 s) on each of its two ports, all from
 * 127.0.0.1; meanwhile a `GET /v1/models` with the sandbox key goes to each port on a new
 * connection every 500 ms. Prints, per port, how long the server kept each idle connection
 * (from the client's connect to the server's close), how many it closed, and the probes'
 * answers and latencies; and the peak descriptor counts of the server's process and of its
 * HTTP/1.0 listener's.
 *
 * The connections are opened by four child processes (each within the same descriptor limit as
 * the server: a container may not raise it). Everything is bounded: connects time out after 20 s,
 * each child ends `--hold` seconds after its last connection was opened and closes what is left.
 */
import { fork } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { removeDir, startServer, tempDir } from "./harness";

/** Options of {@link edgeFloodBench}. */
export interface EdgeFloodOptions {
  /** Idle connections per port. */
  idle: number;
  /** Slowloris connections per port. */
  slow: number;
  /** Seconds to go on after the last connection was opened. */
  hold: number;
  /** Connects in flight at once. */
  parallel: number;
  json: boolean;
}

interface ConnStats {
  connected: number;
  failed: number;
  closedByServer: number;
  /** Milliseconds from connect to the server's close, of those it closed. */
  lifetimes: number[];
  answers: Record<string, number>;
}

interface ProbeStats {
  sent: number;
  ok: number;
  failures: Record<string, number>;
  latencies: number[];
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function fdLimitOf(pid: number): string {
  return /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.slice(1, 3).join("/") ?? "?";
}

/** One probe: a request on a new connection; resolves to the status line's code or a failure name. */
function probe(port: number, text: string, timeoutMs: number): Promise<{ result: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const s = net.connect(port, "127.0.0.1");
    let got = "";
    let done = false;
    const finish = (result: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ result, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    s.on("connect", () => s.write(text));
    s.on("data", (d: Buffer) => {
      got += d.toString("latin1");
      const m = /^HTTP\/1\.[01] (\d{3}) /.exec(got);
      if (m !== null && got.includes("\r\n\r\n")) finish(m[1]);
    });
    s.on("error", (e: NodeJS.ErrnoException) => finish(e.code ?? "error"));
    s.on("close", () => finish(got === "" ? "closed" : "partial"));
  });
}

/** Runs the benchmark (see the module comment). */
export async function edgeFloodBench(opts: EdgeFloodOptions): Promise<void> {
  const dir = tempDir();
  const server = await startServer(join(dir, "store"), ["--workers", "1", "--http10-port", "0"]);
  const children: ReturnType<typeof fork>[] = [];
  const timers: NodeJS.Timeout[] = [];
  try {
    const pid = server.child.pid!;
    const serverLimit = fdLimitOf(pid);
    const mainPort = Number(new URL(server.url).port);
    const h10Port = Number(new URL(/synthd HTTP\/1\.0 listener on (http:\/\/\S+)/.exec(server.stdout())![1]).port);
    const key = server.sandboxKey!;
    const ports = { main: mainPort, http10: h10Port } as const;
    const requests = {
      main: `GET /v1/models HTTP/1.1\r\nHost: synthd\r\nConnection: close\r\nAuthorization: Bearer ${key}\r\n\r\n`,
      http10: `GET /v1/models HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    };
    const conns: Record<string, ConnStats> = {};
    const probes: Record<string, ProbeStats> = {};
    for (const name of ["main", "http10"]) {
      probes[name] = { sent: 0, ok: 0, failures: {}, latencies: [] };
      for (const kind of ["idle", "slow"]) conns[`${name}.${kind}`] = { connected: 0, failed: 0, closedByServer: 0, lifetimes: [], answers: {} };
    }
    let peakFds = 0;
    let peakChildFds = 0;
    timers.push(
      setInterval(() => {
        try {
          peakFds = Math.max(peakFds, readdirSync(`/proc/${pid}/fd`).length);
          // The HTTP/1.0 listener's process (the server's only child process).
          for (const c of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) {
            peakChildFds = Math.max(peakChildFds, readdirSync(`/proc/${c}/fd`).length);
          }
        } catch {
          // the server is gone: reported by the probes
        }
      }, 250),
    );
    // Probes every 500 ms on each port, throughout.
    const probeRuns: Promise<void>[] = [];
    timers.push(
      setInterval(() => {
        for (const name of ["main", "http10"] as const) {
          probes[name].sent++;
          probeRuns.push(
            probe(ports[name], requests[name], 10_000).then(({ result, ms }) => {
              if (result === "200") {
                probes[name].ok++;
                probes[name].latencies.push(ms);
              } else probes[name].failures[result] = (probes[name].failures[result] ?? 0) + 1;
            }),
          );
        }
      }, 500),
    );

    const t0 = performance.now();
    const half = Math.ceil(opts.idle / 2);
    const specs: WorkerSpec[] = [
      { name: "main", port: mainPort, idle: half, slow: opts.slow, parallel: opts.parallel, hold: opts.hold },
      { name: "main", port: mainPort, idle: opts.idle - half, slow: 0, parallel: opts.parallel, hold: opts.hold },
      { name: "http10", port: h10Port, idle: half, slow: opts.slow, parallel: opts.parallel, hold: opts.hold },
      { name: "http10", port: h10Port, idle: opts.idle - half, slow: 0, parallel: opts.parallel, hold: opts.hold },
    ];
    const outs = await Promise.all(
      specs.map(
        (spec) =>
          new Promise<WorkerResult>((resolve, reject) => {
            const child = fork(__filename, ["worker"], { stdio: "inherit" });
            children.push(child);
            child.once("message", (m) => resolve(m as WorkerResult));
            child.once("exit", (code) => reject(new Error(`flood worker exited with ${code}`)));
            child.send(spec);
          }),
      ),
    );
    const openedS = Math.max(...outs.map((o) => o.openSeconds));
    const leftOpen = outs.reduce((a, o) => a + o.leftOpen, 0);
    for (const [i, o] of outs.entries()) {
      for (const [kind, st] of Object.entries(o.stats)) {
        const into = conns[`${specs[i].name}.${kind}`];
        into.connected += st.connected;
        into.failed += st.failed;
        into.closedByServer += st.closedByServer;
        into.lifetimes.push(...st.lifetimes);
        for (const [a, n] of Object.entries(st.answers)) into.answers[a] = (into.answers[a] ?? 0) + n;
      }
    }
    void t0;
    for (const t of timers) clearInterval(t);
    await Promise.all(probeRuns);

    const result = {
      serverFdLimit: serverLimit,
      peakServerFds: peakFds,
      peakHttp10ProcessFds: peakChildFds,
      openSeconds: Number(openedS.toFixed(1)),
      leftOpenAfterHold: leftOpen,
      connections: Object.fromEntries(
        Object.entries(conns).map(([k, st]) => [
          k,
          {
            connected: st.connected,
            failed: st.failed,
            closedByServer: st.closedByServer,
            lifetimeP50s: Number((pct(st.lifetimes, 50) / 1000).toFixed(1)),
            lifetimeP99s: Number((pct(st.lifetimes, 99) / 1000).toFixed(1)),
            lifetimeMaxs: Number((Math.max(...st.lifetimes) / 1000).toFixed(1)),
            answers: st.answers,
          },
        ]),
      ),
      probes: Object.fromEntries(
        Object.entries(probes).map(([k, p]) => [
          k,
          { sent: p.sent, ok: p.ok, failures: p.failures, p50ms: Math.round(pct(p.latencies, 50)), maxms: Math.round(Math.max(...p.latencies)) },
        ]),
      ),
    };
    if (opts.json) console.log(JSON.stringify(result));
    else console.log(JSON.stringify(result, null, 2));
  } finally {
    for (const t of timers) clearInterval(t);
    for (const c of children) if (c.exitCode === null) c.kill();
    await server.kill("SIGTERM");
    removeDir(dir);
  }
}

/** What one flood child opens: `idle` and `slow` connections to `port`. */
interface WorkerSpec {
  name: "main" | "http10";
  port: number;
  idle: number;
  slow: number;
  parallel: number;
  hold: number;
}

interface WorkerResult {
  stats: Record<"idle" | "slow", ConnStats>;
  openSeconds: number;
  leftOpen: number;
}

/** A flood child: opens its connections, waits for the server to close them (at most `hold` s after the last), reports. */
async function floodWorker(spec: WorkerSpec): Promise<WorkerResult> {
  const sockets = new Set<net.Socket>();
  let ending = false;
  const stats: Record<"idle" | "slow", ConnStats> = {
    idle: { connected: 0, failed: 0, closedByServer: 0, lifetimes: [], answers: {} },
    slow: { connected: 0, failed: 0, closedByServer: 0, lifetimes: [], answers: {} },
  };
  const open = (kind: "idle" | "slow"): Promise<void> =>
    new Promise((resolve) => {
      const st = stats[kind];
      const s = net.connect({ port: spec.port, host: "127.0.0.1" });
      sockets.add(s);
      let connectedAt = 0;
      let got = "";
      let trickle: NodeJS.Timeout | undefined;
      const connectTimer = setTimeout(() => s.destroy(new Error("connect timeout")), 20_000);
      s.on("connect", () => {
        clearTimeout(connectTimer);
        connectedAt = performance.now();
        st.connected++;
        if (kind === "slow") {
          const head = `GET /v1/models HTTP/1.1\r\nHost: synthd\r\nX-Slow: ${"a".repeat(1000)}`;
          let i = 0;
          s.write(head[i++]);
          trickle = setInterval(() => s.write(head[i++ % head.length]), 5_000);
        }
        resolve();
      });
      s.on("data", (d: Buffer) => (got += d.toString("latin1")));
      s.on("error", () => undefined);
      s.on("close", () => {
        clearTimeout(connectTimer);
        if (trickle !== undefined) clearInterval(trickle);
        sockets.delete(s);
        if (connectedAt === 0) {
          st.failed++;
          return resolve();
        }
        if (ending) return;
        st.closedByServer++;
        st.lifetimes.push(performance.now() - connectedAt);
        const answer = /^HTTP\/1\.[01] (\d{3})/.exec(got)?.[1] ?? (got === "" ? "none" : "other");
        st.answers[answer] = (st.answers[answer] ?? 0) + 1;
      });
    });
  const t0 = performance.now();
  const jobs: (() => Promise<void>)[] = [];
  for (let i = 0; i < Math.max(spec.idle, spec.slow); i++) {
    if (i < spec.slow) jobs.push(() => open("slow"));
    if (i < spec.idle) jobs.push(() => open("idle"));
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: spec.parallel }, async () => {
      while (next < jobs.length) await jobs[next++]();
    }),
  );
  const openSeconds = Number(((performance.now() - t0) / 1000).toFixed(1));
  const holdUntil = performance.now() + spec.hold * 1000;
  while (performance.now() < holdUntil && sockets.size > 0) await new Promise((r) => setTimeout(r, 250));
  const leftOpen = sockets.size;
  ending = true;
  for (const s of sockets) s.destroy();
  return { stats, openSeconds, leftOpen };
}

if (require.main === module && process.argv[2] === "worker") {
  process.once("message", (spec: WorkerSpec) => {
    floodWorker(spec).then(
      (r) => process.send!(r, () => process.exit(0)),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
