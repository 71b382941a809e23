/**
 * The shared topology's internal wire (docs/deploy.md): names in Redis and the body of a
 * worker's generate answer. Front ends and workers of one deployment use the same `prefix`.
 *
 * Redis keys (all under `${prefix}:`):
 * - `bull:training:*`: BullMQ's queue of training jobs (job id = model id);
 * - `workers`: sorted set of live workers, member `${workerId} ${url}`, score = the Unix ms its
 *   registration expires ({@link WORKER_TTL_MS} after its last heartbeat), on Redis's clock
 *   (`TIME`, in the scripts below), so machines whose clocks disagree still agree on who is live;
 * - `stop` (pub/sub channel): a model id whose training must stop now (DELETE on any front end).
 *
 * A generate answer (`POST ${url}/internal/generate/${modelId}`, body: the contract's
 * GenerateRequest as JSON) is `application/octet-stream`: a little-endian uint32 header length,
 * the UTF-8 JSON header `{ model_id, num_rows, features }`, zero padding to a multiple of 4, then
 * the codes as little-endian int32, feature-major (feature f at `[f * n, (f + 1) * n)`). Errors
 * are JSON {@link WorkerErrorBody} with status 400 (input), 401 (unauthorized: the deployment's
 * token missing or wrong, ./internal-auth.ts), 404 / 409 (model), 503 (unavailable).
 */
import type { RawGeneration } from "../engine/engine";

/** Default Redis key prefix of a deployment. */
export const DEFAULT_PREFIX = "synthd";
/** A worker's registration lives this long after its last heartbeat (ms). */
export const WORKER_TTL_MS = 5_000;
/** Workers renew their registration this often (ms). */
export const WORKER_HEARTBEAT_MS = 1_000;
/** BullMQ queue name of training jobs. */
export const TRAINING_QUEUE = "training";

/** Redis key of the live-worker set. */
export function workersKey(prefix: string): string {
  return `${prefix}:workers`;
}

/** Redis pub/sub channel of stop requests. */
export function stopChannel(prefix: string): string {
  return `${prefix}:stop`;
}

/**
 * Lua: renews a registration. KEYS[1] the workers set; ARGV[1] TTL ms, ARGV[2] the member.
 * Also drops registrations that have expired.
 */
export const REGISTER_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 1)
return now`;

/** Lua: the members of the workers set (KEYS[1]) whose registration has not expired. */
export const LIVE_WORKERS_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')`;

/** BullMQ `prefix` option of a deployment's queues. */
export function bullPrefix(prefix: string): string {
  return `${prefix}:bull`;
}

/** A worker's error answer. `kind` says which engine error it was. */
export interface WorkerErrorBody {
  error: {
    kind: "input" | "model_not_found" | "model_not_ready" | "unavailable" | "unauthorized" | "internal";
    message: string;
    param?: string;
    /** The model's status, for `model_not_ready`. */
    status?: string;
    /** Seconds, for `unavailable`. */
    retry_after?: number;
  };
}


/** Encodes a generation as described in the module comment. */
export function encodeGeneration(g: RawGeneration): Buffer {
  const header = Buffer.from(JSON.stringify({ model_id: g.model_id, num_rows: g.num_rows, features: g.features }), "utf8");
  const headerEnd = 4 + header.length;
  const start = Math.ceil(headerEnd / 4) * 4;
  const n = g.num_rows;
  const out = Buffer.alloc(start + g.features.length * n * 4);
  out.writeUInt32LE(header.length, 0);
  header.copy(out, 4);
  const codes = new Int32Array(out.buffer, out.byteOffset + start, g.features.length * n);
  g.features.forEach((f, i) => codes.set(g.columns[f], i * n));
  return out;
}

/**
 * Decodes {@link encodeGeneration}'s bytes.
 * @throws Error for a body too short for its header or codes.
 */
export function decodeGeneration(body: Uint8Array): RawGeneration {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (buf.length < 4) throw new Error("generate answer too short");
  const len = buf.readUInt32LE(0);
  if (4 + len > buf.length) throw new Error("generate answer header truncated");
  const head = JSON.parse(buf.subarray(4, 4 + len).toString("utf8")) as Omit<RawGeneration, "columns">;
  const start = Math.ceil((4 + len) / 4) * 4;
  const n = head.num_rows;
  const need = start + head.features.length * n * 4;
  if (buf.length < need) throw new Error("generate answer codes truncated");
  // A copy aligned for Int32Array (the received buffer's offset need not be).
  const codes = new Int32Array(head.features.length * n);
  new Uint8Array(codes.buffer).set(buf.subarray(start, need));
  const columns: Record<string, Int32Array> = {};
  head.features.forEach((f, i) => (columns[f] = codes.subarray(i * n, (i + 1) * n)));
  return { ...head, columns };
}

/**
 * Rendezvous (highest random weight) order of `workers` for `modelId` (Thaler and Ravishankar,
 * "Using name-based mappings to increase hit rates", IEEE/ACM ToN 1998): every front end computes
 * the same order from the same set, so a model's requests go to one worker (its weights stay in
 * that worker's cache) and move only when that worker leaves; the rest are the retry order.
 */
export function rendezvousOrder<T extends { id: string }>(modelId: string, workers: readonly T[]): T[] {
  const score = (w: T): number => fnv1a(`${modelId}\u0000${w.id}`);
  return [...workers].sort((a, b) => score(b) - score(a) || (a.id < b.id ? -1 : 1));
}

/** 32-bit FNV-1a of a string's UTF-16 code units, mixed (murmur3 finaliser) so nearby names spread. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
