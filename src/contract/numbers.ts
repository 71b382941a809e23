/**
 * typia tags and bounds of the numbers in request types.
 * Part of the contract types re-exported by `src/contract/index.ts` (see there).
 */
import type { tags } from "typia";

/**
 * typia tag: a finite number. JSON can spell numbers beyond float64 (`1e400`), which `JSON.parse`
 * turns into `Infinity`; every number of a request type that has no tighter bound carries this tag,
 * so the generated validators refuse them (400 `parameter_invalid` naming the field).
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
 * Largest accepted `config.privacy_noise` (the tag on {@link ModelConfigInput} spells the same
 * number): 1e6 standard deviations of the unit-variance latents. The noise is added to latents
 * held in float32 (`src/model/training/trainer.ts` drawLatents, `src/model/sampling/inputs.ts`); a value near
 * {@link FLOAT32_MAX} / 10 makes a noisy latent Infinity and the model fails (`1e308` failed its
 * first step). Far below that, from about 1e7 on, float32's rounding of `z + noise * e` (one unit in
 * the last place is about noise * 1.2e-7) no longer keeps anything of `z`, so no larger value
 * could mean anything different; 1e6 trains (tested up to 1e36) and leaves 30 orders of magnitude to
 * the float32 limit.
 */
export const MAX_PRIVACY_NOISE = 1_000_000;

/** Largest finite float32, (2 - 2^-23) * 2^127. */
export const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * typia tag: a number that is finite in float32, i.e. in [-{@link FLOAT32_MAX}, FLOAT32_MAX]
 * (latents are computed in float32: `1e308` is finite in float64 but Infinity there). NaN fails
 * too. typia's `Type<"float">` is not used: its lower bound is -1.175494351e38, not -FLOAT32_MAX.
 */
export type Float32 = tags.TagBase<{
  target: "number";
  kind: "float32";
  value: undefined;
  validate: "-3.4028234663852886e+38 <= $input && $input <= 3.4028234663852886e+38";
  exclusive: true;
  schema: { minimum: -3.4028234663852886e38; maximum: 3.4028234663852886e38 };
}>;
