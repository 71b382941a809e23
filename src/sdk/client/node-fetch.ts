/**
 * The part of `fetch` the client uses (`Synthd`'s `fetch` option), on `node:http` and
 * `node:https`, for short-lived processes such as the `synthd` CLI: Node's own `fetch` compiles its
 * bundled undici on the first call, while `node:http` is in Node's start-up snapshot.
 *
 * It sends the method, headers, a string body (with Content-Length) and the abort signal; it reads
 * the status, headers (lower-case, repeats joined with ", ") and the whole body. Node's global
 * agents keep connections alive without holding the process open. Unlike fetch it follows no
 * redirects (the API never redirects), decompresses nothing and adds no browser headers.
 * Failures reject as fetch's do for the client: Node's connection error (e.g. `connect
 * ECONNREFUSED 127.0.0.1:8080`), the signal's reason on abort, `unknown scheme` for non-HTTP(S).
 */
import type { IncomingMessage } from "node:http";

/** The response fields the client reads. */
export interface NodeResponse {
  status: number;
  headers: Record<string, string>;
  arrayBuffer(): Promise<ArrayBuffer>;
  /**
   * The whole body read into `into(size)` when Content-Length is known (memory a caller reuses,
   * `RequestSpec.bodyInto`); else as {@link arrayBuffer} reads it.
   * @returns a view of `size` bytes; rejects as `arrayBuffer`, or on a length mismatch.
   */
  bytes(into: (size: number) => Uint8Array): Promise<Uint8Array>;
}

/** What {@link nodeFetch} reads of fetch's `init`. */
interface NodeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** `res`'s headers as strings (`set-cookie`, the only list Node keeps, joined with ", "). */
function headersOf(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

/** The whole body of `res`; rejects when the stream fails or is cut short (an abort). */
async function bodyOf(res: IncomingMessage): Promise<ArrayBuffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const all = Buffer.concat(chunks);
  // A body of its own ArrayBuffer (Buffer.concat of large bodies) is handed over without a copy.
  if (all.byteOffset === 0 && all.byteLength === all.buffer.byteLength) return all.buffer as ArrayBuffer;
  return all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
}

/** {@link NodeResponse.bytes}. */
async function bytesOf(res: IncomingMessage, into: (size: number) => Uint8Array): Promise<Uint8Array> {
  const length = Number(res.headers["content-length"]);
  if (!(Number.isSafeInteger(length) && length >= 0)) return new Uint8Array(await bodyOf(res));
  const out = into(length).subarray(0, length);
  let at = 0;
  for await (const chunk of res) {
    const c = chunk as Buffer;
    if (at + c.length > length) throw new Error(`the body is longer than its Content-Length (${length})`);
    out.set(c, at);
    at += c.length;
  }
  if (at !== length) throw new Error(`the body ended after ${at} of its ${length} bytes`);
  return out;
}

/** `fetch(url, init)` on `node:http` / `node:https` for `SynthdOptions.fetch` (file header). */
export const nodeFetch = ((input: string | URL, init: NodeFetchInit = {}): Promise<NodeResponse> => {
  const url = typeof input === "string" ? new URL(input) : input;
  if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new Error("unknown scheme"));
  // node:https (and TLS) loads only for an https URL.
  const transport: typeof import("node:http") = url.protocol === "https:" ? require("node:https") : require("node:http");
  const headers: Record<string, string | number> = { ...init.headers };
  if (init.body !== undefined) headers["Content-Length"] = Buffer.byteLength(init.body);
  return new Promise<NodeResponse>((resolve, reject) => {
    const req = transport.request(url, { method: init.method ?? "GET", headers, signal: init.signal }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: headersOf(res), arrayBuffer: () => bodyOf(res), bytes: (into) => bytesOf(res, into) });
    });
    req.on("error", (e) => reject(init.signal?.aborted ? init.signal.reason : e));
    req.end(init.body);
  });
}) as unknown as typeof fetch;
