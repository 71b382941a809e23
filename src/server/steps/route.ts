/**
 * Step `route`: the route for (method, path) in `handlers/routes.ts`; else 404 `route_not_found`,
 * or 405 `method_not_allowed` with `Allow` when other methods exist. A path parameter matches one
 * non-empty segment, undecoded; a trailing slash makes a different path.
 */
import type { RouteDef, Step } from "../context";
import { ApiError, truncate } from "../errors";
import { ROUTES } from "../handlers/routes";

/** The outcome of matching a path against the route table. */
export type RouteMatch =
  | { kind: "found"; def: RouteDef; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: string[] }
  | { kind: "not_found" };

/** Matches `method` + `path` against `routes` (first match wins). */
export function matchRoute(routes: readonly RouteDef[], method: string, path: string): RouteMatch {
  const segs = path.split("/");
  const allow: string[] = [];
  for (const def of routes) {
    const params = matchPattern(def.segments, segs);
    if (params === undefined) continue;
    if (def.method === method) return { kind: "found", def, params };
    if (!allow.includes(def.method)) allow.push(def.method);
  }
  return allow.length > 0 ? { kind: "method_not_allowed", allow } : { kind: "not_found" };
}

function matchPattern(pattern: readonly string[], segs: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== segs.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith(":")) {
      if (segs[i] === "") return undefined;
      params[p.slice(1)] = segs[i];
    } else if (p !== segs[i]) {
      return undefined;
    }
  }
  return params;
}

/** Sets `ctx.route` or throws 404 `route_not_found` / 405 `method_not_allowed`. */
export const route: Step = (ctx, next) => {
  const m = matchRoute(ROUTES, ctx.method, ctx.path);
  if (m.kind === "not_found") {
    throw new ApiError("route_not_found", `Unrecognized request URL (${ctx.method} ${truncate(ctx.path, 200)}).`);
  }
  if (m.kind === "method_not_allowed") {
    const allow = m.allow.join(", ");
    throw new ApiError(
      "method_not_allowed",
      `Method ${ctx.method} is not allowed on ${truncate(ctx.path, 200)}; allowed: ${allow}.`,
      undefined,
      { Allow: allow },
    );
  }
  ctx.route = { def: m.def, params: m.params };
  return next();
};
