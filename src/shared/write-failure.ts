/**
 * What to do about an output file the system refused to write, in words an
 * operator can act on: the errno alone (`EISDIR: illegal operation on a
 * directory`) named the fault but not the fix. Appended to the warning the
 * first failure of a streak gives; `status().outputs` keeps the system's
 * own message.
 *
 * @module
 */

const FIXES: Record<string, string> = {
  ENOSPC: 'the disk is full: free space there; what was not written is kept and tried again',
  EDQUOT: "the user's disk quota is used up: free space or raise it; what was not written is kept and tried again",
  EROFS: 'the file system is read-only: point the output folder at a writable one',
  EACCES: "the process's user may not write there: change the folder's permissions or point the output folder elsewhere",
  EPERM: "the process's user may not write there: change the folder's permissions or point the output folder elsewhere",
  EISDIR: "a folder stands at the file's path: remove it or choose another file name",
  ENOTDIR: 'a file stands where a folder of the path should be: remove it or point the output folder elsewhere',
  EMFILE: 'the process has no free file descriptors: raise its limit (ulimit -n)',
  ENFILE: 'the system has no free file descriptors: raise its limit',
};

/** ` (fix: ...)` for a write failure whose cause has a known remedy, else nothing. */
export function writeFailureFix(error: unknown): string {
  let code: unknown;
  try {
    code = (error as { code?: unknown } | null)?.code;
  } catch {
    return '';
  }
  const fix = typeof code === 'string' ? FIXES[code] : undefined;
  return fix === undefined ? '' : ` (${fix})`;
}
