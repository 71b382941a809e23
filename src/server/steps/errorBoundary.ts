/**
 * Step `errorBoundary`: whatever the rest of the chain throws becomes an error envelope, so
 * nothing a client sends escapes as an unhandled rejection; 500s are logged with their stack.
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
