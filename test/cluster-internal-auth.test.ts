/**
 * The workers' internal token (src/cluster/internal-auth.ts): which addresses count as reachable
 * from this machine only, which tokens are accepted at start, and the constant-time check of a
 * presented header. The same rules on real processes: test/integration/worker-security.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  assertWorkerExposureAllowed,
  InternalTokenCheck,
  InternalTokenError,
  isLoopbackHost,
  MIN_INTERNAL_TOKEN_LENGTH,
  validateInternalToken,
} from "../src/cluster/internal-auth";

const TOKEN = "0123456789abcdef0123456789abcdef0123456789abcdef";

test("loopback: localhost, 127.0.0.0/8, ::1 and IPv4-mapped loopback; everything else (0.0.0.0, ::, LAN addresses, other names) is reachable", () => {
  for (const h of ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "api.localhost", "::1", "[::1]", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"]) {
    assert.equal(isLoopbackHost(h), true, h);
  }
  for (const h of ["0.0.0.0", "::", "[::]", "10.0.0.5", "192.168.1.1", "128.0.0.1", "::ffff:10.0.0.1", "worker1.internal", "localhost.example.com", ""]) {
    assert.equal(isLoopbackHost(h), false, h);
  }
});

test("a worker off loopback (bound or advertised) without a token is refused with a message naming the variable; on loopback, or with a token, it is allowed", () => {
  assert.throws(() => assertWorkerExposureAllowed("0.0.0.0", undefined, undefined), (e: Error) => e instanceof InternalTokenError && /binds 0\.0\.0\.0.*SYNTHD_INTERNAL_TOKEN is not set/.test(e.message));
  assert.throws(
    () => assertWorkerExposureAllowed("127.0.0.1", "http://worker1.internal:7070", undefined),
    (e: Error) => e instanceof InternalTokenError && /advertised as http:\/\/worker1\.internal:7070/.test(e.message),
  );
  assert.throws(() => assertWorkerExposureAllowed("127.0.0.1", "not a url", undefined), InternalTokenError);
  assertWorkerExposureAllowed("127.0.0.1", undefined, undefined);
  assertWorkerExposureAllowed("::1", "http://127.0.0.1:7070", undefined);
  assertWorkerExposureAllowed("0.0.0.0", "http://worker1.internal:7070", TOKEN);
});

test("tokens: unset or empty means none; shorter than 32 characters or not printable ASCII is refused, and the message never holds the token", () => {
  assert.equal(validateInternalToken(undefined), undefined);
  assert.equal(validateInternalToken(""), undefined);
  assert.equal(validateInternalToken(TOKEN), TOKEN);
  assert.equal(validateInternalToken("x".repeat(MIN_INTERNAL_TOKEN_LENGTH)), "x".repeat(MIN_INTERNAL_TOKEN_LENGTH));
  const short = "s3cr3t-but-short";
  assert.throws(() => validateInternalToken(short), (e: Error) => e instanceof InternalTokenError && /16 characters long/.test(e.message) && !e.message.includes(short));
  const spaced = "correct horse battery staple and more words";
  assert.throws(() => validateInternalToken(spaced), (e: Error) => e instanceof InternalTokenError && /printable ASCII/.test(e.message) && !e.message.includes(spaced));
  assert.throws(() => validateInternalToken(`${"é".repeat(40)}`), InternalTokenError);
});

test("the check accepts exactly the token: not a missing, repeated, longer, shorter or other value", () => {
  const check = new InternalTokenCheck(TOKEN);
  assert.equal(check.matches(TOKEN), true);
  for (const bad of [undefined, "", TOKEN.slice(0, -1), `${TOKEN}0`, TOKEN.toUpperCase(), ` ${TOKEN}`, [TOKEN], [TOKEN, TOKEN], `${TOKEN}, ${TOKEN}`]) {
    assert.equal(check.matches(bad as string | string[] | undefined), false, JSON.stringify(bad));
  }
});
