/**
 * Step `authenticate` (contract: "Authentication"): every path under `/v1` needs
 * `Authorization: Bearer <API_KEY>`, whether or not the path names an endpoint, so an
 * unauthenticated client learns nothing about routes. Paths outside `/v1` (the error docs page)
 * are public.
 *
 * - no `Authorization` header (or an empty one): 401 `api_key_missing`, no `param` (rule 3);
 * - any other scheme, a key without the `svc_test_` / `svc_live_` prefix, or a key whose SHA-256
 *   is not stored: 401 `api_key_invalid`.
 *
 * The key's prefix decides the environment (`svc_test_` -> `test`, `svc_live_` -> `live`).
 * The key is looked up by its SHA-256 only (`Store.findKey`); it is never logged or stored.
 *
 * Only once a request is known to fail (no key, a malformed header, or a key the lookup rejected)
 * does it count against its client address's budget of failed authentications
 * (`countFailedAuthentication`), which answers 429 instead of the 401 when the address is over
 * it. A valid key is never refused for its address.
 */
import type { Environment } from "../../store";
import type { Step } from "../context";
import { ApiError } from "../errors";
import { countFailedAuthentication } from "./rateLimit";

const PREFIXES: Record<string, Environment> = { svc_test_: "test", svc_live_: "live" };

/** True for paths that need a key: `/v1` and everything under it. */
export function isApiPath(path: string): boolean {
  return path === "/v1" || path.startsWith("/v1/");
}

/**
 * Sets `ctx.auth` for `/v1` paths, or throws 401 (429 when the client address has too many
 * failed authentications, 503 when the shared limiter cannot decide).
 */
export const authenticate: Step = async (ctx, next) => {
  if (!isApiPath(ctx.path)) return next();
  const fail = async (err: ApiError): Promise<never> => {
    await countFailedAuthentication(ctx);
    throw err;
  };
  const header = (ctx.headers["authorization"] ?? "").trim();
  if (header === "") {
    return fail(
      new ApiError(
        "api_key_missing",
        "No API key provided. Send your key in the Authorization header: 'Authorization: Bearer <API_KEY>'.",
      ),
    );
  }
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (m === null) {
    return fail(new ApiError("api_key_invalid", "The Authorization header must have the form 'Bearer <API_KEY>'."));
  }
  const key = m[1];
  const env = PREFIXES[key.slice(0, 9)];
  const rec = env === undefined || key.length > 256 ? undefined : await ctx.services.store.findKey(key);
  if (rec === undefined || rec.env !== env) {
    return fail(new ApiError("api_key_invalid", `Invalid API key provided: ${mask(key)}.`));
  }
  ctx.auth = { org: rec.org, env: rec.env, keyPrefix: rec.prefix };
  return next();
};

/** The key with all but its first 12 and last 4 characters masked (as Stripe echoes keys). */
function mask(key: string): string {
  if (key.length <= 16) return "*".repeat(Math.min(key.length, 16));
  return `${key.slice(0, 12)}${"*".repeat(Math.min(key.length - 16, 24))}${key.slice(-4)}`;
}
