// Builds dist/ before the suite, so tests that run the CLI or the package
// in a child process (Node 20 cannot run .ts) always see the current
// sources, on a fresh clone and after every edit alike. Type errors do not
// stop the build here (tsc still emits); `npm test` reports them through
// `npm run typecheck`.
//
// A dist/ newer than every file it is built from (`npm install` builds it
// through `prepare`; the last run here did) is used as it is: the build is
// tsc and the bundler again, the biggest fixed cost of a run.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What dist/ is built from: the sources, the build's own configuration and script. */
const INPUTS = ['src', 'native', 'package.json', 'tsconfig.json', '.ci/bundle.ts'];
/** Written last by `npm run build` (the bundler rewrites the entries after tsc). */
const OUTPUT = 'dist/src/index.js';

function newestMtime(file: string): number {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(file)) newest = Math.max(newest, newestMtime(path.join(file, entry)));
  return newest;
}

function upToDate(): boolean {
  const built = statSync(path.join(root, OUTPUT), { throwIfNoEntry: false });
  if (built === undefined || statSync(path.join(root, 'dist/src/index.d.ts'), { throwIfNoEntry: false }) === undefined) return false;
  return INPUTS.every((input) => newestMtime(path.join(root, input)) < built.mtimeMs);
}

export default function setup(): void {
  if (upToDate()) return;
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync('node', [tsc, '-p', path.join(root, 'tsconfig.json')], { cwd: root, encoding: 'utf8' });
  if (result.error) throw new Error(`could not run tsc to build dist/: ${result.error.message}`);
  if (result.status !== 0) {
    console.warn(`[build-dist] tsc reported errors; dist/ was still emitted:\n${result.stdout}${result.stderr}`);
  }
  // The same bundled entries that `npm run build` makes, so the package tests see what users load.
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const bundle = spawnSync(npm, ['run', '--silent', 'build:bundle'], { cwd: root, encoding: 'utf8' });
  if (bundle.error || bundle.status !== 0) {
    throw new Error(`could not bundle dist/: ${bundle.error?.message ?? `${bundle.stdout}${bundle.stderr}`}`);
  }
}
