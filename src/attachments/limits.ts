/**
 * The trigger surface's size limits (interface.md 8). "MB" there is read as a binary megabyte
 * (MiB, 1024 × 1024 bytes): the most a caller may send is 25 × 1024 × 1024 = 26,214,400 bytes per
 * file, exactly; one byte more is refused. docs/http-api.md ("Limits") states the same numbers.
 */
const MIB = 1024 * 1024;

export const TRIGGER_LIMITS = Object.freeze({
  /** one attachment */
  fileBytes: 25 * MIB,
  /** all attachments of one request together */
  totalFileBytes: 100 * MIB,
  /** attachments per request */
  files: 20,
  /** a JSON or form-urlencoded body */
  bodyBytes: 1 * MIB,
  /** the non-file fields of a multipart request together (names and values) */
  fieldBytes: 1 * MIB,
  /** non-file fields of a multipart request */
  fields: 1000,
  /** one field name */
  fieldNameBytes: 1024,
});

/**
 * Inputs whose JSON is larger than this travel to the run as a reference to a blob, so no valid
 * request comes near Temporal's payload limits (2 MB per payload by default; warnings from 512 KB).
 */
export const INLINE_INPUTS_LIMIT = 256 * 1024;

/** Attachment links are valid 24 hours (interface.md 8): on a trigger call, and re-signed for a re-run or resumed run. */
export const ATTACHMENT_LINK_TTL_SECONDS = 24 * 3600;

export type TriggerLimits = typeof TRIGGER_LIMITS;
