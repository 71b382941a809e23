/**
 * The client address of the per-address limits (src/server/clientAddress.ts): which address a
 * request is counted against, given its TCP peer, its forwarding headers and the trusted proxies,
 * and the `--trusted-proxy` / `SYNTHD_TRUSTED_PROXIES` / `--forwarded-header` options of
 * `synthd serve`. The end-to-end behaviour on real servers is test/integration/auth-limits.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import {
  canonicalAddress,
  clientAddress,
  nodeAddress,
  parseForwarded,
  parseXForwardedFor,
  RELAY_CLIENT_HEADER,
  RELAY_SECRET_HEADER,
  relayedPeer,
  relaySecretDigest,
  TrustedProxies,
} from "../src/server/clientAddress";

/** How uWS reports the peers 127.0.0.1 (on a dual-stack socket) and ::1. */
const UWS_V4_LOOPBACK = "0000:0000:0000:0000:0000:ffff:7f00:0001";
const UWS_V6_LOOPBACK = "0000:0000:0000:0000:0000:0000:0000:0001";

test("one address has one canonical text, however it is written", () => {
  assert.equal(canonicalAddress(UWS_V4_LOOPBACK), "127.0.0.1");
  assert.equal(canonicalAddress("::ffff:127.0.0.1"), "127.0.0.1");
  assert.equal(canonicalAddress(" 127.0.0.1 "), "127.0.0.1");
  assert.equal(canonicalAddress(UWS_V6_LOOPBACK), "::1");
  assert.equal(canonicalAddress("2001:DB8:0:0:0:0:0:1"), "2001:db8::1");
  assert.equal(canonicalAddress("fe80::1%eth0"), "fe80::1");
  for (const notIp of ["", "unknown", "_hidden", "01.2.3.4", "1.2.3", "[::1]", "1.2.3.4:80", "::g"]) {
    assert.equal(canonicalAddress(notIp), undefined, notIp);
  }
});

test("a hop may carry brackets and a port", () => {
  assert.equal(nodeAddress("192.0.2.1:8080"), "192.0.2.1");
  assert.equal(nodeAddress("[2001:db8::1]"), "2001:db8::1");
  assert.equal(nodeAddress("[2001:db8::1]:8080"), "2001:db8::1");
  assert.equal(nodeAddress("[192.0.2.1]"), undefined, "brackets are for IPv6 only");
  assert.equal(nodeAddress("[2001:db8::1]:x"), undefined);
});

test("X-Forwarded-For: one hop per comma, unparseable hops kept as holes", () => {
  assert.deepEqual(parseXForwardedFor(undefined), []);
  assert.deepEqual(parseXForwardedFor("  "), []);
  assert.deepEqual(parseXForwardedFor("203.0.113.195, 2001:DB8::7 ,[2001:db8::1]:80,1.2.3.4:5, junk"), [
    "203.0.113.195",
    "2001:db8::7",
    "2001:db8::1",
    "1.2.3.4",
    undefined,
  ]);
});

test("Forwarded (RFC 7239): the for= of each element; quoted strings, case and other parameters", () => {
  assert.deepEqual(parseForwarded(undefined), []);
  assert.deepEqual(
    parseForwarded('for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711", for=unknown, for=_hidden, proto=https, for="198.51.100.1:80"'),
    ["192.0.2.60", "2001:db8:cafe::17", undefined, undefined, undefined, "198.51.100.1"],
  );
  // A comma or semicolon inside a quoted value does not split it; backslash escapes are undone.
  assert.deepEqual(parseForwarded('by="a,b;c";for=192.0.2.1, for="192.0.2.\\2"'), ["192.0.2.1", "192.0.2.2"]);
  // The first for= of an element counts.
  assert.deepEqual(parseForwarded("for=192.0.2.1;for=192.0.2.2"), ["192.0.2.1"]);
});

test("trusted proxies: addresses and CIDR ranges of both families, lists, IPv4-mapped forms", () => {
  const t = TrustedProxies.parse(["10.0.0.0/8, 127.0.0.1", "::1 2001:db8::/32", "::ffff:192.168.0.0/112"]);
  assert.deepEqual(t.entries, ["10.0.0.0/8", "127.0.0.1", "::1", "2001:db8::/32", "192.168.0.0/16"]);
  assert.equal(t.empty, false);
  for (const yes of ["10.0.0.1", "10.255.255.255", "127.0.0.1", "::1", "2001:db8:ffff::9", "192.168.7.7"]) assert.equal(t.has(yes), true, yes);
  for (const no of ["11.0.0.1", "127.0.0.2", "::2", "2001:db9::1", "192.169.0.1", "not an address"]) assert.equal(t.has(no), false, no);
  assert.equal(TrustedProxies.parse([]).empty, true);
  assert.equal(TrustedProxies.parse(" , ").empty, true);
});

test("trusted proxies: an entry that is neither an address nor a range is refused by name", () => {
  for (const bad of ["1.2.3.4/33", "::/129", "1.2.3.4/", "1.2.3.4/x", "foo", "10.0.0.0/8/8", "localhost"]) {
    assert.throws(() => TrustedProxies.parse(["127.0.0.1", bad]), (err: Error) => err.message.includes(JSON.stringify(bad)), bad);
  }
  assert.throws(() => TrustedProxies.parse("::ffff:10.0.0.0/64"), /at least 96/);
});

test("the client address: the peer unless the peer is trusted, then the right-most untrusted hop", () => {
  const none = TrustedProxies.parse([]);
  const lb = TrustedProxies.parse(["127.0.0.1", "10.0.0.0/8"]);
  const xff = (v: string) => ({ "x-forwarded-for": v });

  // Nothing trusted, or an untrusted peer: the header is ignored.
  assert.equal(clientAddress(UWS_V4_LOOPBACK, xff("198.51.100.1"), none), "127.0.0.1");
  assert.equal(clientAddress("192.0.2.9", xff("198.51.100.1"), lb), "192.0.2.9");
  assert.equal(clientAddress(UWS_V6_LOOPBACK, xff("198.51.100.1"), lb), "::1");
  // A trusted peer: the hop it appended, past any other trusted proxies; whatever the client put left of it is ignored.
  assert.equal(clientAddress(UWS_V4_LOOPBACK, xff("198.51.100.1"), lb), "198.51.100.1");
  assert.equal(clientAddress(UWS_V4_LOOPBACK, xff("6.6.6.6, 198.51.100.1, 10.1.2.3"), lb), "198.51.100.1");
  // No header: the proxy itself. Every hop trusted: the left-most.
  assert.equal(clientAddress(UWS_V4_LOOPBACK, {}, lb), "127.0.0.1");
  assert.equal(clientAddress(UWS_V4_LOOPBACK, xff("10.0.0.7, 10.0.0.8"), lb), "10.0.0.7");
  // A hop a trusted proxy should have written is not an address: the nearest trusted hop.
  assert.equal(clientAddress(UWS_V4_LOOPBACK, xff("198.51.100.1, unknown, 10.0.0.8"), lb), "10.0.0.8");
  assert.equal(clientAddress(UWS_V4_LOOPBACK, xff("198.51.100.1, junk"), lb), "127.0.0.1");
  // The header the proxies write decides; the other one is ignored.
  const both = { "x-forwarded-for": "198.51.100.1", forwarded: 'for="[2001:db8::5]"' };
  assert.equal(clientAddress(UWS_V4_LOOPBACK, both, lb, "x-forwarded-for"), "198.51.100.1");
  assert.equal(clientAddress(UWS_V4_LOOPBACK, both, lb, "forwarded"), "2001:db8::5");
  // A peer that is not an IP address (a Unix socket) is used as it is.
  assert.equal(clientAddress("", xff("198.51.100.1"), lb), "");
});

/** The built CLI (this file runs from dist/test). */
const CLI = resolve(__dirname, "../src/cli/main.js");

test("synthd serve refuses a bad --trusted-proxy, --forwarded-header or SYNTHD_TRUSTED_PROXIES as usage errors (exit 2) before starting", () => {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("SYNTHD_")) delete env[k];
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, [CLI, "serve", "--port", "0", "--data-dir", "/nonexistent/synthd-never-created", ...args], {
      env: { ...env, ...extra },
      encoding: "utf8",
      timeout: 30_000,
    });
  const flag = run(["--trusted-proxy", "127.0.0.1", "--trusted-proxy", "10.0.0.0/33"]);
  assert.equal(flag.status, 2, flag.stderr);
  assert.match(flag.stderr, /"10\.0\.0\.0\/33" is neither an IP address nor a CIDR range/);
  const fromEnv = run([], { SYNTHD_TRUSTED_PROXIES: "10.0.0.0/8,proxy.internal" });
  assert.equal(fromEnv.status, 2, fromEnv.stderr);
  assert.match(fromEnv.stderr, /"proxy\.internal" is neither/);
  const header = run(["--forwarded-header", "x-real-ip"]);
  assert.equal(header.status, 2, header.stderr);
  assert.match(header.stderr, /x-forwarded-for, forwarded/);
});

test("the HTTP/1.0 listener's client address is believed only with its secret, and both headers are always removed", () => {
  const secret = "s3cret-of-this-process";
  const digest = relaySecretDigest(secret);
  const headers = (s: string | undefined, client: string | undefined): Record<string, string> => {
    const h: Record<string, string> = { authorization: "Bearer k" };
    if (s !== undefined) h[RELAY_SECRET_HEADER] = s;
    if (client !== undefined) h[RELAY_CLIENT_HEADER] = client;
    return h;
  };
  const cases: [string | undefined, string | undefined, Buffer | undefined, string][] = [
    [secret, "192.0.2.7", digest, "192.0.2.7"],
    [secret, "::ffff:192.0.2.7", digest, "192.0.2.7"],
    [secret, "2001:DB8::1", digest, "2001:db8::1"],
    // A wrong secret, one of another length, none, or a listener that does not run: the peer.
    [`${secret}x`, "192.0.2.7", digest, UWS_V4_LOOPBACK],
    ["s3cret-of-this-procesS", "192.0.2.7", digest, UWS_V4_LOOPBACK],
    ["", "192.0.2.7", digest, UWS_V4_LOOPBACK],
    [undefined, "192.0.2.7", digest, UWS_V4_LOOPBACK],
    [secret, "192.0.2.7", undefined, UWS_V4_LOOPBACK],
    // The secret with a client that is not an address: the peer.
    [secret, "unknown", digest, UWS_V4_LOOPBACK],
    [secret, undefined, digest, UWS_V4_LOOPBACK],
  ];
  for (const [s, client, d, expected] of cases) {
    const h = headers(s, client);
    assert.equal(relayedPeer(UWS_V4_LOOPBACK, h, d), expected, JSON.stringify([s, client, d !== undefined]));
    assert.deepEqual(Object.keys(h), ["authorization"], "the relay's headers are gone");
  }
  // What relayedPeer gives is the peer of clientAddress: behind a trusted proxy the forwarded client counts.
  const h = { ...headers(secret, "10.0.0.5"), "x-forwarded-for": "198.51.100.9" };
  assert.equal(clientAddress(relayedPeer("127.0.0.1", h, digest), h, TrustedProxies.parse("10.0.0.0/8")), "198.51.100.9");
});
