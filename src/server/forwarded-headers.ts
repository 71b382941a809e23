/** The forwarding headers, apart so the CLI can list them without loading `clientAddress.ts`. */

/** Which forwarding header the trusted proxies write: `X-Forwarded-For` (de facto) or RFC 7239 `Forwarded`. */
export type ForwardedHeader = "x-forwarded-for" | "forwarded";

/** The header names {@link ForwardedHeader} accepts, as `--forwarded-header` takes them. */
export const FORWARDED_HEADERS: readonly ForwardedHeader[] = ["x-forwarded-for", "forwarded"];
