/**
 * Bytes to text for the CSV reader: the strict UTF-8 check ({@link Utf8Check}) and the TextDecoder
 * of another `ReadOptions.encoding` label ({@link decoderFor}, {@link DecodeText}).
 */
import { Transform, type TransformCallback } from "node:stream";
import { isUtf8 } from "node:buffer";
import { TextDecoder } from "node:util";
import { DataError } from "../errors";

/** The TextDecoder of a `ReadOptions.encoding` label; undefined for UTF-8 ({@link Utf8Check}). */
export function decoderFor(encoding: string | undefined): TextDecoder | undefined {
  if (encoding === undefined) return undefined;
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding);
  } catch {
    throw new RangeError(`Unknown text encoding ${JSON.stringify(encoding)}; use a label such as utf-8, latin1, windows-1252 or utf-16le.`);
  }
  return decoder.encoding === "utf-8" ? undefined : decoder;
}

/** Decodes non-UTF-8 bytes chunk by chunk (`stream: true` keeps split characters whole). */
export class DecodeText extends Transform {
  private readonly decoder: TextDecoder;
  constructor(encoding: string) {
    super({ readableObjectMode: false, decodeStrings: true });
    this.decoder = new TextDecoder(encoding);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const text = this.decoder.decode(chunk, { stream: true });
    cb(null, text.length ? text : undefined);
  }

  override _flush(cb: TransformCallback): void {
    const rest = this.decoder.decode();
    cb(null, rest.length ? rest : undefined);
  }
}

/**
 * Validates UTF-8 chunk by chunk (a sequence split across chunks is carried over) and emits
 * strings; a leading BOM is dropped. The first invalid byte is a DataError naming its 0-based
 * offset in the file and its line.
 */
export class Utf8Check extends Transform {
  private offset = 0;
  private lines = 1;
  private carry: Buffer = Buffer.alloc(0);
  private first = true;
  constructor(private readonly name: string) {
    super({ readableObjectMode: false, decodeStrings: true });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let skip = 0;
    if (this.first) {
      if (buf.length < 3 && buf.every((b, i) => b === BOM[i])) {
        this.carry = Buffer.from(buf); // maybe the start of a BOM split across chunks
        return cb();
      }
      this.first = false;
      if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) skip = 3;
    }
    const cut = completePrefix(buf);
    const body = buf.subarray(skip, cut);
    if (!isUtf8(body)) return cb(this.fail(body, skip));
    this.carry = Buffer.from(buf.subarray(cut));
    this.advance(buf.subarray(0, cut));
    if (body.length === 0) return cb();
    cb(null, body.toString("utf8"));
  }

  override _flush(cb: TransformCallback): void {
    // Left-over bytes at the end of the file are a truncated multi-byte sequence.
    cb(this.carry.length ? this.fail(this.carry, 0) : null);
  }

  private advance(buf: Buffer): void {
    this.offset += buf.length;
    for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) this.lines++;
  }

  private fail(body: Buffer, skip: number): DataError {
    const bad = firstInvalidUtf8(body);
    const at = bad < 0 ? 0 : bad;
    let line = this.lines;
    for (let i = body.indexOf(10); i !== -1 && i < at; i = body.indexOf(10, i + 1)) line++;
    const offset = this.offset + skip + at;
    return new DataError(
      `${this.name} is not valid UTF-8: byte 0x${body[at]?.toString(16).padStart(2, "0") ?? "??"} at byte offset ${offset} (line ${line}); re-save the file as UTF-8, or give its encoding (e.g. latin1 or windows-1252).`,
      { file: this.name, line },
    );
  }
}

const BOM = [0xef, 0xbb, 0xbf];

/** Length of the longest prefix of `buf` that does not end inside a multi-byte sequence. */
function completePrefix(buf: Buffer): number {
  const n = buf.length;
  for (let back = 1; back <= Math.min(4, n); back++) {
    const b = buf[n - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/** Index of the first byte that starts an invalid UTF-8 sequence (RFC 3629), or -1. */
export function firstInvalidUtf8(buf: Uint8Array): number {
  let i = 0;
  const n = buf.length;
  while (i < n) {
    const b = buf[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = buf[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}
