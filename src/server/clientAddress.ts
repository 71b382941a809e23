/**
 * The client address of a request, for the per-address budget of failed authentications. A
 * forwarding header is whatever the sender wants unless a trusted proxy wrote it, so: with no
 * trusted peer the client is the TCP peer; from a trusted peer the header (`X-Forwarded-For`, or
 * RFC 7239 `Forwarded` `for=`) is read from the right (each proxy appends) and the first hop that
 * is not a trusted proxy is the client. Entries left of it are the client's to invent, never
 * used. All hops trusted: the left-most; a hop that is not an address stops at the nearest
 * trusted hop; no header: the peer. Method of Express's `proxy-addr` and nginx's
 * `real_ip_recursive on` (RFC 7239 §5.2, §7.4; RFC 9110 §5.3 for repeated lines). Addresses are
 * compared canonical ({@link canonicalAddress}), so an IPv4 client of a dual-stack socket has one
 * budget however it connects.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { BlockList, isIP } from "node:net";

import type { ForwardedHeader } from "./forwarded-headers";
export { FORWARDED_HEADERS, type ForwardedHeader } from "./forwarded-headers";

/**
 * The canonical text of an IP address, or undefined when `text` is not one: IPv4 dotted decimal;
 * IPv6 as RFC 5952 without a zone id; IPv4-mapped IPv6 (RFC 4291 §2.5.5.2) as its IPv4 address.
 * Surrounding whitespace is ignored; no brackets or port.
 */
export function canonicalAddress(text: string): string | undefined {
  let s = text.trim();
  const zone = s.indexOf("%");
  if (zone >= 0 && s.includes(":")) s = s.slice(0, zone);
  const family = isIP(s);
  if (family === 4) return s;
  if (family !== 6) return undefined;
  const v6 = new URL(`http://[${s}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (mapped === null) return v6;
  const hi = parseInt(mapped[1], 16);
  const lo = parseInt(mapped[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * One hop's address, canonical, or undefined if not an address. With or without a port and, for
 * IPv6, brackets (RFC 7239 §6 `node`; X-Forwarded-For writers differ, so both forms are read).
 */
export function nodeAddress(text: string): string | undefined {
  const s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed !== null) return isIP(bracketed[1]) === 6 ? canonicalAddress(bracketed[1]) : undefined;
  const direct = canonicalAddress(s);
  if (direct !== undefined) return direct;
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(s);
  return v4port === null ? undefined : canonicalAddress(v4port[1]);
}

/** The hops of `X-Forwarded-For`, left to right: canonical address or undefined; [] if missing. */
export function parseXForwardedFor(value: string | undefined): (string | undefined)[] {
  if (value === undefined || value.trim() === "") return [];
  return value.split(",").map(nodeAddress);
}

/** Splits `s` at each `sep` not inside a quoted-string (RFC 9110 §5.6.4). */
function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quoted) {
      if (ch === "\\") i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === sep) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/**
 * The hops of an RFC 7239 `Forwarded` value, left to right: each element's `for` address (§5.2),
 * or undefined without one or for `unknown` or an obfuscated node (§6.2, §6.3); [] if missing.
 */
export function parseForwarded(value: string | undefined): (string | undefined)[] {
  if (value === undefined || value.trim() === "") return [];
  return splitOutsideQuotes(value, ",").map((element) => {
    let node: string | undefined;
    for (const pair of splitOutsideQuotes(element, ";")) {
      const eq = pair.indexOf("=");
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== "for") continue;
      let v = pair.slice(eq + 1).trim();
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, "$1");
      node = v;
      break;
    }
    return node === undefined ? undefined : nodeAddress(node);
  });
}

/**
 * The proxies whose forwarding headers are believed (`synthd serve --trusted-proxy`): IP addresses
 * and CIDR ranges, IPv4 and IPv6. Empty by default: no header is believed.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  /** The entries as given, canonical (`10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`). */
  readonly entries: readonly string[];

  private constructor(entries: string[]) {
    this.entries = entries;
  }

  /**
   * Parses IP addresses and CIDR ranges (RFC 4632, RFC 4291 §2.3); an item may be a comma- or
   * whitespace-separated list. IPv4-mapped IPv6 counts as IPv4.
   * @throws Error naming the first item that is neither an address nor a CIDR range.
   */
  static parse(items: string | readonly string[]): TrustedProxies {
    const all = (typeof items === "string" ? [items] : items).flatMap((i) => i.split(/[\s,]+/)).filter((i) => i !== "");
    const entries: string[] = [];
    const parsed: { address: string; prefix?: number }[] = [];
    for (const item of all) {
      const slash = item.indexOf("/");
      const given = slash < 0 ? item : item.slice(0, slash);
      const address = canonicalAddress(given);
      const prefixText = slash < 0 ? undefined : item.slice(slash + 1);
      const max = isIP(given) === 4 ? 32 : 128;
      let prefix = prefixText === undefined ? undefined : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
      if (address === undefined || (prefix !== undefined && !(prefix <= max))) {
        throw new Error(`--trusted-proxy: ${JSON.stringify(item)} is neither an IP address nor a CIDR range (e.g. 10.0.0.0/8, 2001:db8::/32).`);
      }
      // `::ffff:10.0.0.0/104` names IPv4 addresses: canonicalAddress made it 10.0.0.0; its prefix loses the 96 mapped bits.
      if (prefix !== undefined && isIP(address) === 4 && isIP(given) === 6) {
        if (prefix < 96) throw new Error(`--trusted-proxy: ${JSON.stringify(item)}: an IPv4-mapped range needs a prefix length of at least 96.`);
        prefix -= 96;
      }
      parsed.push({ address, prefix });
      entries.push(prefix === undefined ? address : `${address}/${prefix}`);
    }
    const t = new TrustedProxies(entries);
    for (const { address, prefix } of parsed) {
      const family = isIP(address) === 4 ? "ipv4" : "ipv6";
      if (prefix === undefined) t.list.addAddress(address, family);
      else t.list.addSubnet(address, prefix, family);
    }
    return t;
  }

  /** No proxy is trusted (forwarding headers are ignored). */
  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** Whether `address` (canonical, {@link canonicalAddress}) is a trusted proxy. */
  has(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 4 ? "ipv4" : "ipv6");
  }
}

/**
 * The client address of a request (see the module comment), canonical, or `peer` as given when it
 * is not an IP address (a Unix socket). `headers`: lower-case names, repeated lines joined.
 */
export function clientAddress(
  peer: string,
  headers: Readonly<Record<string, string>>,
  trusted: TrustedProxies,
  header: ForwardedHeader = "x-forwarded-for",
): string {
  const p = canonicalAddress(peer) ?? peer;
  if (trusted.empty || !trusted.has(p)) return p;
  const hops = header === "forwarded" ? parseForwarded(headers["forwarded"]) : parseXForwardedFor(headers["x-forwarded-for"]);
  let nearest = p;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i];
    if (hop === undefined) return nearest;
    if (!trusted.has(hop)) return hop;
    nearest = hop;
  }
  return nearest;
}

/** The header carrying the HTTP/1.0 listener's secret to the main listener. Never logged. */
export const RELAY_SECRET_HEADER = "x-synthd-http10-secret";

/** The header in which the HTTP/1.0 listener sends the address of the peer it relays for. */
export const RELAY_CLIENT_HEADER = "x-synthd-http10-client";

/** The SHA-256 of the HTTP/1.0 listener's secret, as {@link relayedPeer} compares it. */
export function relaySecretDigest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/**
 * The TCP peer for {@link clientAddress}, seen through this process's HTTP/1.0 listener: the
 * address in {@link RELAY_CLIENT_HEADER} is believed only when {@link RELAY_SECRET_HEADER} carries
 * the secret (`digest`; SHA-256 digests compared with `timingSafeEqual`, so neither length nor
 * bytes leak through timing), so another local process cannot name its client address. Otherwise,
 * and when no listener runs (`digest` undefined), `peer`. Both headers are always removed from
 * `headers` (modified), so nothing later, a log line included, sees the secret.
 */
export function relayedPeer(peer: string, headers: Record<string, string>, digest: Buffer | undefined): string {
  const secret = headers[RELAY_SECRET_HEADER];
  const client = headers[RELAY_CLIENT_HEADER];
  delete headers[RELAY_SECRET_HEADER];
  delete headers[RELAY_CLIENT_HEADER];
  if (digest === undefined || secret === undefined || client === undefined) return peer;
  if (!timingSafeEqual(relaySecretDigest(secret), digest)) return peer;
  return canonicalAddress(client) ?? peer;
}
