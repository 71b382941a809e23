/** The two compute paths, tfjs (`backend.ts`) or the native core, and a thread's default. */
import { nativeCoreStatus } from "./native-core";

/** The compute path of training and generation (`synthd serve --compute`). */
export type ComputeKind = "tfjs" | "native";

/** `native` when the compute core loaded in this thread, else `tfjs`. */
export function defaultCompute(): ComputeKind {
  return nativeCoreStatus().available ? "native" : "tfjs";
}
