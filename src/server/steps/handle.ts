/**
 * Step `handle`: runs the route's handler and turns its {@link Reply} into the response
 * (contract: "Response envelope"), or an empty body for 204.
 */
import type { Auth, HandlerCtx, Reply, Step } from "../context";

/** Calls `ctx.route.def.handler` and sets `ctx.response`. Always the last step. */
export const handle: Step = async (ctx) => {
  const { def, params } = ctx.route!;
  if (def.auth && ctx.auth === undefined) throw new Error(`unauthenticated request reached ${def.pattern}`);
  const hctx: HandlerCtx<unknown, unknown> = {
    body: ctx.input!.body,
    query: ctx.input!.query,
    params,
    accept: ctx.headers.accept ?? "",
    auth: ctx.auth as Auth,
    services: ctx.services,
    requestId: ctx.requestId,
    idempotency: ctx.idempotency,
    prepared: ctx.prepared?.input.ok ? ctx.prepared.input : undefined,
    aborted: () => ctx.aborted,
  };
  ctx.response = toResponse(await def.handler(hctx));
};

/** The response of a handler's {@link Reply}: status, its headers and body (envelope, or none). */
export function toResponse(r: Reply): { status: number; headers: Record<string, string>; body?: string | Uint8Array } {
  if (r.kind === "stored") return { status: r.response.status, headers: { ...r.response.headers }, body: r.response.body };
  const headers = { ...(r.headers ?? {}) };
  if (r.kind === "empty") return { status: r.status, headers };
  if (r.kind === "text") {
    headers["Content-Type"] = r.contentType;
    return { status: r.status, headers, body: r.text };
  }
  if (r.kind === "binary") {
    headers["Content-Type"] = r.contentType;
    return { status: r.status, headers, body: r.bytes };
  }
  headers["Content-Type"] = "application/json";
  const metadata: { timestamp: string; has_more?: boolean } = { timestamp: new Date().toISOString() };
  if (r.has_more !== undefined) metadata.has_more = r.has_more;
  return { status: r.status, headers, body: JSON.stringify({ object: r.object, data: r.data, metadata }) };
}
