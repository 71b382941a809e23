/**
 * Step `requestId`: gives the request its id (`req_` + 24 characters from `[A-Za-z0-9]`)
 * and puts it on every response as `X-Request-Id`, equal to the body's `request_id`.
 */
import { newRequestId } from "../../store";
import type { Step } from "../context";

/** Sets `ctx.requestId` and the `X-Request-Id` response header. Never fails. */
export const requestId: Step = (ctx, next) => {
  ctx.requestId = newRequestId();
  ctx.responseHeaders["X-Request-Id"] = ctx.requestId;
  return next();
};
