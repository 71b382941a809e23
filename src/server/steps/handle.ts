/**
 * Step `handle`: runs the route's handler with its validated input and turns the handler's
 * {@link Reply} into the response (contract: "Response envelope"):
 * `{ object, data, metadata: { timestamp, has_more? } }`, or an empty body for 204.
 */
import type { Auth, Step } from "../context";
import type { HandlerCtx, Reply } from "../routes";

/** Calls `ctx.route.def.handler` and sets `ctx.response`. Always the last step. */
export const handle: Step = async (ctx) => {
  const { def, params } = ctx.route!;
  if (def.auth && ctx.auth === undefined) throw new Error(`unauthenticated request reached ${def.pattern}`);
  const hctx: HandlerCtx<unknown, unknown> = {
    body: ctx.input!.body,
    query: ctx.input!.query,
    params,
    auth: ctx.auth as Auth,
    services: ctx.services,
    requestId: ctx.requestId,
  };
  ctx.response = toResponse(await def.handler(hctx));
};

function toResponse(r: Reply): { status: number; headers: Record<string, string>; body?: string } {
  const headers = { ...(r.headers ?? {}) };
  if (r.kind === "empty") return { status: r.status, headers };
  if (r.kind === "text") {
    headers["Content-Type"] = r.contentType;
    return { status: r.status, headers, body: r.text };
  }
  headers["Content-Type"] = "application/json";
  const metadata: { timestamp: string; has_more?: boolean } = { timestamp: new Date().toISOString() };
  if (r.has_more !== undefined) metadata.has_more = r.has_more;
  return { status: r.status, headers, body: JSON.stringify({ object: r.object, data: r.data, metadata }) };
}
