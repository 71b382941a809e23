/**
 * The two compute paths of training and generation: tfjs (`backend.ts`) or the native C++ core
 * (`native-core.ts`), and which one a thread uses by default.
 */
import { nativeCoreStatus } from "./native-core";

/** The compute path of training and generation (`synthd serve --compute`). */
export type ComputeKind = "tfjs" | "native";

/** `native` when the compute core loaded in this thread, else `tfjs`. */
export function defaultCompute(): ComputeKind {
  return nativeCoreStatus().available ? "native" : "tfjs";
}
