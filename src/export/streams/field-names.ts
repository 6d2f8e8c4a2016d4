/**
 * `field_name_policy = "replace_dots"`: every object key's dots become
 * underscores (`otel.status_code` → `otel_status_code`), for receivers such
 * as Elasticsearch that read a dotted key as a path.
 *
 * @module
 */

/** Rewrites one serialized ATOF event; the text is returned unchanged when no key has a dot. */
export function replaceDotsInKeys(line: string): string {
  // Cheap test first: most lines have no dotted key at all.
  if (!/"[^"\\]*\.[^"\\]*":/.test(line) && !line.includes('\\')) return line;
  return JSON.stringify(renameKeys(JSON.parse(line) as unknown));
}

function renameKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renameKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key.replaceAll('.', '_')] = renameKeys(item);
  return out;
}
