/**
 * The HTTP/1.0 listener (`synthd serve --http10-port PORT`, run in a child process by
 * `http10Process.ts`): a Node `http` server for clients that cannot speak HTTP/1.1, which uWS
 * answers with an HTML 505. Only a transport: each request is forwarded to the main listener and
 * answered there, bodies streamed both ways. On the way it drops hop-by-hop headers (RFC 9110
 * §7.6.1), passes the client's address vouched for by a secret (`relayedPeer`), answers what
 * Node's parser refuses in the contract's envelope, and bounds connections ({@link Http10Limits}).
 * docs/operations.md "HTTP edges" lists what each port answers.
 */
import { readFileSync } from "node:fs";
import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { pipeline, Transform, type TransformCallback } from "node:stream";
import type { Logger } from "pino";
import { newRequestId } from "../store";
import { RELAY_CLIENT_HEADER, RELAY_SECRET_HEADER } from "./clientAddress";
import { ApiError, errorBody, paramInvalid } from "./errors";
import { DRAIN_FACTOR, framingError } from "./steps/readBody";

/** Options of {@link startHttp10Listener}. */
export interface Http10ListenerOptions {
  /** Address to bind (the main listener's `--host`). */
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** The main listener: where requests are forwarded (an address of this host). */
  upstream: { host: string; port: number };
  /** The secret the main listener checks (`relayedPeer`); sent on every forwarded request, never logged. */
  secret: string;
  /** Base of `error.doc_url` in the envelopes this listener writes itself. */
  docsUrl: string;
  logger: Logger;
  /** The main listener's body limit in bytes; not forwarded past {@link DRAIN_FACTOR} times it. */
  maxBodyBytes: number;
  /** Timeouts and the connection cap; each field defaults to {@link defaultHttp10Limits}'s. */
  limits?: Partial<Http10Limits>;
}

/** Timeouts (ms) and the connection cap of the listener (Node's `http.Server` settings). */
export interface Http10Limits {
  /**
   * Connections open at once. One more closes the oldest connection with no request in progress,
   * or, when all have one, the new one (so an idle flood cannot lock clients out; see
   * docs/operations.md "HTTP edges"). Each uses two descriptors here and one in the server.
   */
  maxConnections: number;
  /** The header section must arrive within this (`server.headersTimeout`). */
  headersTimeoutMs: number;
  /** The whole request, body included, within this (`server.requestTimeout`). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (`server.keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
  /** Idle time (no reads or writes) before closing, except while a complete request is served. */
  idleTimeoutMs: number;
  /** How often the header and request timeouts are checked (`connectionsCheckingInterval`). */
  checkIntervalMs: number;
}

/** Connections waiting to be accepted (`listen`'s backlog). */
const LISTEN_BACKLOG = 4096;
/** Descriptors assumed when the process's limit cannot be read (`ulimit -n`'s usual default). */
const FALLBACK_FD_LIMIT = 1024;
/** Most connections the listener takes, whatever the descriptor limit. */
const MAX_CONNECTIONS_CEILING = 16_384;

/** The process's soft RLIMIT_NOFILE from `/proc/self/limits`, else {@link FALLBACK_FD_LIMIT}. */
export function openFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (m !== null) return m[1] === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(m[1]);
  } catch {
    // not Linux: the fallback
  }
  return FALLBACK_FD_LIMIT;
}

/**
 * The defaults: header and idle 10 s (as uWS on the main listener), keep-alive 5 s and request
 * 300 s (Node's), checked every second; connections a twelfth of the descriptor limit, between 64
 * and {@link MAX_CONNECTIONS_CEILING}, so forwarded requests hold at most that share.
 */
export function defaultHttp10Limits(fdLimit = openFileLimit()): Http10Limits {
  return {
    maxConnections: Math.max(64, Math.min(MAX_CONNECTIONS_CEILING, Math.floor(fdLimit / 12))),
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 300_000,
    keepAliveTimeoutMs: 5_000,
    idleTimeoutMs: 10_000,
    checkIntervalMs: 1_000,
  };
}

/** A listening HTTP/1.0 listener. */
export interface Http10Listener {
  /** `http://HOST:PORT` (IPv6 hosts in brackets). */
  url: string;
  port: number;
  /** Stops accepting, lets requests in flight finish for up to `timeoutMs`. Idempotent. */
  close(timeoutMs: number): Promise<void>;
}

/** Seconds a client is asked to wait when the main listener cannot be reached. */
const UPSTREAM_RETRY_AFTER_S = 1;
/** Idle forwarding connections are dropped below uWS's 10 s, so none is reused as it closes. */
const AGENT_IDLE_MS = 5_000;

/** Reading and dropping after a refusal before closing, so no reset precedes the answer. */
const LINGER_MS = 2_000;

/** The `param` of a parser error (llhttp's code): the header section, the framing headers, or none (the request line). */
function parserErrorParam(code: string | undefined): string | undefined {
  switch (code) {
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
    case "HPE_INVALID_CONTENT_LENGTH":
      return "headers.content-length";
    case "HPE_INVALID_TRANSFER_ENCODING":
    case "HPE_INVALID_CHUNK_SIZE":
      return "headers.transfer-encoding";
    case "HPE_INVALID_HEADER_TOKEN":
    case "HPE_CR_EXPECTED":
    case "HPE_LF_EXPECTED":
      return "headers";
    default:
      return undefined;
  }
}

/** Hop-by-hop headers (RFC 9110 §7.6.1, plus the obsolete ones proxies still see): never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "http2-settings",
]);

/** The headers to forward: no hop-by-hop, none `Connection` names, no relay's (`stripRelay`). */
function endToEnd(raw: readonly string[], stripRelay: boolean): Record<string, string | string[]> {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() !== "connection") continue;
    for (const t of raw[i + 1].split(",")) if (t.trim() !== "") named.add(t.trim().toLowerCase());
  }
  const out: Record<string, string | string[]> = {};
  const nameOf = new Map<string, string>();
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    if (stripRelay && (lower === RELAY_SECRET_HEADER || lower === RELAY_CLIENT_HEADER)) continue;
    const name = nameOf.get(lower);
    if (name === undefined) {
      nameOf.set(lower, raw[i]);
      out[raw[i]] = raw[i + 1];
    } else {
      const prev = out[name];
      out[name] = Array.isArray(prev) ? [...prev, raw[i + 1]] : [prev, raw[i + 1]];
    }
  }
  return out;
}

/** The host to reach a listener bound to `host` at: loopback for the wildcard addresses. */
export function upstreamHost(host: string): string {
  const h = host.replace(/^\[(.*)\]$/, "$1");
  if (h === "" || h === "0.0.0.0") return "127.0.0.1";
  if (h === "::" || h === "::0") return "::1";
  return h;
}

/** The status line, headers and JSON envelope of an error this listener answers itself. */
function errorResponse(status: number, err: ApiError, docsUrl: string): { requestId: string; headers: Record<string, string>; body: string } {
  const requestId = newRequestId();
  const body = JSON.stringify(errorBody(err, requestId, docsUrl));
  return {
    requestId,
    body,
    headers: { "Content-Type": "application/json", "X-Request-Id": requestId, ...err.headers },
  };
}

/** Passes a body on until more than `limit` bytes went through, then drops the rest (-1: none). */
function bodyLimiter(limit: number): Transform {
  let passed = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
      if (passed > limit) return done();
      passed += chunk.length;
      done(null, chunk);
    },
  });
}

/** Starts the listener on `opts.host`:`opts.port`. @throws Error when it cannot bind. */
export async function startHttp10Listener(opts: Http10ListenerOptions): Promise<Http10Listener> {
  const { logger, docsUrl } = opts;
  const limits: Http10Limits = { ...defaultHttp10Limits(), ...opts.limits };
  const drainLimit = opts.maxBodyBytes * DRAIN_FACTOR;
  // One forwarding connection per client connection at most.
  const agent = new http.Agent({ keepAlive: true, timeout: AGENT_IDLE_MS, maxSockets: limits.maxConnections });
  const server = http.createServer({
    requireHostHeader: false,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
  });
  server.timeout = limits.idleTimeoutMs;
  /** Open connections, oldest first. */
  const connections = new Set<Socket>();
  const inProgress = (s: Socket): boolean => Boolean((s as Socket & { _httpMessage?: unknown })._httpMessage);
  server.on("timeout", (socket: Socket) => {
    // Spared while the main listener works on a complete request; its first write re-arms it.
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (pending && !pending.headersSent && pending.req.complete) return;
    socket.destroy();
  });
  let evicted = 0;
  let dropped = 0;
  let capLogged = 0;
  server.on("connection", (socket: Socket) => {
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
    if (connections.size <= limits.maxConnections) return;
    let victim = socket;
    for (const s of connections) {
      if (s === socket) break;
      if (!inProgress(s)) {
        victim = s;
        break;
      }
    }
    if (victim === socket) dropped++;
    else evicted++;
    connections.delete(victim);
    victim.destroy();
    if (Date.now() - capLogged < 10_000) return;
    capLogged = Date.now();
    logger.warn({ listener: "http10", max_connections: limits.maxConnections, evicted, dropped }, "HTTP/1.0 listener: connection cap reached");
  });
  const active = new Set<ServerResponse>();
  let closing = false;
  let onDrained: (() => void) | undefined;

  /** Answers `res` with an error envelope (the request was not forwarded, or forwarding failed before any answer). */
  const answerError = (req: IncomingMessage, res: ServerResponse, status: number, err: ApiError, reason: string): void => {
    const e = errorResponse(status, err, docsUrl);
    // The client may still be sending a body nobody reads: close the connection after this answer.
    if (!req.complete) res.shouldKeepAlive = false;
    res.writeHead(status, STATUS_CODES[status], { ...e.headers, "Content-Length": String(Buffer.byteLength(e.body)) });
    res.end(e.body);
    logger.info({ req_id: e.requestId, method: req.method, route: null, status, listener: "http10", reason }, "request");
  };

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    active.add(res);
    res.on("close", () => {
      active.delete(res);
      if (closing && active.size === 0) onDrained?.();
    });
    if (closing) res.shouldKeepAlive = false;
    if (req.httpVersion !== "1.0" && req.headers.host === undefined) {
      answerError(req, res, 400, paramInvalid("headers.host", "An HTTP/1.1 request must send a Host header (RFC 9112 §3.2)."), "no_host");
      req.resume();
      return;
    }
    // Ambiguous framing Node's parser lets through: the main listener's answer, nothing forwarded.
    const first: Record<string, string> = Object.create(null) as Record<string, string>;
    const repeated = new Set<string>();
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i].toLowerCase();
      if (Object.hasOwn(first, k)) repeated.add(k);
      else first[k] = req.rawHeaders[i + 1];
    }
    const framing = framingError(first, repeated);
    if (framing !== undefined) {
      answerError(req, res, 400, paramInvalid(framing.param, framing.message), "framing");
      res.shouldKeepAlive = false;
      req.resume();
      return;
    }
    // Absolute-form, authority-form and `*` (RFC 9112 §3.2.2-3.2.4): uWS would answer an HTML 505.
    if (req.url === undefined || !req.url.startsWith("/")) {
      answerError(req, res, 400, new ApiError("parameter_invalid", "The request target must be a path beginning with '/' (origin-form, RFC 9112 §3.2.1)."), "bad_target");
      res.shouldKeepAlive = false;
      req.resume();
      return;
    }
    const headers: Record<string, string | string[]> = endToEnd(req.rawHeaders, true);
    headers[RELAY_SECRET_HEADER] = opts.secret;
    headers[RELAY_CLIENT_HEADER] = req.socket.remoteAddress ?? "";
    let up: http.ClientRequest;
    try {
      up = http.request({ host: opts.upstream.host, port: opts.upstream.port, method: req.method, path: req.url, headers, agent });
    } catch {
      // A path Node's client refuses (its check is stricter than its parser's).
      answerError(req, res, 400, new ApiError("parameter_invalid", "The request target is not a valid path."), "bad_target");
      req.resume();
      return;
    }
    let answered = false;
    // Not written past where the main listener stops reading, so no write fails before its answer.
    const declared = Number(req.headers["content-length"] ?? 0);
    const limiter = bodyLimiter(declared > drainLimit ? -1 : drainLimit);
    if (declared > drainLimit) up.flushHeaders();
    up.on("response", (upRes: IncomingMessage) => {
      answered = true;
      // Answered before the whole body was sent: the rest is not read, so close after it.
      if (!req.complete) res.shouldKeepAlive = false;
      const status = upRes.statusCode ?? 502;
      if ((status === 505 || status === 400) && upRes.headers["x-request-id"] === undefined) {
        // uWS's own HTML refusal of something Node's parser let through: the contract's envelope.
        upRes.resume();
        answerError(req, res, 400, new ApiError("parameter_invalid", "The request is not valid HTTP/1.1 as the server reads it; nothing of it was run."), "main_refused");
        return;
      }
      res.writeHead(status, upRes.statusMessage || STATUS_CODES[status], endToEnd(upRes.rawHeaders, false));
      // The main listener's body, as the client reads it; a failure either side ends both.
      pipeline(upRes, res, () => undefined);
    });
    up.on("error", (err: NodeJS.ErrnoException) => {
      req.unpipe(limiter);
      req.resume();
      // After answering, the main listener may close on an unread body: the answer's stream tells.
      if (answered) return;
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      if (err.code !== "ECONNREFUSED" && !req.complete) {
        // A body that stopped arriving: no answer, as on the main port (a 503 invites retries).
        logger.info({ method: req.method, route: null, listener: "http10", reason: "body_incomplete" }, "HTTP/1.0 listener: request body incomplete, connection closed");
        res.destroy();
        return;
      }
      logger.warn({ err: { code: err.code, message: err.message }, listener: "http10" }, "HTTP/1.0 listener: main listener unreachable");
      answerError(
        req,
        res,
        503,
        new ApiError("training_service_unavailable", `The server is not accepting requests; retry after ${UPSTREAM_RETRY_AFTER_S} second.`, undefined, {
          "Retry-After": String(UPSTREAM_RETRY_AFTER_S),
        }),
        "upstream_unreachable",
      );
    });
    // The client went away: so does the forwarded request (an un-keyed Generate is then refunded).
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    // `pipe`, not `pipeline`: an early answer must not destroy the client's connection with it.
    req.pipe(limiter).pipe(up);
  });

  /** Connections answered after a parser error: the parser reports every later read as another error. */
  const refused = new WeakSet<Socket>();
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (refused.has(socket)) return;
    const pending = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
    if (err.code === "ECONNRESET" || !socket.writable || pending) {
      socket.destroy();
      return;
    }
    let status = 400;
    let api: ApiError;
    if (err.code === "HPE_HEADER_OVERFLOW") {
      status = 431;
      api = new ApiError("request_too_large", "The request's header section is larger than 16 KiB.", "headers");
    } else if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      // Header or request timeout: closed after the linger whatever a trickling client still sends.
      refused.add(socket);
      socket.end("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      socket.setTimeout(0);
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
      logger.info({ method: null, route: null, status: 408, listener: "http10", reason: err.code }, "request");
      return;
    } else {
      const reason = (err as { reason?: string }).reason ?? err.message;
      api = new ApiError("parameter_invalid", `The request is not valid HTTP/1.x (${reason}); nothing of it was read.`, parserErrorParam(err.code));
    }
    const e = errorResponse(status, api, docsUrl);
    const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, ...Object.entries(e.headers).map(([k, v]) => `${k}: ${v}`)];
    head.push(`Content-Length: ${Buffer.byteLength(e.body)}`, "Connection: close");
    refused.add(socket);
    socket.end(`${head.join("\r\n")}\r\n\r\n${e.body}`);
    socket.setTimeout(0);
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
    logger.info({ req_id: e.requestId, method: null, route: null, status, listener: "http10", reason: err.code }, "request");
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(new Error(`cannot listen on ${opts.host}:${opts.port} for HTTP/1.0 (${err.message})`));
    server.once("error", onError);
    // A long accept queue (capped by somaxconn): a dropped SYN waits seconds for a retransmission.
    server.listen({ port: opts.port, host: opts.host, backlog: LISTEN_BACKLOG }, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : opts.port;
  const url = `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${port}`;

  let closed: Promise<void> | undefined;
  const close = (timeoutMs: number): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      server.close();
      server.closeIdleConnections();
      // Connections whose answer has not started close after it.
      for (const res of active) if (!res.headersSent) res.shouldKeepAlive = false;
      if (active.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          onDrained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      server.closeAllConnections();
      agent.destroy();
    })();
    return closed;
  };
  return { url, port, close };
}
