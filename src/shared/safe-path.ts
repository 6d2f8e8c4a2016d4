/**
 * The one file-name rule of every output this package writes.
 *
 * Output names come from configuration (`plugins.toml`, exporter options,
 * filename templates) and, through templates, from session metadata. Three
 * ways out of an output folder are closed here, for every writer alike:
 *
 * 1. Path text: a name must be a plain file name (`isPlainFileName`) or, where
 *    a folder part is allowed (plugins.toml sinks and ATIF templates, as in
 *    native), a relative path without `..` segments (`isConfinedRelativePath`).
 * 2. Symlinked folders: containment is checked on real paths
 *    (`resolveContained`): the real path of the file's parent folder must be
 *    inside the real path of the output folder, so `sub/` planted as a link to
 *    `/etc` is refused although `root/sub/x` looks contained as text
 *    (`assertRealFolderInside` checks a folder before its files are named).
 * 3. A symlink planted at the file itself: files are opened without following
 *    links (`openNoFollow`): `O_NOFOLLOW` where the runtime has it (Node, Bun
 *    and Deno on POSIX), an `lstat` check otherwise. Appending to a planted
 *    link would add to its target; truncating it would empty the target.
 *
 * What stays open: a link swapped in between the check and the open on
 * runtimes without `O_NOFOLLOW` (Windows), and links above the output folder
 * itself, which the user chose.
 *
 * @module
 */

import { constants, lstatSync, openSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** An output path that would leave its folder or follow a link. */
export class UnsafePathError extends Error {
  override readonly name = 'UnsafePathError';
  readonly code = 'EUNSAFEPATH';
  /** Where a link on the path leads, outside the output folder, when that is why (a caller names it in its own words). */
  readonly leadsTo: string | undefined;

  constructor(message: string, leadsTo?: string) {
    super(message);
    this.leadsTo = leadsTo;
  }
}

/** A non-empty file name without a folder part (no `/`, `\`, NUL, and not `.` or `..`). */
export function isPlainFileName(name: unknown): name is string {
  return typeof name === 'string' && name !== '' && name !== '.' && name !== '..' && !/[\\/\0]/.test(name);
}

/**
 * A relative path that cannot climb out of its folder: no `..` segment, no
 * NUL, not absolute, and naming a file (not empty, `.`, or ending in a
 * separator). Native's rule for plugins.toml file sinks ("a confined relative
 * file path"); `.` and empty segments are allowed, as there.
 */
export function isConfinedRelativePath(name: unknown): name is string {
  if (typeof name !== 'string' || name === '' || name.includes('\0')) return false;
  if (path.isAbsolute(name) || path.win32.isAbsolute(name)) return false;
  const segments = name.split(/[\\/]/);
  if (segments.some((segment) => segment === '..')) return false;
  const last = segments[segments.length - 1]!;
  return last !== '' && last !== '.';
}

/**
 * The absolute path of `relative` inside `root`, checked on the text and on
 * real paths: throws `UnsafePathError` when it leaves `root`, or when a link
 * on its folder part (a planted `sub/` pointing elsewhere) leads out of the
 * real `root`. Creates nothing; folders that do not exist yet cannot be links.
 */
export function resolveContained(root: string, relative: string): string {
  const base = path.resolve(root);
  const target = path.resolve(base, relative);
  if (!isInside(base, target)) throw new UnsafePathError(`${JSON.stringify(relative)} resolves outside ${base}`);
  assertRealParentInside(base, target);
  return target;
}

/**
 * Throws `UnsafePathError` unless the real path of `target`'s folder is
 * `root`'s real path or inside it. Missing folders are resolved through
 * their nearest existing ancestor.
 */
export function assertRealParentInside(root: string, target: string): void {
  // A file directly in `root` has no folder part that could be a link (the hot, common case: no syscalls).
  if (path.dirname(path.resolve(target)) === path.resolve(root)) return;
  assertRealFolderInside(root, path.dirname(path.resolve(target)), target);
}

/**
 * Throws `UnsafePathError` unless the real path of `folder` is `root`'s real
 * path or inside it: the same check for a folder the files will go to
 * before any is named (the CLI's `<out>/atif/`, made before its files are
 * known). `shown` is the path the message names (the file, when there is
 * one). Missing folders are resolved through their nearest existing
 * ancestor.
 */
export function assertRealFolderInside(root: string, folder: string, shown: string = folder): void {
  const realRoot = realPath(path.resolve(root));
  const realFolder = realPath(path.resolve(folder));
  if (realFolder !== realRoot && !isInside(realRoot, realFolder)) {
    throw new UnsafePathError(`${shown} is outside ${realRoot}: a folder on its path leads to ${realFolder}`, realFolder);
  }
}

/** The real path of `target`: of its nearest existing ancestor, with the missing part appended. */
function realPath(target: string): string {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      return path.join(realpathSync(current), ...missing.reverse());
    } catch (error) {
      const parent = path.dirname(current);
      const code = (error as { code?: unknown }).code;
      if (parent === current || (code !== 'ENOENT' && code !== 'ENOTDIR')) return path.join(current, ...missing.reverse());
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/** True when `target` is strictly inside `root` (both absolute). */
function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative !== '' && !relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative);
}

/** How `openNoFollow` opens: add at the end, empty first, or create a new file (fails when it exists). */
export type OpenIntent = 'append' | 'truncate' | 'create';

/** The mode of every telemetry file the library creates. */
export const OWNER_ONLY = 0o600;

/**
 * Opens `file` for writing without following a symlink at its last
 * component; throws `UnsafePathError` for a link, and what the file system
 * throws otherwise. Creates the file when missing, owner-only (0600): what
 * the library records holds prompts and answers (native creates its files so
 * too); an existing file keeps its mode.
 * `read` opens it for reading too (to look at what an earlier run left).
 */
export function openNoFollow(file: string, intent: OpenIntent, options?: { read?: boolean }): number {
  const base = (options?.read === true ? constants.O_RDWR : constants.O_WRONLY) | constants.O_CREAT;
  const flags =
    intent === 'append' ? base | constants.O_APPEND : intent === 'truncate' ? base | constants.O_TRUNC : base | constants.O_EXCL;
  // Read here, not at import: the package's bundle loads `node:fs` at its first use (.ci/bundle.ts).
  const noFollow = (constants as { O_NOFOLLOW?: number }).O_NOFOLLOW;
  if (noFollow === undefined) {
    // No O_NOFOLLOW (Windows): check first. A link swapped in right after the check is not caught.
    refuseLink(file);
    return openSync(file, flags, OWNER_ONLY);
  }
  try {
    return openSync(file, flags | noFollow, OWNER_ONLY);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ELOOP') refuseLink(file);
    throw error;
  }
}

function refuseLink(file: string): void {
  let isLink = false;
  try {
    isLink = lstatSync(file).isSymbolicLink();
  } catch {
    return; // missing: the open creates it
  }
  if (isLink) throw new UnsafePathError(`${file} is a symbolic link; output files are never opened through links`);
}
