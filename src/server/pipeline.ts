/**
 * The request pipeline, in order; each step is one file under `steps/`. Authentication runs
 * before routing and before the body is looked at, so every `/v1` request without a valid key
 * gets 401 whatever its path or body; the rate limits sit right around it. Idempotency wraps
 * validation and the handler, so exactly what they answer is stored and replayed. Large bodies
 * are checked off-thread within `parseJson`, their errors thrown at their own step, so answers
 * come in the same order for every body size.
 */
import { compose, type Step } from "./context";
import { authenticate } from "./steps/authenticate";
import { errorBoundary } from "./steps/errorBoundary";
import { handle } from "./steps/handle";
import { idempotency } from "./steps/idempotency";
import { parseJson } from "./steps/parseJson";
import { rateLimit } from "./steps/rateLimit";
import { readBody } from "./steps/readBody";
import { requestId } from "./steps/requestId";
import { route } from "./steps/route";
import { settle } from "./steps/settle";
import { validate } from "./steps/validate";

/** The steps every request goes through. */
export const PIPELINE: readonly Step[] = [
  requestId, //     X-Request-Id on every response
  errorBoundary, // anything thrown below -> error envelope (500 logged)
  authenticate, //  /v1: Bearer key -> ctx.auth, else 401 counted per client address (429 over its budget)
  rateLimit, //     per org: X-RateLimit-* on every response, 429 with Retry-After
  route, //         404 route_not_found / 405 method_not_allowed
  readBody, //      size cap -> 413 request_too_large
  parseJson, //     POST: Content-Type + JSON -> ctx.json (over 64 KiB: parsed and validated off-thread -> ctx.prepared)
  settle, //        a pending usage charge: settled before a 2xx is written, else refunded
  idempotency, //   POST + Idempotency-Key: replay, 409 while in flight, else run and store 2xx/4xx
  validate, //      typia body/query -> ctx.input, else 400 parameter_invalid
  handle, //        route handler -> ctx.response
];

/** The pipeline as one function; resolves once `ctx.response` is set (it never rejects). */
export const runPipeline = compose(PIPELINE);
