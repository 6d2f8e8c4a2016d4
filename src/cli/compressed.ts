/**
 * Compressed inputs, told by their first bytes: a teammate's run often
 * arrives as `run.jsonl.gz`, and read as text every line of it would be
 * "not valid JSON" (or the file "neither ATIF nor ATOF"), with nothing
 * saying why. The CLI reads JSON text only, so such a file is refused with
 * one line naming the command that decompresses it.
 *
 * @module
 */

/**
 * A compression format: its name, its magic bytes, the command that writes
 * the text beside the file (keeping it), and the one that writes it to
 * standard output.
 */
interface Compression {
  name: string;
  magic: readonly number[];
  toFile: string;
  toPipe: string;
}

const COMPRESSIONS: readonly Compression[] = [
  { name: 'gzip', magic: [0x1f, 0x8b], toFile: 'gunzip -k', toPipe: 'gunzip -c' },
  { name: 'zstd', magic: [0x28, 0xb5, 0x2f, 0xfd], toFile: 'zstd -d', toPipe: 'zstd -dc' },
  { name: 'xz', magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], toFile: 'unxz -k', toPipe: 'unxz -c' },
  // "BZh": no JSON text starts with "B".
  { name: 'bzip2', magic: [0x42, 0x5a, 0x68], toFile: 'bunzip2 -k', toPipe: 'bunzip2 -c' },
  { name: 'zip', magic: [0x50, 0x4b, 0x03, 0x04], toFile: 'unzip', toPipe: 'unzip -p' },
];

/** Bytes `compressionOf` looks at: the longest magic. */
export const COMPRESSION_SNIFF_BYTES = 6;

/** The compression whose magic `head` (a file's first bytes) starts with, else undefined. */
function compressionOf(head: Uint8Array): Compression | undefined {
  return COMPRESSIONS.find((format) => head.length >= format.magic.length && format.magic.every((byte, i) => head[i] === byte));
}

/**
 * Why `name` (the input as messages name it; `(stdin)` for standard input)
 * cannot be read when `head` shows a compressed file, else undefined.
 */
export function compressedInputReason(name: string, head: Uint8Array, isStdin: boolean): string | undefined {
  const format = compressionOf(head);
  if (format === undefined) return undefined;
  const fix = isStdin ? `decompress it on the way in ("${format.toPipe} <file> | nemo-relay-hooks …")` : `decompress it first ("${format.toFile} ${name}") and give the file it writes`;
  return `cannot read ${name}: it is ${format.name}-compressed, and this command reads JSON text; ${fix}`;
}
