/**
 * Requests per second of a small authenticated GET (`GET /v1/models`, an empty list) on the main
 * (uWebSockets.js) port and through the HTTP/1.0 listener (`--http10-port`), in the same run on
 * one `synthd serve` (docs/operations.md "HTTP edges"). `node dist/bench/http10.js [seconds]`.
 *
 * Three clients, each `CONCURRENCY` requests in flight from Node's `http` (ab is not installed here):
 * - main port, HTTP/1.1 keep-alive;
 * - HTTP/1.0 port, HTTP/1.1 keep-alive (the forwarding cost alone);
 * - HTTP/1.0 port, HTTP/1.0 without keep-alive (a new connection per request, as `ab` without `-k`).
 * Rounds alternate between them so that drift of the machine hits all three alike.
 */
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { removeDir, startServer, tempDir } from "./harness";

const CONCURRENCY = 16;

/** Runs `CONCURRENCY` loops of GETs against `url` for `ms`; resolves to requests per second. */
async function rate(url: string, key: string, ms: number, mode: "keepalive" | "http10"): Promise<number> {
  const { hostname, port } = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let done = 0;
  const end = performance.now() + ms;
  const one = (): Promise<void> =>
    mode === "http10"
      ? new Promise((resolve, reject) => {
          // Node's client cannot send an HTTP/1.0 request line: raw, one connection per request.
          const s = net.connect(Number(port), hostname);
          let head = "";
          s.on("connect", () => s.write(`GET /v1/models HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`));
          s.on("data", (d: Buffer) => {
            if (head.length < 16) head += d.toString("latin1");
          });
          s.on("error", reject);
          s.on("close", () => (/^HTTP\/1\.[01] 200 /.test(head) ? resolve() : reject(new Error(`answer ${JSON.stringify(head)}`))));
        })
      : new Promise((resolve, reject) => {
          const req = http.request(
            { host: hostname, port: Number(port), path: "/v1/models", agent, headers: { authorization: `Bearer ${key}` } },
            (res) => {
              res.resume();
              res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
            },
          );
          req.on("error", reject);
          req.end();
        });
  const loop = async (): Promise<void> => {
    while (performance.now() < end) {
      await one();
      done++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  agent.destroy();
  return (done * 1000) / (performance.now() - t0);
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 5);
  const dir = tempDir();
  const server = await startServer(join(dir, "store"), ["--workers", "1", "--http10-port", "0"]);
  try {
    const h10 = /synthd HTTP\/1\.0 listener on (http:\/\/\S+)/.exec(server.stdout())![1];
    const key = server.sandboxKey!;
    const runs: Record<string, number[]> = { main: [], http10Port11: [], http10Port10: [] };
    for (let round = 0; round < 3; round++) {
      runs.main.push(await rate(server.url, key, seconds * 1000, "keepalive"));
      runs.http10Port11.push(await rate(h10, key, seconds * 1000, "keepalive"));
      runs.http10Port10.push(await rate(h10, key, seconds * 1000, "http10"));
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[1];
    const m = median(runs.main);
    for (const [name, xs] of Object.entries(runs)) {
      console.log(`${name.padEnd(14)} ${xs.map((x) => x.toFixed(0)).join(" / ")} req/s, median ${median(xs).toFixed(0)}, ratio to main ${(median(xs) / m).toFixed(2)}`);
    }
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
