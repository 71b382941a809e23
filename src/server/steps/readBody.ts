/**
 * Step `readBody`: the request body, at most `maxBodyBytes` bytes (default 16 MiB); larger gives
 * 413 `request_too_large` (DESIGN §3 extension).
 *
 * uWS delivers the body through `res.onData`, which must be attached synchronously in the route
 * callback (data arriving before it is attached is lost), so the adapter calls
 * {@link startBodyRead} at once and this step only awaits the result at its place in the chain.
 * Each chunk is copied: uWS reuses (neuters) the chunk's ArrayBuffer when the callback returns.
 * A body declared larger than the limit (`Content-Length`) is refused without reading it; a
 * streamed body stops being buffered as soon as it crosses the limit. In both cases the
 * connection is closed after the response, since the rest of the body was not consumed.
 */
import type { HttpResponse } from "uWebSockets.js";
import type { Step } from "../context";
import { ApiError } from "../errors";

/** Outcome of reading a body. */
export type BodyResult =
  | { ok: true; bytes: Buffer }
  | { ok: false; reason: "too_large" | "aborted" };

/** A body being read; `complete` turns true once the whole body was consumed. */
export interface BodySource {
  readonly result: Promise<BodyResult>;
  /** False while (or when) unread body bytes remain on the connection. */
  readonly complete: boolean;
  /** Called from `onAborted`: settles `result` with `aborted`. */
  abort(): void;
}

/**
 * Starts reading the body of the request whose headers are `headers` (lower-case names).
 * Must be called synchronously inside the uWS route callback. Requests with neither
 * `Content-Length` nor `Transfer-Encoding` have an empty body.
 */
export function startBodyRead(
  res: HttpResponse,
  headers: Readonly<Record<string, string>>,
  maxBytes: number,
): BodySource {
  let settle!: (r: BodyResult) => void;
  const result = new Promise<BodyResult>((resolve) => (settle = resolve));
  let settled = false;
  let complete = false;
  const finish = (r: BodyResult): void => {
    if (settled) return;
    settled = true;
    settle(r);
  };
  const source: BodySource = {
    result,
    get complete() {
      return complete;
    },
    abort: () => finish({ ok: false, reason: "aborted" }),
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
    finish({ ok: false, reason: "too_large" });
    return source;
  }

  const chunks: Buffer[] = [];
  let total = 0;
  res.onData((chunk, isLast) => {
    if (settled) {
      if (isLast) complete = true;
      return;
    }
    total += chunk.byteLength;
    if (total > maxBytes) {
      chunks.length = 0;
      finish({ ok: false, reason: "too_large" });
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      complete = true;
      finish({ ok: true, bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total) });
    }
  });
  return source;
}

/** Awaits the body into `ctx.rawBody`, or throws 413 `request_too_large`. */
export const readBody: Step = async (ctx, next) => {
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
  await next();
};

/** The client closed the connection before its body arrived; nothing will be written. */
export class ClientAbortedError extends Error {
  constructor() {
    super("client aborted the request");
    this.name = "ClientAbortedError";
  }
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}
