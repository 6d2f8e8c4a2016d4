/**
 * Where a session's ATIF file goes (written with `writeFileAtomic`).
 *
 * Session ids come from the host and, through it, sometimes from users or
 * remote gateways. The Hermes plugin formats them straight into a file name,
 * so an id like `../../etc/cron.d/x` escapes the output folder. Here an id is
 * reduced to a safe file-name fragment, and the final path is checked to be
 * inside the output folder, on real paths (src/shared/safe-path.ts), before
 * anything is written.
 *
 * @module
 */

import { createRequire } from 'node:module';
import path from 'node:path';
import type { FileClaim } from '../backends/trajectory-files.ts';
import { nameTaken } from '../shared/atomic-file.ts';
import { assertRealParentInside, UnsafePathError } from '../shared/safe-path.ts';

/** Longest fragment kept from a session id before it is shortened and hashed. */
const MAX_FRAGMENT_LENGTH = 96;
const SAFE_FRAGMENT = /^[A-Za-z0-9._-]+$/;

/**
 * Reduces a session id to a file-name fragment that is safe on every
 * platform and cannot traverse folders.
 *
 * An id made only of `[A-Za-z0-9._-]`, not starting with a dot and at most
 * 96 characters is kept as is, so ordinary ids keep their familiar file
 * names. Anything else has each unsafe character replaced by `_`, is cut to
 * 96 characters, and gets `-` plus the first 12 hex digits of the id's
 * SHA-256 appended, so two different ids never share a file.
 */
export function safeSessionFragment(sessionId: string): string {
  if (sessionId.length > 0 && sessionId.length <= MAX_FRAGMENT_LENGTH && SAFE_FRAGMENT.test(sessionId) && !sessionId.startsWith('.')) {
    return sessionId;
  }
  const cleaned = sessionId.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, MAX_FRAGMENT_LENGTH);
  const digest = sha256Hex(sessionId).slice(0, 12);
  return `${cleaned || 'session'}-${digest}`;
}

/** Raised when a template would place a trajectory outside its output folder. */
export class UnsafeAtifPathError extends Error {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'UnsafeAtifPathError';
  /**
   * Builds the error for `template` under `outputDirectory`; `linked` is the
   * real-path check's refusal when a link on the folder part is why (a caller
   * tells a link planted in the folder from a template that climbs out as text).
   */
  constructor(readonly template: string, readonly outputDirectory: string, readonly linked?: UnsafePathError) {
    super(`ATIF filename template ${JSON.stringify(template)} resolves outside the output folder ${outputDirectory}${linked === undefined ? '' : ` (${linked.message})`}`);
  }
}

/**
 * The template the files are named by: `template` itself, or, without
 * `{session_id}`, with `-{session_id}` inserted before its extension
 * (otherwise every session would overwrite one file). What the plugin's
 * notice and `doctor` show, so they name the files that are written.
 */
export function effectiveAtifTemplate(template: string): string {
  if (template.includes('{session_id}')) return template;
  const extension = path.extname(template);
  return `${template.slice(0, template.length - extension.length)}-{session_id}${extension}`;
}

/**
 * The absolute path of a session's ATIF file: the template with
 * `{session_id}` replaced by the safe fragment. A template without
 * `{session_id}` gets `-{session_id}` inserted before its extension, because
 * otherwise every session would overwrite one file. Instance 2 and later
 * get `~<instance>` after the fragment (`~` never appears in a fragment kept
 * as is): the names `atifFileClaim` hands out when the id's file is taken.
 */
export function atifFilePath(outputDirectory: string, template: string, sessionId: string, instance = 1): string {
  const effective = effectiveAtifTemplate(template);
  const fragment = instance > 1 ? `${safeSessionFragment(sessionId)}~${instance}` : safeSessionFragment(sessionId);
  const fileName = effective.split('{session_id}').join(fragment);
  const root = path.resolve(outputDirectory);
  const target = path.resolve(root, fileName);
  const relative = path.relative(root, target);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new UnsafeAtifPathError(template, root);
  }
  // A folder part (`sub/{session_id}.json`) must not follow a link planted at `sub` out of the folder.
  try {
    assertRealParentInside(root, target);
  } catch (error) {
    if (error instanceof UnsafePathError) throw new UnsafeAtifPathError(template, root, error);
    throw error;
  }
  return target;
}

/** How many names of one session id a claim tries before it gives up (the write then fails, counted and reported). */
const MAX_INSTANCES = 100_000;

/**
 * Names a claim of this process starts at and has not landed at yet (by
 * any plugin of the process, until its first write lands or its session
 * ends): no other claim of this process offers one of them. On disk they
 * are still free, so only this set keeps two plugins of one process (a
 * host and an MCP server it runs in-process, say) that name a path before
 * writing from naming the same file.
 */
const claimed = new Set<string>();

/** A session's claim on its ATIF file name (`atifFileClaim`). */
export interface AtifFileClaim extends FileClaim {
  /** The instance the claim tries first, or holds once a write landed: what a path handed out now names. */
  readonly instance: number;
  /** The session ended: a name it started at and never wrote is no longer kept from the rest of this process. */
  release(): void;
}

/**
 * The one rule for naming a session whose id already has a file: a
 * session's trajectory goes to the name of the first instance from
 * `instance` on (1 for the first session of an id in this process, `n`
 * for the n-th, so a process's own repeats never meet) that holds nothing
 * on disk (another process's file, an earlier run's, or this process's
 * earlier session's) and that no other claim of this process started at:
 * `~2`, `~3`, .... That is decided when the claim is made, so a path handed
 * out before the first write (a `trajectory_path` in `hooks.traceContext()`,
 * an MCP call's `_meta`) names the file the session will be written to. The
 * writer then claims the name atomically (`shared/atomic-file.ts`): should
 * another process have taken it in between, the write goes on to the next
 * free name (and a path handed out names the other file: nothing on disk
 * reserves the name, because a placeholder left by a crash would be an
 * empty, invalid trajectory file). `landed` is told the instance the text
 * got, which the session keeps for its later writes.
 */
export function atifFileClaim(outputDirectory: string, template: string, sessionId: string, instance: number, landed: (instance: number) => void): AtifFileClaim {
  const nameOf = (n: number) => atifFilePath(outputDirectory, template, sessionId, n);
  let trying = instance;
  let name = nameOf(trying);
  while (trying < MAX_INSTANCES && (claimed.has(name) || nameTaken(name))) name = nameOf(++trying);
  let reserved: string | null = name;
  claimed.add(name);
  const release = () => {
    if (reserved !== null) claimed.delete(reserved);
    reserved = null;
  };
  let held: string | null = null;
  return {
    get instance() {
      return trying;
    },
    get held() {
      return held;
    },
    set held(landedAt: string | null) {
      held = landedAt;
      if (landedAt === null) return;
      release();
      landed(trying);
    },
    next() {
      do {
        if (trying >= MAX_INSTANCES) return null;
        trying += 1;
      } while (claimed.size > 0 && claimed.has(nameOf(trying)));
      return nameOf(trying);
    },
    release,
  };
}

type CreateHash = (algorithm: string) => { update(data: string): { digest(encoding: 'hex'): string } };
let createHash: CreateHash | null = null;

/** SHA-256 in hex, with `node:crypto` loaded at the first id that needs it: importing it costs every host several milliseconds. */
function sha256Hex(text: string): string {
  createHash ??= (createRequire(import.meta.url)('node:crypto') as { createHash: CreateHash }).createHash;
  return createHash('sha256').update(text).digest('hex');
}
