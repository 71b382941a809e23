/** Writing answers on a uWS response for the HTTP front end (`app.ts`); the request log line. */
import { STATUS_CODES } from "node:http";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { HttpResponse } from "uWebSockets.js";
import { newRequestId, type ChargeRequest } from "../store";
import type { Ctx, Services } from "./context";
import { errorBody, paramInvalid } from "./errors";
import type { FramingError } from "./steps/readBody";

/**
 * Answers untrustworthy body framing ({@link framingError}) with 400 and a close. Call it on the
 * turn after the request arrived, never in its route callback: uWS parses the rest of that read
 * first, so a request smuggled behind would run; pending, uWS closes on finding it instead.
 */
export function refuseFraming(res: HttpResponse, method: string, framing: FramingError, services: Services, logger: Logger): void {
  const requestId = newRequestId();
  const body = errorBody(paramInvalid(framing.param, framing.message), requestId, services.docsUrl);
  res.cork(() => {
    res
      .writeStatus("400 Bad Request")
      .writeHeader("X-Request-Id", requestId)
      .writeHeader("Content-Type", "application/json")
      .end(JSON.stringify(body), true);
  });
  logger.info({ req_id: requestId, method, route: null, status: 400, param: framing.param }, "request");
}

/**
 * Writes `ctx.response` unless the client went away; resolves whether it was all handed over. A
 * charged response (`ctx.deliveryCharge`) is tracked (`tryEnd`, `onWritable`) until uWS took its
 * last byte; `setAbortHook` registers what `onAborted` calls meanwhile. Others are ended at once.
 */
export function writeResponse(res: HttpResponse, ctx: Ctx, setAbortHook: (hook: () => void) => void): Promise<boolean> {
  if (ctx.aborted) return Promise.resolve(false);
  const r = ctx.response!;
  // Unread body bytes would be parsed as the next request: close the connection instead.
  const close = !ctx.bodySource.complete;
  const head = (): void => {
    res.writeStatus(`${r.status} ${STATUS_CODES[r.status] ?? ""}`.trimEnd());
    for (const [k, v] of Object.entries(ctx.responseHeaders)) res.writeHeader(k, v);
    for (const [k, v] of Object.entries(r.headers)) res.writeHeader(k, v);
  };
  if (ctx.deliveryCharge === undefined || r.body === undefined || close) {
    res.cork(() => {
      head();
      // No body (204): no Content-Length (RFC 9110 §8.6). uWS writes a bogus length for an
      // `undefined` length argument, so none is passed unless closing.
      if (r.body === undefined) {
        if (close) res.endWithoutBody(0, true);
        else res.endWithoutBody();
      } else res.end(r.body, close);
    });
    return Promise.resolve(true);
  }
  const body = typeof r.body === "string" ? Buffer.from(r.body) : r.body;
  return new Promise<boolean>((resolve) => {
    let finished = false;
    const finish = (delivered: boolean): void => {
      if (finished) return;
      finished = true;
      resolve(delivered);
    };
    setAbortHook(() => finish(false));
    res.cork(() => {
      head();
      // The response's body offset before its first byte (0: uWS resets it per request).
      const base = res.getWriteOffset();
      const [, done] = res.tryEnd(body, body.byteLength);
      if (done) return finish(true);
      res.onWritable((offset) => {
        const [ok, doneNow] = res.tryEnd(body.subarray(offset - base), body.byteLength);
        if (doneNow) finish(true);
        return ok;
      });
    });
  });
}

/**
 * Refunds the charge of an undelivered un-keyed response (ledger entry included). One that cannot
 * be written is logged at error level with the charge: the rows stay billed.
 */
export async function refundUndelivered(ctx: Ctx, charge: ChargeRequest): Promise<void> {
  const { store, clock, logger } = ctx.services;
  try {
    await store.refundUsage({ ...charge, at_ms: clock() });
    ctx.refundedRows = charge.rows;
  } catch (err) {
    logger.error({ err, req_id: ctx.requestId, charge }, "could not refund the rows of an undelivered response");
  }
}

/** One line per request: method, route pattern (not raw ids), status, milliseconds, request id. */
export function logRequest(logger: Logger, ctx: Ctx): void {
  logger.info(
    {
      req_id: ctx.requestId,
      method: ctx.method,
      route: ctx.route?.def.pattern ?? null,
      status: ctx.aborted ? null : (ctx.response?.status ?? null),
      replay_of: ctx.replayOf,
      aborted: ctx.aborted || undefined,
      refunded_rows: ctx.refundedRows,
      ms: Math.round((performance.now() - ctx.startedAt) * 10) / 10,
    },
    "request",
  );
}
