/** typia tags and bounds of the numbers in request types. */
import type { tags } from "typia";

/**
 * typia tag: a finite number. `JSON.parse` turns `1e400` into `Infinity`; every request number
 * without a tighter bound carries this tag, so validators refuse it (400 `parameter_invalid`).
 * (typia's own `Type<"double">` checks nothing at run time.)
 */
export type Finite = tags.TagBase<{
  target: "number";
  kind: "finite";
  value: undefined;
  validate: "Number.isFinite($input)";
  exclusive: true;
  schema: undefined;
}>;

/**
 * Largest accepted `config.privacy_noise` (the tag on {@link ModelConfigInput} spells it): 1e6
 * standard deviations of the unit-variance latents. The noise is added in float32: near
 * {@link FLOAT32_MAX} / 10 a latent becomes Infinity and the model fails, and from about 1e7 on
 * float32 rounding of `z + noise * e` keeps nothing of `z`, so no larger value means anything else.
 */
export const MAX_PRIVACY_NOISE = 1_000_000;

/** Largest finite float32, (2 - 2^-23) * 2^127. */
export const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * typia tag: finite in float32, i.e. in [-{@link FLOAT32_MAX}, FLOAT32_MAX] (latents are float32);
 * NaN fails. typia's `Type<"float">` is not used: its lower bound is -1.175494351e38.
 */
export type Float32 = tags.TagBase<{
  target: "number";
  kind: "float32";
  value: undefined;
  validate: "-3.4028234663852886e+38 <= $input && $input <= 3.4028234663852886e+38";
  exclusive: true;
  schema: { minimum: -3.4028234663852886e38; maximum: 3.4028234663852886e38 };
}>;
