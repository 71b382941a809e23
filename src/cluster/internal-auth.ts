/**
 * The shared secret between front ends and workers of the shared topology (docs/deploy.md,
 * docs/operations.md "The workers' internal port"). A worker's internal port generates rows from
 * any model of any org without an API key and without charging anyone: the front end has done
 * both before it asks. So the port must answer only the deployment's own front ends.
 *
 * - Every front end sends `SYNTHD_INTERNAL_TOKEN` as {@link INTERNAL_TOKEN_HEADER}; a worker with
 *   a token answers 401 to any request whose header is missing or differs, before it reads the
 *   body.
 * - Secure by default: a worker whose internal port is reachable from other machines (bound to an
 *   address that is not loopback, or advertised under one) refuses to start without a token
 *   ({@link assertWorkerExposureAllowed}). On loopback a token is optional: only processes of the
 *   same machine reach the port, and they can read the token from the environment anyway.
 * - Comparison in constant time: both sides are hashed with SHA-256 and the digests (always 32
 *   bytes, so lengths never differ) compared with `crypto.timingSafeEqual`; neither the length
 *   nor a common prefix of the presented value shows in the time taken.
 * - The token never appears in logs or error messages; it is read from the environment only (a
 *   command-line flag would show in `ps`).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";

/** HTTP header carrying the token (lower case, as Node's `req.headers` names it). */
export const INTERNAL_TOKEN_HEADER = "x-synthd-internal-token";

/** Environment variable holding the token on workers and front ends. */
export const INTERNAL_TOKEN_ENV = "SYNTHD_INTERNAL_TOKEN";

/**
 * Shortest token accepted (characters). 32 characters of `openssl rand -hex 32` (64 hex digits)
 * or `-base64 32` carry 128 bits or more: far beyond guessing over the network.
 */
export const MIN_INTERNAL_TOKEN_LENGTH = 32;

/** A token that cannot be used (too short, or characters an HTTP header cannot carry). */
export class InternalTokenError extends Error {
  override readonly name = "InternalTokenError";
}

/**
 * Checks a configured token and returns it, or undefined when none is set (`undefined` or the
 * empty string, as an unset environment variable reads).
 * @throws InternalTokenError when it is shorter than {@link MIN_INTERNAL_TOKEN_LENGTH} characters
 *   or has characters other than printable ASCII without spaces (0x21 to 0x7e). The message never
 *   contains the token.
 */
export function validateInternalToken(token: string | undefined): string | undefined {
  if (token === undefined || token === "") return undefined;
  if (token.length < MIN_INTERNAL_TOKEN_LENGTH) {
    throw new InternalTokenError(
      `${INTERNAL_TOKEN_ENV} is ${token.length} characters long; it must have at least ${MIN_INTERNAL_TOKEN_LENGTH} (e.g. the output of \`openssl rand -hex 32\`).`,
    );
  }
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new InternalTokenError(`${INTERNAL_TOKEN_ENV} must be printable ASCII without spaces (it travels in an HTTP header); e.g. the output of \`openssl rand -hex 32\`.`);
  }
  return token;
}

/**
 * True when `host` (an address or name to bind or to advertise; IPv6 with or without brackets)
 * is reachable from this machine only: `localhost`, 127.0.0.0/8, `::1`, or an IPv4-mapped
 * loopback address. Everything else, including `0.0.0.0`, `::` and any other host name, counts as
 * reachable from elsewhere: a name is not resolved, since what it resolves to can change.
 */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (h.startsWith("::ffff:")) h = h.slice("::ffff:".length);
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1";
  return false;
}

/**
 * Refuses a worker whose internal port would be reachable from other machines without a token.
 * `host` is the bind address; `advertiseUrl` (optional) the URL front ends are told to use.
 * @throws InternalTokenError when `token` is undefined and `host` or the advertised URL's host is
 *   not loopback ({@link isLoopbackHost}), with a message saying how to fix it.
 */
export function assertWorkerExposureAllowed(host: string, advertiseUrl: string | undefined, token: string | undefined): void {
  if (token !== undefined) return;
  let exposed: string | undefined;
  if (!isLoopbackHost(host)) exposed = `binds ${host}`;
  else if (advertiseUrl !== undefined) {
    let advertised: string;
    try {
      advertised = new URL(advertiseUrl).hostname;
    } catch {
      throw new InternalTokenError(`--advertise-url ${JSON.stringify(advertiseUrl)} is not a URL.`);
    }
    if (!isLoopbackHost(advertised)) exposed = `is advertised as ${advertiseUrl}`;
  }
  if (exposed === undefined) return;
  throw new InternalTokenError(
    `refusing to start: the worker's internal port ${exposed}, where other machines can reach it, and ${INTERNAL_TOKEN_ENV} is not set. ` +
      `That port generates rows from any model without an API key or billing. Set ${INTERNAL_TOKEN_ENV} (at least ${MIN_INTERNAL_TOKEN_LENGTH} characters, ` +
      `e.g. \`openssl rand -hex 32\`) alike on every worker and front end, or keep --host on 127.0.0.1 (see docs/deploy.md).`,
  );
}

/** Checks presented tokens against the configured one in constant time (see the module comment). */
export class InternalTokenCheck {
  private readonly digest: Buffer;

  /** `token`: the configured token, already {@link validateInternalToken validated}. */
  constructor(token: string) {
    this.digest = sha256(token);
  }

  /**
   * True iff `presented` (a request's header value as Node gives it: undefined when absent, an
   * array when repeated) is exactly the configured token. A missing or repeated header is false.
   */
  matches(presented: string | string[] | undefined): boolean {
    if (typeof presented !== "string") return false;
    return timingSafeEqual(sha256(presented), this.digest);
  }
}

function sha256(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}
