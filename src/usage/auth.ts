import type { Environment } from "../store";

/** The caller of a request, as its API key says: its organization and environment. */
export interface Auth {
  org: string;
  env: Environment;
  /** First 12 characters of the key (`svc_test_xxx`), safe to log. */
  keyPrefix: string;
}
