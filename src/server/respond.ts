/**
 * Writing answers on a uWS response for the HTTP front end (`app.ts`): the 400 of an untrusted body
 * framing ({@link refuseFraming}), the pipeline's response with delivery tracking for charged
 * responses ({@link writeResponse}), the refund of a charged response that was not delivered
 * ({@link refundUndelivered}) and the request's log line ({@link logRequest}).
 */
import { STATUS_CODES } from "node:http";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { HttpResponse } from "uWebSockets.js";
import { newRequestId, type ChargeRequest } from "../store";
import type { Ctx, Services } from "./context";
import { errorBody, paramInvalid } from "./errors";
import type { FramingError } from "./steps/readBody";

/**
 * Answers a request whose body framing cannot be trusted ({@link framingError}): 400
 * `parameter_invalid` naming the header, and the connection closed once it is written. Nothing
 * else about the request is looked at (no key, no route, no rate limit), as for the framing
 * errors uWS refuses itself.
 *
 * Called on the event loop turn after the request arrived, never from its route callback: uWS
 * goes on parsing the bytes of the same read after the callback returns, and an answer written
 * there only takes effect (and closes the connection) after that, so a request smuggled behind
 * this one would run. Left unanswered, the request makes uWS close the connection itself as soon
 * as it finds another request behind it (it refuses to pipeline behind a pending response): the
 * smuggled request never runs, and no answer is sent. Otherwise this answer is written here,
 * outside the parse, where ending with `closeConnection` closes the connection at once.
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
 * Writes `ctx.response` (plus `ctx.responseHeaders`) unless the client went away.
 *
 * A response that carries a settled usage charge (`ctx.deliveryCharge`, an un-keyed Generate) is
 * written with delivery tracking: `tryEnd` hands the body to the socket as far as the kernel takes
 * it without buffering, and `onWritable` hands over the rest as the client reads. It counts as
 * delivered once uWS has taken its last byte; when the connection closes before that (the client
 * went away, or stopped reading for uWS's 10 s send timeout), `onAborted` fires and it does not.
 * Other responses are ended at once (`end`: what the kernel does not take is buffered by uWS).
 * @param setAbortHook registers the function the route's `onAborted` calls while a tracked write
 *   is in progress.
 * @returns true when the whole response was handed over (untracked ones: once ended), false when
 *   nothing or only part of it was (the client went away first).
 */
export function writeResponse(res: HttpResponse, ctx: Ctx, setAbortHook: (hook: () => void) => void): Promise<boolean> {
  if (ctx.aborted) return Promise.resolve(false);
  const r = ctx.response!;
  // Unread body bytes (a body over the drain limit) would be parsed as the next request: close
  // the connection instead.
  const close = !ctx.bodySource.complete;
  const head = (): void => {
    res.writeStatus(`${r.status} ${STATUS_CODES[r.status] ?? ""}`.trimEnd());
    for (const [k, v] of Object.entries(ctx.responseHeaders)) res.writeHeader(k, v);
    for (const [k, v] of Object.entries(r.headers)) res.writeHeader(k, v);
  };
  if (ctx.deliveryCharge === undefined || r.body === undefined || close) {
    res.cork(() => {
      head();
      // No body (204): no Content-Length either (RFC 9110 §8.6). uWS writes a bogus length when
      // endWithoutBody gets `undefined` as the length, so call it without arguments; only when the
      // connection must be closed (unread body bytes) is `Content-Length: 0` sent with the close.
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
 * Gives back the usage charge of an un-keyed response that was not delivered (see
 * {@link writeResponse}), with a `refund` entry in the live ledger. A refund that cannot be written
 * (full disk) is logged at error level with the charge: the rows stay billed.
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
