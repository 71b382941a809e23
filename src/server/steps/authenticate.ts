/**
 * Step `authenticate` (contract: "Authentication"): every path under `/v1` needs
 * `Authorization: Bearer <API_KEY>`, route or not, so an unauthenticated client learns nothing
 * about routes. No header: 401 `api_key_missing`; another scheme, prefix or an unknown key: 401
 * `api_key_invalid`. The prefix decides the environment; the key is looked up by SHA-256 only and
 * never logged or stored. Only a failed request counts against its address
 * (`countFailedAuthentication`: 429 instead of 401 over budget).
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

/** Sets `ctx.auth` for `/v1` paths, or throws 401 (or 429/503 from the address budget). */
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
