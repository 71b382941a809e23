/**
 * Step `readBody`: the request body, at most `maxBodyBytes` bytes (default 16 MiB); larger gives
 * 413 `request_too_large` (extensions of the contract).
 *
 * uWS delivers the body through `res.onData`, which must be attached synchronously in the route
 * callback (data arriving before it is attached is lost), so the adapter calls
 * {@link startBodyRead} at once and this step only awaits the result at its place in the chain.
 * Each chunk is copied: uWS reuses (neuters) the chunk's ArrayBuffer when the callback returns;
 * with `Content-Length`, straight into one buffer of the declared size.
 *
 * A body declared larger than the limit (`Content-Length`) is refused at once without buffering
 * it; a streamed body stops being buffered as soon as it crosses the limit. Either way, and for
 * any answer given before the body was read (401, 429, 404 ...), the adapter does not write the
 * answer while the client is still uploading: it calls {@link BodySource.drain}, which reads the
 * rest of the body and throws it away, and answers once the upload is complete, on a connection
 * that stays usable. Closing instead while the client still writes makes many clients (Node's
 * `fetch` among them) fail with EPIPE or ECONNRESET before they read the answer. Draining is
 * bounded: a body of more than {@link DRAIN_FACTOR} x `maxBodyBytes` bytes in total (declared or
 * sent) is not read to its end; the answer is then sent with `Connection: close` and the
 * connection closed.
 *
 * {@link framingError} checks the headers that frame the body (RFC 9112 §6): see there.
 */
import type { HttpResponse } from "uWebSockets.js";
import type { BodyResult, BodySource, Step } from "../context";
import { ApiError, ClientAbortedError } from "../errors";
import { refuseWhenLineFull } from "../bodyPool";

/** A body of more than this many times the body limit is not drained: the connection is closed. */
export const DRAIN_FACTOR = 4;

/** Why the headers that frame a body cannot be trusted: 400 `parameter_invalid` on `param`. */
export interface FramingError {
  param: "headers.content-length" | "headers.transfer-encoding";
  message: string;
}

/**
 * Checks the headers that frame a request's body (RFC 9112 §6.1-6.3), where a proxy in front of
 * the server and the server could disagree about where the body ends (request smuggling):
 * - `Content-Length` given more than once (even with equal values), or not plain decimal digits:
 *   param `headers.content-length`;
 * - `Transfer-Encoding` given more than once, other than exactly `chunked`, or together with
 *   `Content-Length`: param `headers.transfer-encoding`.
 * uWebSockets.js itself already refuses (with a bare 400 and a close, before any route runs)
 * `Content-Length` with `Transfer-Encoding`, malformed lengths and codings other than `chunked`;
 * it takes the first of repeated headers, which these checks refuse.
 * @param headers request headers, lower-case names, the first value of each.
 * @param repeated lower-case names of the headers that appeared more than once.
 * @returns the problem, or undefined when the framing is unambiguous (or there is no body).
 */
export function framingError(headers: Readonly<Record<string, string>>, repeated: ReadonlySet<string>): FramingError | undefined {
  const cl = headers["content-length"];
  const te = headers["transfer-encoding"];
  if (repeated.has("content-length")) {
    return { param: "headers.content-length", message: "Content-Length was sent more than once; a request must declare its length once." };
  }
  if (repeated.has("transfer-encoding")) {
    return { param: "headers.transfer-encoding", message: "Transfer-Encoding was sent more than once; send 'Transfer-Encoding: chunked' once, or Content-Length." };
  }
  if (cl !== undefined && te !== undefined) {
    return { param: "headers.transfer-encoding", message: "A request must not send both Transfer-Encoding and Content-Length." };
  }
  if (cl !== undefined && !/^\d+$/.test(cl)) {
    return { param: "headers.content-length", message: "Content-Length must be a decimal number of bytes." };
  }
  if (te !== undefined && te.trim().toLowerCase() !== "chunked") {
    return { param: "headers.transfer-encoding", message: "The only Transfer-Encoding accepted is 'chunked'." };
  }
  return undefined;
}

/**
 * Starts reading the body of the request whose headers are `headers` (lower-case names).
 * Must be called synchronously inside the uWS route callback. Requests with neither
 * `Content-Length` nor `Transfer-Encoding` have an empty body. The caller has refused requests
 * with a {@link framingError}.
 * @param maxBytes the body limit: a larger body settles `result` with `too_large` and is drained
 *   (see {@link BodySource.drain}) up to {@link DRAIN_FACTOR} x maxBytes bytes.
 */
export function startBodyRead(
  res: HttpResponse,
  headers: Readonly<Record<string, string>>,
  maxBytes: number,
): BodySource {
  const drainLimit = maxBytes * DRAIN_FACTOR;
  let settle!: (r: BodyResult) => void;
  const result = new Promise<BodyResult>((resolve) => (settle = resolve));
  let settled = false;
  let complete = false;
  let aborted = false;
  /** No more bytes will be read: aborted, or over the drain limit. */
  let givenUp = false;
  /** Chunks are counted and thrown away (over the limit, or the answer no longer needs them). */
  let discarding = false;
  let received = 0;
  const chunks: Buffer[] = [];
  /** The body's buffer when its length was declared (see below). */
  let whole: Buffer | undefined;
  let drained: Promise<void> | undefined;
  let release: (() => void) | undefined;
  const finish = (r: BodyResult): void => {
    if (settled) return;
    settled = true;
    settle(r);
  };
  const wake = (): void => {
    release?.();
    release = undefined;
  };
  const source: BodySource = {
    result,
    get complete() {
      return complete;
    },
    abort: () => {
      aborted = true;
      finish({ ok: false, reason: "aborted" });
      wake();
    },
    drain: () => {
      discarding = true;
      chunks.length = 0;
      whole = undefined;
      if (complete || aborted || givenUp) return Promise.resolve();
      drained ??= new Promise<void>((resolve) => (release = resolve));
      return drained;
    },
  };

  const cl = headers["content-length"];
  const te = headers["transfer-encoding"];
  const declared = cl !== undefined && /^\d+$/.test(cl) ? Number(cl) : undefined;
  if ((cl === undefined && te === undefined) || declared === 0) {
    complete = true;
    finish({ ok: true, bytes: Buffer.alloc(0) });
    return source;
  }
  if (declared !== undefined && declared > maxBytes) {
    discarding = true;
    finish({ ok: false, reason: "too_large" });
    if (declared > drainLimit) {
      givenUp = true; // not worth reading: answered at once, then the connection is closed
      return source;
    }
  }

  // A declared length (at most maxBytes here) gets its buffer at once, and each chunk is copied
  // to its place as it arrives: no copy of the whole body in one event turn at the end.
  if (declared !== undefined && !discarding) whole = Buffer.allocUnsafeSlow(declared);
  res.onData((chunk, isLast) => {
    if (givenUp) return;
    const at = received;
    received += chunk.byteLength;
    if (isLast) complete = true;
    if (!discarding) {
      if (received > maxBytes || (whole !== undefined && received > whole.length)) {
        discarding = true;
        chunks.length = 0;
        whole = undefined;
        finish({ ok: false, reason: "too_large" });
      } else if (whole !== undefined) {
        whole.set(new Uint8Array(chunk), at);
        if (isLast) finish({ ok: true, bytes: received === whole.length ? whole : whole.subarray(0, received) });
      } else {
        chunks.push(Buffer.from(chunk.slice(0)));
        if (isLast) finish({ ok: true, bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received) });
      }
    }
    if (complete) {
      wake();
    } else if (received > drainLimit) {
      givenUp = true;
      wake();
    }
  });
  return source;
}

/**
 * Awaits the body into `ctx.rawBody`, or throws 413 `request_too_large`. A large body whose
 * organization already has the most large bodies in line is refused first (429, `bodyPool.ts`).
 *
 * Then, for methods that can change something (all but GET and HEAD), waits for the end of the
 * event loop turn ({@link afterCurrentRead}) and throws {@link ClientAbortedError} when the
 * connection was closed meanwhile. uWebSockets.js does not pipeline behind a pending (asynchronous)
 * response: when it parses a second request on the connection while this one is unanswered, it
 * closes the connection, and nothing can answer either. The second request never runs; this wait
 * makes sure the first does not run either when the second came in the same read as the end of
 * its body (a client writing both at once), instead of executing with no one to answer.
 */
export const readBody: Step = async (ctx, next) => {
  refuseWhenLineFull(ctx);
  const r = await ctx.bodySource.result;
  if (!r.ok) {
    if (r.reason === "aborted") throw new ClientAbortedError();
    const max = ctx.services.maxBodyBytes;
    throw new ApiError(
      "request_too_large",
      `The request body exceeds the limit of ${max} bytes (${formatBytes(max)}).`,
    );
  }
  ctx.rawBody = r.bytes;
  if (ctx.method !== "GET" && ctx.method !== "HEAD") {
    await afterCurrentRead();
    if (ctx.aborted) throw new ClientAbortedError();
  }
  await next();
};

/**
 * Resolves in the check phase of the current event loop turn (`setImmediate`), after uWS has
 * parsed the rest of the bytes it read in this turn's poll phase (so after any close that a
 * request pipelined behind the current one caused).
 */
export function afterCurrentRead(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}


function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}
