/**
 * The byte encoder: whole ATOF lines of the memory relay's events, written
 * as bytes straight from the caller's payloads, with no event object and
 * no copy, for the configuration where ATOF sinks are the only receivers.
 * What it buys: bench/RESULTS.md, "The byte path". Each writer gives the
 * bytes `serializeEvent` gives for the event object the object encoder
 * builds from the same call (pinned by test/backends/memory/lines-only.test.ts).
 *
 * Composite payload parts (the LLM request's `{content, headers}`, a tool
 * end's profile with its annotation) are written whole by the general path
 * when the fast path gives up on any piece, as the event object would be.
 *
 * @module
 */

import type { JsonObject } from '../../../relay/contract.ts';
import type { AtofCategoryProfile } from '../../../formats/atof/types.ts';
import { llmRequestData, copyPayload } from './event-parts.ts';
import { encoded, type LineBuilder } from '../../../shared/utf8-builder.ts';
import { convertMetadata, endMetadata, type EncodedMetadata, type EndRule } from './metadata.ts';
import type { EncodedPushedScope, EncodedScope, EncodedSpan } from './encoder.ts';
import {
  attributesText,
  DATA_KEY,
  MARK_METADATA_KEY,
  payloadJsonText,
  SCOPE_METADATA_KEY,
  writeMarkHead,
  writeMarkTail,
  writeScopeHead,
  writeScopeTail,
} from './event-text.ts';
import { writeFastPayload, writePayload } from './payload-bytes.ts';

/** Where a part of a line is, relative to the line's start (`LineBuilder.start`). */
interface LineRange {
  start: number;
  end: number;
}

/** A scope's start or end line (`category_profile` null); the `data` text's place goes into `dataRange` when given. */
function writeScopeLine(
  out: LineBuilder,
  phase: 'start' | 'end',
  scope: EncodedScope,
  category: string,
  attributes: readonly string[],
  data: unknown,
  metadata: EncodedMetadata,
  timestampUs: number,
  drop: boolean,
  dataRange?: LineRange,
): void {
  writeScopeHead(out, attributesText(attributes), category);
  out.ascii('null');
  out.raw(DATA_KEY);
  if (dataRange !== undefined) dataRange.start = out.length - out.start;
  writePayload(out, data, drop);
  // Relative to the line's start: a payload getter that flushes the writer moves the open line.
  if (dataRange !== undefined) dataRange.end = out.length - out.start;
  out.raw(SCOPE_METADATA_KEY);
  metadata.write(out);
  writeScopeTail(out, scope.name, scope.parentUuid, scope.propagationRootUuid, phase, timestampUs, scope.uuid);
}

/** A mark's line. */
function writeMarkLine(
  out: LineBuilder,
  uuid: string,
  parentUuid: string,
  propagationRootUuid: string,
  name: string,
  data: unknown,
  metadata: unknown,
  timestampUs: number,
  drop: boolean,
): void {
  writeMarkHead(out);
  writePayload(out, data, drop);
  out.raw(MARK_METADATA_KEY);
  writePayload(out, metadata, drop);
  writeMarkTail(out, name, parentUuid, propagationRootUuid, timestampUs, uuid);
}

/**
 * A span's start line. `data` is the tool's arguments, or the LLM request's
 * content when `headers` (the recorded request headers) are given.
 */
function writeSpanStartLine(
  out: LineBuilder,
  span: EncodedSpan,
  data: unknown,
  headers: JsonObject | undefined,
  metadata: EncodedMetadata,
  timestampUs: number,
  drop: boolean,
): void {
  writeScopeHead(out, '[]', span.kind);
  writeProfile(out, span.profile);
  out.raw(DATA_KEY);
  if (headers === undefined) writePayload(out, data, drop, span.wholeMedia);
  else writeLlmRequest(out, data, headers, drop, span.wholeMedia);
  out.raw(SCOPE_METADATA_KEY);
  metadata.write(out);
  writeScopeTail(out, span.name, span.parentUuid, span.propagationRootUuid, 'start', timestampUs, span.uuid);
}

/**
 * A span's end line. `annotation` (a tool's result annotation) is
 * `undefined` when there is none; one that converts to null counts as none.
 */
function writeSpanEndLine(
  out: LineBuilder,
  span: EncodedSpan,
  data: unknown,
  metadata: EncodedMetadata,
  annotation: unknown,
  timestampUs: number,
  drop: boolean,
): void {
  writeScopeHead(out, '[]', span.kind);
  if (annotation === undefined || annotation === null) writeProfile(out, span.profile);
  else writeAnnotatedProfile(out, span.profile, annotation, drop);
  out.raw(DATA_KEY);
  writePayload(out, data, drop, span.wholeMedia);
  out.raw(SCOPE_METADATA_KEY);
  metadata.write(out);
  writeScopeTail(out, span.name, span.parentUuid, span.propagationRootUuid, 'end', timestampUs, span.uuid);
}

const CONTENT_HEAD = encoded('{"content":');
const HEADERS_KEY = encoded(',"headers":');
const MODEL_NAME_HEAD = encoded('{"model_name":');
const TOOL_CALL_ID_HEAD = encoded('{"tool_call_id":');
const ANNOTATION_KEY = encoded('"tool_result_annotation":');

/** The LLM start event's `data`: `{content, headers}` (`headers` already the relay's copy). */
function writeLlmRequest(out: LineBuilder, content: unknown, headers: JsonObject, drop: boolean, whole: boolean): void {
  // Relative to the line's start: a getter that flushes the writer moves the open line.
  const written = out.length - out.start;
  out.raw(CONTENT_HEAD);
  if (writeFastPayload(out, content, drop, whole)) {
    out.raw(HEADERS_KEY);
    if (writeFastPayload(out, headers, false)) {
      out.byte(0x7d); // }
      return;
    }
  }
  out.length = out.start + written;
  out.utf8(payloadJsonText(llmRequestData(content, headers, drop, whole)));
}

/** A span's own profile: `{}`, `{model_name}` or `{tool_call_id}`, ids written as given. */
function writeProfile(out: LineBuilder, profile: AtofCategoryProfile): void {
  const model = profile.model_name;
  if (typeof model === 'string') {
    out.raw(MODEL_NAME_HEAD);
    out.jsonStringAsGiven(model);
    out.byte(0x7d); // }
    return;
  }
  const id = profile.tool_call_id;
  if (typeof id === 'string') {
    out.raw(TOOL_CALL_ID_HEAD);
    out.jsonStringAsGiven(id);
    out.byte(0x7d); // }
    return;
  }
  out.utf8(payloadJsonText(profile));
}

/** `toolEndProfile` as bytes: the span's profile plus `tool_result_annotation`, unless the annotation converts to null. */
function writeAnnotatedProfile(out: LineBuilder, profile: AtofCategoryProfile, annotation: unknown, drop: boolean): void {
  if (typeof annotation === 'function' || typeof annotation === 'symbol') {
    writeProfile(out, profile);
    return;
  }
  const written = out.length - out.start; // see writeLlmRequest
  const id = profile.tool_call_id;
  if (typeof id === 'string') {
    out.raw(TOOL_CALL_ID_HEAD);
    out.jsonStringAsGiven(id);
    out.byte(0x2c); // ,
  } else {
    out.byte(0x7b); // {
  }
  out.raw(ANNOTATION_KEY);
  if (!writeFastPayload(out, annotation, drop)) {
    const converted = copyPayload(annotation, drop);
    if (converted === null) {
      out.length = out.start + written;
      writeProfile(out, profile);
      return;
    }
    out.utf8(payloadJsonText(converted));
  }
  out.byte(0x7d); // }
}

/**
 * Writes each event as its line into the line it is given (a sink's
 * staging buffer); `false` (the line could not be written) hands the call
 * to the object encoder, and the caller gives the line up.
 *
 * The one fallback, in every method: a line whose writer throws (a payload
 * past the engine's limits, which the object encoder then records and
 * counts as dropped). A record's start metadata is set only once its line
 * is whole.
 */
export class ByteEncoder {
  /** Drop credential headers from every payload written (the relay's `dropCredentialHeaders`, set by the core). */
  drop = false;

  scopeStart(out: LineBuilder, record: EncodedPushedScope, input: unknown, metadata: unknown): boolean {
    try {
      const converted = convertMetadata(metadata, this.drop);
      const range: LineRange = { start: 0, end: 0 };
      writeScopeLine(out, 'start', record, record.category, record.attributes, input, converted, record.startUs, this.drop, range);
      record.startMetadata = converted;
      // The input's text is kept for `record.start` (the rest of the start event is in the record).
      record.keepStart(out.text(out.start + range.start, out.start + range.end));
      return true;
    } catch {
      return false;
    }
  }

  scopeEnd(out: LineBuilder, record: EncodedPushedScope, output: unknown, metadata: unknown, endUs: number): boolean {
    try {
      writeScopeLine(out, 'end', record, record.category, record.attributes, output, endMetadata('merge', record.startMetadata, metadata, this.drop), endUs, this.drop);
      return true;
    } catch {
      return false;
    }
  }

  mark(out: LineBuilder, uuid: string, parentUuid: string, propagationRootUuid: string, name: string, data: unknown, metadata: unknown, timestampUs: number): boolean {
    try {
      writeMarkLine(out, uuid, parentUuid, propagationRootUuid, name, data, metadata, timestampUs, this.drop);
      return true;
    } catch {
      return false;
    }
  }

  spanStart(out: LineBuilder, record: EncodedSpan, data: unknown, headers: JsonObject | undefined, metadata: unknown): boolean {
    try {
      const converted = convertMetadata(metadata, this.drop);
      writeSpanStartLine(out, record, data, headers, converted, record.startUs, this.drop);
      record.startMetadata = converted;
      return true;
    } catch {
      return false;
    }
  }

  spanEnd(out: LineBuilder, record: EncodedSpan, data: unknown, rule: EndRule, metadata: unknown, annotation: unknown, endUs: number): boolean {
    try {
      writeSpanEndLine(out, record, data, endMetadata(rule, record.startMetadata, metadata, this.drop), annotation, endUs, this.drop);
      return true;
    } catch {
      return false;
    }
  }
}
