/**
 * The Arrow format's numbering the SDK's own Arrow code uses (Schema.fbs, Message.fbs, File.fbs of
 * https://github.com/apache/arrow/tree/main/format), shared by the Generate response's reader and
 * the Arrow file writer; no imports, so the reader loads nothing of the writer's.
 */

/** `MetadataVersion.V5`. */
export const METADATA_V5 = 4;
/** `MessageHeader` union members. */
export const HEADER_SCHEMA = 1;
export const HEADER_DICTIONARY_BATCH = 2;
export const HEADER_RECORD_BATCH = 3;
/** `Type` union members. */
export const TYPE_INT = 2;
export const TYPE_FLOATING_POINT = 3;
export const TYPE_UTF8 = 5;
export const TYPE_DATE = 8;
export const TYPE_TIMESTAMP = 10;
/** `Precision.DOUBLE`. */
export const PRECISION_DOUBLE = 2;
/** `DateUnit.DAY`, and the `Date` table's default unit (`MILLISECOND`). */
export const DATE_UNIT_DAY = 0;
export const DATE_UNIT_DEFAULT = 1;
/** `TimeUnit.MILLISECOND`. */
export const TIME_UNIT_MILLISECOND = 1;
