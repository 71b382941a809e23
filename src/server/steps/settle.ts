/**
 * Step `settle`: the last word on a request's usage charge before its response is written
 * (exactly-once billing; `src/usage/quota.ts`, docs/operations.md "What survives kill -9").
 *
 * Generate takes its charge as pending (`Store.chargeUsage` with `pending`). Under an
 * Idempotency-Key the charge is settled together with the stored response (`steps/idempotency.ts`),
 * so this step finds nothing left. Without a key it is settled here, right before the response is
 * written: a 2xx settles it (the rows count), anything else refunds it (the handler has usually
 * done so already; a refund is applied once). If the settlement cannot be written (full disk), the
 * rows are not sent: the answer becomes 503 `training_service_unavailable` and the charge is
 * refunded, now or by the reconciliation that retries until the store takes it.
 *
 * Delivery (un-keyed requests): a 2xx whose client has already gone away (`ctx.aborted`) is
 * refunded instead of settled, and a settled charge is handed to the adapter as
 * `ctx.deliveryCharge`: `app.ts` gives it back (`Store.refundUsage`) when the response is not
 * completely handed over to the socket (the client disconnects before or while it is written).
 * Delivery is all or nothing per request: a response cut off after any byte is refunded in full.
 * So without a key usage counts the rows of responses the server finished writing. Under a key the
 * stored response counts as delivered: the client gets it back by retrying with the key.
 *
 * A process killed after settling but before the response was written has charged rows the
 * client did not receive: without a key nothing can tell a lost answer from a delivered one then.
 * Clients that need exactly-once send an Idempotency-Key (the SDK always does).
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
