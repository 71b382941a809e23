/**
 * The shared secret between the shared topology's front ends and workers (docs/operations.md
 * "The workers' internal port"): the internal port generates rows for any org without key or
 * charge, so it must answer only the deployment's front ends. A worker with a token answers 401
 * before reading the body when {@link INTERNAL_TOKEN_HEADER} is missing or differs; one reachable
 * from other machines refuses to start without a token ({@link assertWorkerExposureAllowed}).
 * Compared in constant time (SHA-256 digests, `timingSafeEqual`); never logged; read from the
 * environment only (a flag would show in `ps`).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";

/** HTTP header carrying the token (lower case, as Node's `req.headers` names it). */
export const INTERNAL_TOKEN_HEADER = "x-synthd-internal-token";

/** Environment variable holding the token on workers and front ends. */
export const INTERNAL_TOKEN_ENV = "SYNTHD_INTERNAL_TOKEN";

/** Shortest token accepted: 32 characters of `openssl rand -hex 32` carry 128 bits or more. */
export const MIN_INTERNAL_TOKEN_LENGTH = 32;

/** A token that cannot be used (too short, or characters an HTTP header cannot carry). */
export class InternalTokenError extends Error {
  override readonly name = "InternalTokenError";
}

/**
 * Checks a configured token; undefined when unset or empty.
 * @throws InternalTokenError when shorter than {@link MIN_INTERNAL_TOKEN_LENGTH} or not printable
 *   ASCII without spaces (0x21-0x7e); the message never contains the token.
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
 * True when `host` (bind or advertised; IPv6 with or without brackets) is loopback only:
 * `localhost`, 127.0.0.0/8, `::1`, IPv4-mapped loopback. Names are not resolved (that can change).
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
 * Refuses a worker whose port (`host`, or `advertiseUrl`'s host) is not loopback without a token.
 * @throws InternalTokenError with a message saying how to fix it.
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

/** Checks presented tokens against the configured one in constant time. */
export class InternalTokenCheck {
  private readonly digest: Buffer;

  /** `token`: the configured token, already {@link validateInternalToken validated}. */
  constructor(token: string) {
    this.digest = sha256(token);
  }

  /** True iff `presented` (Node's header value) is exactly the token; absent or repeated: false. */
  matches(presented: string | string[] | undefined): boolean {
    if (typeof presented !== "string") return false;
    return timingSafeEqual(sha256(presented), this.digest);
  }
}

function sha256(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}
