/**
 * The request pipeline, in order. Each step is one file under `steps/`; read them
 * top to bottom to follow a request from the socket to the handler.
 *
 * Authentication runs before routing and before the body is looked at: every `/v1` request
 * without a valid key gets 401, whatever its path or body (contract: "Authentication"). The body
 * itself starts streaming in as soon as the request arrives (see `steps/readBody.ts`); the
 * `readBody` step is where the pipeline waits for it.
 *
 * Limits come right around authentication (`steps/rateLimit.ts`): a request whose key is missing
 * or bad counts against its client address (429 instead of 401 once the address has too many
 * failed authentications; a valid key is never refused for its address), and every authenticated
 * request counts against its organization before anything else is done with it. Idempotency (`steps/idempotency.ts`)
 * wraps validation and the handler, so exactly what they answer is stored and replayed.
 *
 * Bodies over 64 KiB are parsed, validated and (Create Model) checked on the body worker thread
 * (`bodyPool.ts`) within `parseJson`; `validate` and the handler then throw what it found at
 * their own place, so the order of the answers is the same for every body size.
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
