/**
 * Step `errorBoundary`: whatever the rest of the chain throws becomes an error envelope
 * (contract: "Errors"), so nothing a client sends can escape as an unhandled rejection.
 * Unexpected errors (mapped to 500 `internal_error`) are logged with the request id and stack.
 */
import type { Step } from "../context";
import { isUnexpected, setErrorResponse } from "../errors";

/** Catches errors of the following steps and sets `ctx.response` to their envelope. */
export const errorBoundary: Step = async (ctx, next) => {
  try {
    await next();
    if (ctx.response === undefined) throw new Error("pipeline ended without a response");
  } catch (err) {
    if (isUnexpected(err) && !ctx.aborted) {
      ctx.services.logger.error(
        { err, req_id: ctx.requestId, method: ctx.method, route: ctx.route?.def.pattern },
        "unexpected error while handling request",
      );
    }
    setErrorResponse(ctx, err);
  }
};
