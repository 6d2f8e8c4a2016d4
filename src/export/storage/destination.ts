/**
 * One place an ATIF trajectory is uploaded to.
 *
 * @module
 */

/** A finished trajectory, as the local file would hold it. */
export interface AtifUpload {
  /** The rendered `filename_template` (what the local file would be called). */
  filename: string;
  /** The document's `session_id` (the root scope's uuid). */
  sessionId: string;
  /** The document text, exactly as the local file would hold it. */
  text: string;
  /** Where the local file would be: the recovery copy goes there. */
  localPath?: string;
}

export interface AtifDestination {
  /** For status(): the URL, or `s3://bucket/prefix`. */
  readonly label: string;
  readonly timeoutMs: number;
  /** One attempt; throws a `DeliveryError`. */
  put(upload: AtifUpload, signal: AbortSignal): Promise<void>;
}
