/**
 * The forwarding headers a trusted proxy may write (`./clientAddress`), in a module of their own so
 * that the command line offers them as `--forwarded-header`'s choices without loading the client
 * address code (`src/cli/main.ts`).
 */

/** Which forwarding header the trusted proxies write: `X-Forwarded-For` (de facto) or RFC 7239 `Forwarded`. */
export type ForwardedHeader = "x-forwarded-for" | "forwarded";

/** The header names {@link ForwardedHeader} accepts, as `--forwarded-header` takes them. */
export const FORWARDED_HEADERS: readonly ForwardedHeader[] = ["x-forwarded-for", "forwarded"];
