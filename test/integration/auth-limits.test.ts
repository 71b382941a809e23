/**
 * The per-address budget of failed authentications on real processes, in both topologies: the
 * embedded server (`synthd serve --data-dir`) and a front end of the shared topology
 * (`synthd serve --database --redis`, bench/topology.ts, PostgreSQL and Redis of its own; no
 * workers, the tests only list models). Every deployment starts fresh, so no test sees another's
 * counts. The budget is the default, 60 failed authentications per minute per address; the
 * tenant's org has 100,000 requests per minute.
 *
 * What a user relies on:
 * 1. concurrent valid requests from one address are never refused as failed logins (200 GETs at
 *    once all answer 200), and do not count against the address;
 * 2. failed logins from an address never block a valid key from it, while its bad keys past the
 *    budget still get 429 (61 bad keys: 60 x 401, 1 x 429; then a valid key: 200; then a bad
 *    key or none: 429 with Retry-After);
 * 3. X-Forwarded-For from a peer that is not a trusted proxy is ignored (one budget, whatever
 *    each request claims);
 * 4. behind a trusted proxy (`--trusted-proxy 127.0.0.1`), clients with different forwarded
 *    addresses have budgets of their own; a client cannot escape its budget by adding addresses
 *    to the left of the one the proxy appended, on the same header line or on one of its own;
 * 5. with `--forwarded-header forwarded`, RFC 7239 `for=` decides and X-Forwarded-For is ignored.
 */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertError, call, type Res } from "../contract/harness";
import { cli, Proc, Topology } from "../../bench/topology";

/** Failed authentications per minute per address (the server's default, DEFAULT_AUTH_FAILURE_LIMIT). */
const BUDGET = 60;
/** The tenant's requests per minute: far above anything these tests send. */
const ORG_LIMIT = 100_000;

/** One running deployment: its URL, a valid key of an org at {@link ORG_LIMIT}, and how to stop it. */
interface Deployment {
  url: string;
  key: string;
  close(): Promise<void>;
}

/** `synthd serve --data-dir TMP --port 0 ...args`, with its sandbox key's org set to {@link ORG_LIMIT}. */
async function embedded(args: string[]): Promise<Deployment> {
  const dir = mkdtempSync(join(tmpdir(), "synthd-auth-limits-"));
  const p = new Proc("embedded server", ["serve", "--data-dir", dir, "--host", "127.0.0.1", "--port", "0", "--workers", "1", ...args]);
  const close = async (): Promise<void> => {
    await p.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = (await p.waitFor("listening line", () => /synthd listening on (http:\/\/\S+)/.exec(p.stdout)?.[1], 60_000));
    const key = /sandbox key: (\S+)/.exec(p.stdout)?.[1];
    assert.ok(key !== undefined, `no sandbox key in ${p.stdout}`);
    await cli(["orgs", "set", "--data-dir", dir, "--org", "default", "--rate-limit", String(ORG_LIMIT)]);
    return { url, key, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** One front end of a fresh shared topology (no workers) started with `args`, a key of an org at {@link ORG_LIMIT}. */
async function shared(args: string[]): Promise<Deployment> {
  const topo = await Topology.start({ workers: 0, frontEnds: 1, frontEndArgs: args });
  try {
    const key = await topo.createKey("tenant");
    await topo.setOrg("tenant", { rateLimit: ORG_LIMIT });
    return { url: topo.frontEnds[0].url, key, close: () => topo.close() };
  } catch (err) {
    await topo.close();
    throw err;
  }
}

/** A key of the right form that no store holds (`i` makes it unique). */
const badKey = (i: number): string => `svc_test_${String(i).padStart(8, "0")}${"Z".repeat(40)}`;

/** How many responses have each status, e.g. `{ 200: 61, 429: 139 }`. */
function statuses(rs: Res[]): Record<number, number> {
  const n: Record<number, number> = {};
  for (const r of rs) n[r.status] = (n[r.status] ?? 0) + 1;
  return n;
}

/** Asserts `r` is the address's 429: the envelope, Retry-After >= 1 in the message, the address budget's headers. */
function assertAddressRefused(r: Res): void {
  assertError(r, "rate_limit_exceeded", undefined);
  const retry = r.headers.get("retry-after") ?? "";
  assert.match(retry, /^[1-9]\d*$/);
  assert.match(r.json.error.message, new RegExp(`missing or invalid API key from this address.* ${retry} second`));
  assert.equal(r.headers.get("x-ratelimit-limit"), String(BUDGET));
  assert.equal(r.headers.get("x-ratelimit-remaining"), "0");
}

/**
 * Sends `GET /v1/models` with these header lines as raw HTTP/1.1 (fetch would merge repeated
 * lines, which is what a proxy appending its own line does not do); resolves to the status.
 */
function rawGet(url: string, lines: string[]): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname);
    let got = "";
    sock.setEncoding("latin1");
    sock.on("data", (d: string) => {
      got += d;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m !== null) {
        sock.destroy();
        resolve(Number(m[1]));
      }
    });
    sock.on("error", reject);
    sock.on("close", () => reject(new Error(`connection closed without a status line: ${JSON.stringify(got)}`)));
    sock.write(["GET /v1/models HTTP/1.1", `Host: ${hostname}:${port}`, ...lines, "Connection: close", "", ""].join("\r\n"));
  });
}

/**
 * Waits, if less than 15 s of the current minute are left, for the next one. The budget is a
 * sliding window counter over windows aligned to the minute: just after a boundary the last
 * window's count starts to fade (by one in 60 per second), so an address that was exactly at its
 * budget gets one more failure admitted a second later. Each budget test runs within a few
 * seconds, all in one window and its first seconds of fade at most.
 */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 200));
}

const TOPOLOGIES = [
  { name: "embedded server", start: embedded },
  { name: "shared topology", start: shared },
] as const;

for (const { name, start } of TOPOLOGIES) {
  describe(`failed authentications per address: ${name}`, () => {
    const running: Deployment[] = [];
    const deploy = async (args: string[]): Promise<Deployment> => {
      const d = await start(args);
      running.push(d);
      return d;
    };
    after(async () => {
      await Promise.all(running.map((d) => d.close()));
    });

    test("valid keys are never refused for their address; bad keys past the budget are, whatever X-Forwarded-For an untrusted peer sends", async () => {
      // A proxy list that does not hold the peer (127.0.0.1): its X-Forwarded-For is not believed.
      const d = await deploy(["--trusted-proxy", "10.0.0.0/8"]);

      const valid = await Promise.all(Array.from({ length: 200 }, () => call(d.url, "/v1/models", { key: d.key })));
      assert.deepEqual(statuses(valid), { 200: 200 }, "200 concurrent GETs with a valid key from one address");
      for (const r of valid) assert.equal(r.headers.get("x-ratelimit-limit"), String(ORG_LIMIT), "the org's budget applied");

      // The valid requests counted nothing against the address: its whole budget is left. Each
      // bad login claims another forwarded address; all count against the peer's.
      await awayFromMinuteEnd();
      const bad = await Promise.all(
        Array.from({ length: BUDGET + 1 }, (_, i) => call(d.url, "/v1/models", { key: badKey(i), headers: { "x-forwarded-for": `198.51.100.${i + 1}` } })),
      );
      assert.deepEqual(statuses(bad), { 401: BUDGET, 429: 1 });
      for (const r of bad.filter((x) => x.status === 401)) {
        assertError(r, "api_key_invalid", undefined);
        assert.equal(r.headers.get("x-ratelimit-limit"), String(BUDGET));
      }
      assertAddressRefused(bad.find((r) => r.status === 429)!);

      // The address is over its budget, yet a valid key from it is served, at once and concurrently.
      const after61 = await Promise.all(Array.from({ length: 20 }, () => call(d.url, "/v1/models", { key: d.key })));
      assert.deepEqual(statuses(after61), { 200: 20 });
      assert.equal(after61[0].json.object, "list");
      // ... while the 62nd bad login, and a request without a key, still get 429.
      assertAddressRefused(await call(d.url, "/v1/models", { key: badKey(62), headers: { "x-forwarded-for": "203.0.113.62" } }));
      assertAddressRefused(await call(d.url, "/v1/models"));
    });

    test("behind a trusted proxy, each forwarded client has its own budget, and cannot forge its way out of it", async () => {
      const d = await deploy(["--trusted-proxy", "127.0.0.1"]);
      const asClient = (xff: string, key: string | undefined): Promise<Res> =>
        call(d.url, "/v1/models", { ...(key === undefined ? {} : { key }), headers: { "x-forwarded-for": xff } });

      // Client X (198.51.100.1) spends its budget.
      await awayFromMinuteEnd();
      const x = await Promise.all(Array.from({ length: BUDGET + 1 }, (_, i) => asClient("198.51.100.1", badKey(i))));
      assert.deepEqual(statuses(x), { 401: BUDGET, 429: 1 });
      assertAddressRefused(await asClient("198.51.100.1", badKey(100)));
      // Client Y, behind the same proxy, is not affected; nor is the proxy's own address.
      assertError(await asClient("198.51.100.2", badKey(101)), "api_key_invalid", undefined);
      assertError(await call(d.url, "/v1/models", { key: badKey(102) }), "api_key_invalid", undefined);
      // X forging Y's address to the left of the one the proxy appended is still X ...
      assertAddressRefused(await asClient("198.51.100.2, 198.51.100.1", badKey(103)));
      // ... also when the forgery is a header line of its own and the proxy added another (one list, in order).
      assert.equal(await rawGet(d.url, [`Authorization: Bearer ${badKey(104)}`, "X-Forwarded-For: 198.51.100.2", "X-Forwarded-For: 198.51.100.1"]), 429);
      assert.equal(await rawGet(d.url, [`Authorization: Bearer ${badKey(105)}`, "X-Forwarded-For: 198.51.100.1", "X-Forwarded-For: 198.51.100.2"]), 401);
      // X's valid key is served.
      const ok = await asClient("198.51.100.1", d.key);
      assert.equal(ok.status, 200, ok.text);
    });

    test("with --forwarded-header forwarded, RFC 7239 for= names the client and X-Forwarded-For is ignored", async () => {
      const d = await deploy(["--trusted-proxy", "127.0.0.1", "--forwarded-header", "forwarded"]);
      const v6 = { forwarded: 'for="[2001:db8:cafe::17]:4711";proto=https' };
      await awayFromMinuteEnd();
      const x = await Promise.all(Array.from({ length: BUDGET + 1 }, (_, i) => call(d.url, "/v1/models", { key: badKey(i), headers: v6 })));
      assert.deepEqual(statuses(x), { 401: BUDGET, 429: 1 });
      // The same client written another way (uncompressed, upper case) is the same address.
      assertAddressRefused(await call(d.url, "/v1/models", { key: badKey(200), headers: { forwarded: 'for="[2001:DB8:CAFE:0:0:0:0:17]"' } }));
      // X-Forwarded-For does not move it elsewhere: the Forwarded header decides.
      assertAddressRefused(await call(d.url, "/v1/models", { key: badKey(201), headers: { ...v6, "x-forwarded-for": "192.0.2.9" } }));
      // Another client behind the proxy has a budget of its own.
      assertError(await call(d.url, "/v1/models", { key: badKey(202), headers: { forwarded: "for=192.0.2.60;proto=http" } }), "api_key_invalid", undefined);
      assert.equal((await call(d.url, "/v1/models", { key: d.key, headers: v6 })).status, 200);
    });
  });
}
