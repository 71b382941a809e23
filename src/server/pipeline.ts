/**
 * The request pipeline (DESIGN §4), in order. Each step is one file under `steps/`; read them
 * top to bottom to follow a request from the socket to the handler.
 *
 * Authentication runs before routing and before the body is looked at: every `/v1` request
 * without a valid key gets 401, whatever its path or body (contract: "Authentication"). The body
 * itself starts streaming in as soon as the request arrives (see `steps/readBody.ts`); the
 * `readBody` step is where the pipeline waits for it.
 */
import { compose, type Step } from "./context";
import { authenticate } from "./steps/authenticate";
import { errorBoundary } from "./steps/errorBoundary";
import { handle } from "./steps/handle";
import { parseJson } from "./steps/parseJson";
import { readBody } from "./steps/readBody";
import { requestId } from "./steps/requestId";
import { route } from "./steps/route";
import { validate } from "./steps/validate";

/** The steps every request goes through. */
export const PIPELINE: readonly Step[] = [
  requestId, //     X-Request-Id on every response
  errorBoundary, // anything thrown below -> error envelope (500 logged)
  authenticate, //  /v1: Bearer key -> ctx.auth, else 401
  // ---- rateLimit goes here (rate-limit issue): per org from ctx.auth, per client address
  //      (ctx.remoteAddress) for unauthenticated requests; X-RateLimit-* via ctx.responseHeaders
  //      so error responses carry them too; 429 with Retry-After.
  route, //         404 route_not_found / 405 method_not_allowed
  readBody, //      size cap -> 413 request_too_large
  parseJson, //     POST: Content-Type + JSON -> ctx.json
  // ---- idempotency goes here (idempotency issue): POST with Idempotency-Key; wraps next(),
  //      stores ctx.response of 2xx/4xx (use setErrorResponse from errors.ts on a caught error),
  //      replays with Idempotent-Replayed: true, 409 idempotency_key_in_use while in flight.
  validate, //      typia body/query -> ctx.input, else 400 parameter_invalid
  handle, //        route handler -> ctx.response
];

/** The pipeline as one function; resolves once `ctx.response` is set (it never rejects). */
export const runPipeline = compose(PIPELINE);
