/**
 * Step `settle`: the last word on a request's usage charge before its response is written
 * (exactly-once billing; docs/operations.md "What survives kill -9"). Under an Idempotency-Key the
 * charge was settled with the stored response (`steps/idempotency.ts`). Without one, a 2xx settles
 * it here and anything else refunds it (once); a settlement that cannot be written turns the
 * answer into 503 and refunds. A 2xx whose client already left is refunded, and a settled charge
 * goes to the adapter as `ctx.deliveryCharge`, refunded in full unless the whole response is
 * handed to the socket. A kill between settling and writing bills rows the client did not get:
 * without a key nothing can tell; clients that need exactly-once send a key (the SDK does).
 */
import type { Ctx, Step } from "../context";
import { setErrorResponse, storageUnavailable } from "../errors";

/** Settles or refunds the request's pending charge once the rest of the chain has answered. */
export const settle: Step = async (ctx, next) => {
  const { live } = ctx.services;
  live.add(ctx.requestId);
  try {
    await next();
  } finally {
    try {
      await settleOrRefund(ctx);
    } finally {
      live.delete(ctx.requestId);
    }
  }
};

async function settleOrRefund(ctx: Ctx): Promise<void> {
  const { store, clock, logger } = ctx.services;
  // Only Generate (a POST) charges: spare every other request the store read.
  if (ctx.method !== "POST") return;
  const pending = await store.getPendingCharge(ctx.requestId);
  if (pending === undefined) return;
  const ok = ctx.response !== undefined && ctx.response.status >= 200 && ctx.response.status < 300;
  // A client that went away gets nothing: refund rather than settle.
  if (ok && !ctx.aborted) {
    try {
      if (await store.settleCharge(ctx.requestId)) {
        ctx.deliveryCharge = pending.charge;
        return;
      }
    } catch (err) {
      logger.error({ err, req_id: ctx.requestId }, "could not settle a charge; refunding and answering 503");
      setErrorResponse(ctx, storageUnavailable("The usage charge of this request could not be recorded"));
    }
  }
  await store.refundPending(ctx.requestId, clock()).catch((err: unknown) => {
    logger.error({ err, req_id: ctx.requestId }, "could not refund a charge; reconciling later");
    ctx.services.reconcileSoon();
  });
}
