/**
 * Media bytes in recorded values: the one rule, applied inside `toJson`'s
 * one walk (its `withoutBlobs` option), for the relay's copy of every
 * payload (the memory relay, its byte path, native's copy) and for the
 * adapters' own payloads alike (`recordedValue`). What it does, and why:
 * bytes (a `Buffer`, `Uint8Array` or `ArrayBuffer` a program read from disk)
 * as `[left out: N bytes]`, a base64 data URL as `data:<media type>;base64,
 * [left out: N characters of base64]`, a bare base64 blob as `[left out: N
 * characters of base64]`. Nobody reads them in a trajectory, the model was
 * sent them already, and each model call of a run repeats the conversation,
 * so one image would be written whole (a buffer as a JSON array of numbers,
 * four times its size) into every event, step and span of every later call.
 * Everything that says what the medium was stays as the program or provider
 * gave it: the part's type, its media type and file name, a URL (`https:`,
 * `gs:`, a provider's file id), text.
 *
 * @module
 */

/** A string this long or longer, all base64, is a blob: a generated image, Anthropic's `encrypted_content`, a fetched PDF. */
export const BLOB_CHARS = 1024;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** Binary data: a `Buffer`, a typed array, a `DataView`, an `ArrayBuffer`. */
export function isBytes(value: object): value is ArrayBufferView | ArrayBuffer {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

/** What bytes are recorded as: how many they were. */
export function bytesLeftOut(bytes: ArrayBufferView | ArrayBuffer): string {
  return `[left out: ${bytes.byteLength} bytes]`;
}

/**
 * A string as recorded: a base64 data URL with its data left out, a bare base64 blob as its length, any other
 * text as it is. Callers on a hot path test `text.length < BLOB_CHARS` first (such a string is never a blob).
 */
export function blobText(text: string): string {
  if (text.length < BLOB_CHARS) return text;
  if (text.startsWith('data:')) {
    const at = text.indexOf(';base64,');
    // A media type is short; a comma first means the data URL is not base64 (text, kept as it is).
    if (at < 0 || at > 256 || text.lastIndexOf(',', at) >= 0) return text;
    const data = text.slice(at + 8);
    return BASE64.test(data) ? `${text.slice(0, at + 8)}[left out: ${data.length} characters of base64]` : text;
  }
  return BASE64.test(text) ? `[left out: ${text.length} characters of base64]` : text;
}
