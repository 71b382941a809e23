/** Step `requestId`: `req_` + 24 alphanumerics, on every response as `X-Request-Id`. */
import { newRequestId } from "../../store";
import type { Step } from "../context";

/** Sets `ctx.requestId` and the `X-Request-Id` response header. Never fails. */
export const requestId: Step = (ctx, next) => {
  ctx.requestId = newRequestId();
  ctx.responseHeaders["X-Request-Id"] = ctx.requestId;
  return next();
};
