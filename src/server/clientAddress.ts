/**
 * The client address of a request, for the per-address budget of failed authentications
 * (`steps/rateLimit.ts`). Behind a load balancer every request arrives from the balancer's own
 * address, so the address that matters is the one the balancer writes into a forwarding header.
 * That header is whatever the sender wants it to be unless it was written by a proxy we trust, so:
 *
 * - with no trusted proxies configured (the default), or when the TCP peer is not one of them, the
 *   client address is the peer's address and forwarding headers are ignored;
 * - when the peer is a trusted proxy, the forwarding header (`X-Forwarded-For` by default, or
 *   RFC 7239 `Forwarded` with its `for=` parameters) is read from the right: each proxy appends the
 *   address it received the request from, so the right-most entries were written by our proxies and
 *   the first entry from the right that is not itself a trusted proxy is the client as our
 *   outermost proxy saw it. Entries left of it are the client's to choose and are never used.
 *   If every entry is a trusted proxy, the left-most is used. If an entry that a trusted proxy
 *   should have written is not an address (`unknown`, an obfuscated identifier, garbage), the walk
 *   stops and the last trusted hop (the nearest address we can vouch for) is used. A missing header
 *   gives the peer itself.
 *
 * Several header lines of one field are one comma-separated list in order (RFC 9110 §5.3); the
 * server joins them before this module sees them. This is the method of Express's `proxy-addr`
 * and nginx's `real_ip_recursive on`; RFC 7239 §5.2 (the `for` parameter) and §7.4 (ordering:
 * a proxy appends); MDN "X-Forwarded-For: Selecting an IP address" (trusted proxy list, right-most).
 *
 * Addresses are compared and reported in one canonical text form ({@link canonicalAddress}):
 * uWS reports an IPv4 client of a dual-stack socket as
 * `0000:0000:0000:0000:0000:ffff:7f00:0001`, which is `127.0.0.1` here, so one client has one
 * budget however it connects. IP and CIDR matching is node's `net.BlockList`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { BlockList, isIP } from "node:net";

import type { ForwardedHeader } from "./forwarded-headers";
export { FORWARDED_HEADERS, type ForwardedHeader } from "./forwarded-headers";

/**
 * The canonical text of an IP address, or undefined when `text` is not one: IPv4 in dotted
 * decimal; IPv6 in the compressed lower-case form of RFC 5952 (via the WHATWG URL parser), without
 * a zone id; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) as its IPv4 address.
 * Surrounding whitespace is ignored; nothing else (no brackets, no port) is accepted.
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
 * The address of one hop as a forwarding header writes it, canonical ({@link canonicalAddress}),
 * or undefined when it is not an address: `192.0.2.1`, `192.0.2.1:8080`, `2001:db8::1`,
 * `[2001:db8::1]`, `[2001:db8::1]:8080` (RFC 7239 §6 `node`: an IPv6 address in brackets, an
 * optional port; X-Forwarded-For writers differ, so both forms are read).
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

/**
 * The hops of an `X-Forwarded-For` value, left (client end) to right (nearest proxy): each entry's
 * canonical address, or undefined for an entry that is not an address. Empty for a missing header.
 */
export function parseXForwardedFor(value: string | undefined): (string | undefined)[] {
  if (value === undefined || value.trim() === "") return [];
  return value.split(",").map(nodeAddress);
}

/**
 * Splits `s` at each `sep` that is not inside a quoted-string (RFC 9110 §5.6.4: `"` ... `"`, with
 * `\` escaping the next character).
 */
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
 * The hops of an RFC 7239 `Forwarded` value, left to right: for each forwarded-element (§4,
 * comma-separated), the canonical address of its `for` parameter (§5.2; token or quoted-string,
 * name case-insensitive), or undefined when the element has no `for`, or its node is `unknown`
 * or an obfuscated identifier (§6.2, §6.3). Empty for a missing header.
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
   * Parses entries, each an IP address or a CIDR range (`address/prefix-length`, RFC 4632 for
   * IPv4, RFC 4291 §2.3 for IPv6); an item may itself be a comma- or whitespace-separated list
   * (as `SYNTHD_TRUSTED_PROXIES` and a repeated `--trusted-proxy` give them). Empty items are
   * skipped. An IPv4-mapped IPv6 address counts as its IPv4 address.
   * @throws Error naming the first item that is neither an address nor a CIDR range (prefix length
   *   0-32 for IPv4, 0-128 for IPv6).
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
 * The client address of a request (see the module comment): the TCP peer's address unless the
 * peer is a trusted proxy, else the right-most address of `header` that is not a trusted proxy.
 *
 * @param peer the TCP peer's address as text (uWS's `getRemoteAddressAsText`, any IP form).
 * @param headers request headers with lower-case names; repeated lines of one field joined with `, `.
 * @returns a canonical address ({@link canonicalAddress}), or `peer` as given when it is not an IP
 *   address (a Unix socket).
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

/**
 * The header in which the HTTP/1.0 listener (`synthd serve --http10-port`, `http10.ts`) sends the
 * secret it shares with the main listener of its process. Never logged.
 */
export const RELAY_SECRET_HEADER = "x-synthd-http10-secret";

/** The header in which the HTTP/1.0 listener sends the address of the peer it relays for. */
export const RELAY_CLIENT_HEADER = "x-synthd-http10-client";

/** The SHA-256 of the HTTP/1.0 listener's secret, as {@link relayedPeer} compares it. */
export function relaySecretDigest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/**
 * The TCP peer of a request for {@link clientAddress}, seen through the process's own HTTP/1.0
 * listener (`http10.ts`): that listener forwards over loopback, so the main listener's peer is the
 * listener itself, and the client's address comes in {@link RELAY_CLIENT_HEADER}. It is believed
 * only when {@link RELAY_SECRET_HEADER} carries the listener's secret (`digest`, from
 * {@link relaySecretDigest}; compared as SHA-256 digests with `timingSafeEqual`, so neither the
 * length nor the bytes of the secret leak through timing) and is an IP address; otherwise, and
 * always when no HTTP/1.0 listener runs (`digest` undefined), `peer` is returned: another local
 * process cannot name the client address of its requests.
 *
 * Both headers are removed from `headers` in every case, so nothing after this (the pipeline, a
 * log line) sees the secret.
 * @param peer the TCP peer's address as text.
 * @param headers request headers with lower-case names; modified.
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
