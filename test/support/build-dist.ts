// Builds dist/ once before the suite, so tests that run the CLI or the
// package in a child process (Node 20 cannot run .ts) always see the
// current sources, on a fresh clone and after every edit alike. Type errors
// do not stop the build here (tsc still emits); `npm test` reports them
// through `npm run typecheck`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
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
