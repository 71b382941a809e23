/**
 * Step `readBody`: the request body, at most `maxBodyBytes` bytes; larger gives 413
 * `request_too_large`.
 *
 * uWS's `res.onData` must be attached synchronously in the route callback (earlier data is lost),
 * so the adapter calls {@link startBodyRead} at once and this step awaits the result. Each chunk
 * is copied: uWS neuters its ArrayBuffer when the callback returns.
 *
 * A body over the limit (declared or streamed) stops being buffered. For any answer given before
 * the body was read, the adapter first drains the rest ({@link BodySource.drain}): closing while
 * the client still writes makes many clients (Node's `fetch`) fail with EPIPE or ECONNRESET
 * before they read the answer. Beyond {@link DRAIN_FACTOR} x the limit the connection is closed.
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
 * The problem with the headers that frame a body (RFC 9112 §6.1-6.3), where a proxy and the
 * server could disagree on where it ends (request smuggling), or undefined: `Content-Length`
 * repeated or not digits; `Transfer-Encoding` repeated, not `chunked`, or with `Content-Length`.
 * `headers`: first value per lower-case name; `repeated`: names seen more than once.
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

/** Starts reading the body, synchronously in the uWS route callback; over `maxBytes`: too large. */
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

  // A declared length gets its buffer at once: no copy of the whole body in one turn at the end.
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
 * Awaits the body into `ctx.rawBody`, or throws 413 `request_too_large` (or 429 first when the
 * org's line of large bodies is full, `bodyPool.ts`).
 *
 * For methods that can change something, then waits out the event loop turn and throws
 * {@link ClientAbortedError} if the connection closed: uWS closes a connection that pipelines a
 * second request behind a pending response, and a request whose body ended in that same read
 * must not execute with no one to answer.
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

/** Resolves in this turn's check phase, after uWS parsed the rest of what it read (and closed). */
export function afterCurrentRead(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}


function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}
