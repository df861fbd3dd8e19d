/**
 * Why an attachment upload was refused: a status and a stable code the HTTP layer answers with
 * (src/http/trigger-input.ts turns it into its HttpError), and a sentence for the client. The
 * attachments room does not know the HTTP layer; it only says what went wrong and how badly.
 */
export type AttachmentRefusalStatus = 400 | 413 | 415;

export class AttachmentRefusal extends Error {
  override readonly name = 'AttachmentRefusal';
  constructor(readonly status: AttachmentRefusalStatus, readonly code: string, message: string) {
    super(message);
  }
}
