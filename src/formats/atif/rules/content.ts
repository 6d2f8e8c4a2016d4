/**
 * Step messages and observation content: a string, or content parts. Text
 * and image parts are ATIF v1.6+; audio parts (with an `AudioSource`, MIME
 * aliases and `duration_sec`) are ATIF v1.8 only.
 *
 * @module
 */

import { existsSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { ATIF_IMAGE_MEDIA_TYPES } from '../payload/index.ts';
import { childPath } from '../../validation-result.ts';
import { isObject, type Report } from './common.ts';

/** Audio MIME types of ATIF v1.8, with the aliases writers use for them. */
const ATIF_AUDIO_MEDIA_TYPES = [
  'audio/wav',
  'audio/x-wav',
  'audio/wave',
  'audio/mpeg',
  'audio/mp3',
  'audio/ogg',
  'audio/flac',
  'audio/x-flac',
  'audio/webm',
  'audio/aac',
  'audio/mp4',
  'audio/m4a',
  'audio/x-m4a',
] as const;

export interface ContentRules {
  /** Audio parts and blank-path checks (ATIF v1.8). */
  v18: boolean;
  /** Folder image and audio paths are relative to; existence is checked (as a warning) only when given. */
  baseDir: string | undefined;
}

export function checkContent(value: unknown, path: string, name: string, rules: ContentRules, report: Report): void {
  if (typeof value === 'string') return;
  if (!Array.isArray(value)) {
    report.error(path, 'atif.type', `${name} must be a string or an array of content parts`);
    return;
  }
  value.forEach((part, i) => checkPart(part, childPath(path, i), rules, report));
}

function checkPart(part: unknown, path: string, rules: ContentRules, report: Report): void {
  if (!isObject(part)) {
    report.error(path, 'atif.type', 'ContentPart must be an object');
    return;
  }
  if (part.type === 'text') {
    onlyKeys(part, ['type', 'text'], path, 'a text part', report);
    if (typeof part.text !== 'string') report.error(childPath(path, 'text'), 'atif.content_part', 'a text part needs a string text');
    return;
  }
  if (part.type === 'image') {
    mediaPart(part, path, 'image', ATIF_IMAGE_MEDIA_TYPES, ['media_type', 'path'], rules, report);
    return;
  }
  if (part.type === 'audio' && rules.v18) {
    const source = mediaPart(part, path, 'audio', ATIF_AUDIO_MEDIA_TYPES, ['media_type', 'path', 'duration_sec'], rules, report);
    const duration = source?.duration_sec;
    if (duration !== undefined && duration !== null && (typeof duration !== 'number' || !Number.isFinite(duration) || duration < 0)) {
      report.error(childPath(childPath(path, 'source'), 'duration_sec'), 'atif.content_part', 'duration_sec must be a non-negative number');
    }
    return;
  }
  const allowed = rules.v18 ? '"text", "image" or "audio"' : '"text" or "image" (audio parts are ATIF-v1.8)';
  report.error(childPath(path, 'type'), 'atif.content_part', `content part type must be ${allowed}, got ${JSON.stringify(part.type)}`);
}

function mediaPart(
  part: Record<string, unknown>,
  path: string,
  kind: string,
  mediaTypes: readonly string[],
  sourceKeys: readonly string[],
  rules: ContentRules,
  report: Report,
): Record<string, unknown> | undefined {
  onlyKeys(part, ['type', 'source'], path, `an ${kind} part`, report);
  const sourcePath = childPath(path, 'source');
  const source = part.source;
  if (!isObject(source)) {
    report.error(sourcePath, 'atif.content_part', `an ${kind} part needs a source {media_type, path}`);
    return undefined;
  }
  onlyKeys(source, sourceKeys, sourcePath, `an ${kind} source`, report);
  if (typeof source.media_type !== 'string' || !mediaTypes.includes(source.media_type.toLowerCase())) {
    report.error(childPath(sourcePath, 'media_type'), 'atif.content_part', `media_type must be one of ${mediaTypes.join(', ')}`);
  }
  const file = source.path;
  if (typeof file !== 'string' || file === '' || (rules.v18 && file.trim() === '')) {
    report.error(childPath(sourcePath, 'path'), rules.v18 && typeof file === 'string' ? 'atif.blank' : 'atif.content_part', `an ${kind} source needs a path`);
  } else if (rules.baseDir !== undefined && !existsSync(resolvePath(rules.baseDir, file))) {
    // Harbor does not look at the file system: a missing file is worth saying, not a reason to reject.
    report.warn(childPath(sourcePath, 'path'), 'atif.image_missing', `${kind} ${file} does not exist`);
  }
  return source;
}

function onlyKeys(object: Record<string, unknown>, keys: readonly string[], path: string, what: string, report: Report): void {
  for (const key of Object.keys(object)) {
    if (!keys.includes(key)) report.error(childPath(path, key), 'atif.content_part', `${what} has no "${key}"`);
  }
}
