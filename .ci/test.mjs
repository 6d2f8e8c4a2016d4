// `npm test`: the typecheck and the suite at once, the typecheck at a lower
// priority. The suite is CPU-bound but leaves the cores idle now and then
// (while its files wait on child processes and servers); the typecheck fills
// those gaps instead of running first on its own (bench/RESULTS.md, "npm
// test's time: the typecheck beside the suite"). Arguments go to vitest
// (`npm test -- test/cli`). Either failing fails the run; the typecheck's
// report is printed after the suite's, so the two never interleave.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Starts `node <script> ...args`; `exit` resolves with its exit code (1 when it could not start or was killed). */
function start(script, args, stdio) {
  const child = spawn(process.execPath, [path.join(root, script), ...args], { cwd: root, stdio });
  const exit = new Promise((resolve) => {
    child.on('error', (error) => {
      console.error(`could not start ${script}: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
  return { child, exit };
}

const typecheck = start('node_modules/typescript/bin/tsc', ['-p', 'tsconfig.test.json'], ['ignore', 'pipe', 'pipe']);
try {
  if (typecheck.child.pid !== undefined) os.setPriority(typecheck.child.pid, 10);
} catch {
  // Not permitted here: it runs at the suite's priority, which is only slower.
}
// Read while it runs (a full pipe would stall it), printed after the suite.
let report = '';
typecheck.child.stdout?.on('data', (chunk) => (report += chunk));
typecheck.child.stderr?.on('data', (chunk) => (report += chunk));

const suite = start('node_modules/vitest/vitest.mjs', ['run', ...process.argv.slice(2)], 'inherit');
const [suiteCode, typecheckCode] = await Promise.all([suite.exit, typecheck.exit]);
if (typecheckCode !== 0 || report.trim() !== '') {
  process.stdout.write(`\ntypecheck (tsc -p tsconfig.test.json) ${typecheckCode === 0 ? 'passed' : 'failed'}\n${report}`);
}
process.exitCode = suiteCode !== 0 ? suiteCode : typecheckCode;
