// The Claude Agent SDK adapter under `permissionMode: 'bypassPermissions'`, on
// the real SDK and its bundled CLI against the loopback Anthropic API. The
// CLI refuses that mode to root (`--dangerously-skip-permissions cannot be
// used with root/sudo privileges`), so the program
// (test/fixtures/claude-bypass/program.ts) runs in a process of its own under
// Bun: as this user, or, when the tests run as root, as the unprivileged user
// `probe` (`useradd -m probe`; `.ci/run` creates it), skipped with a printed reason when there is
// none. Run as root, the refusal itself is checked: the caller gets the SDK's
// error and nothing is recorded half-way.
//
// What the CLI does under bypass (seen with SDK 0.3.333 and 0.3.336): every call runs
// without asking (canUseTool is not called; the SDK warns it will not be), a
// caller's PreToolUse hook still denies, and one that answers `ask` still
// sends the call to canUseTool; a tool in `disallowedTools` is removed, so
// calling it is a tool error ("No such tool available"), not a denial.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import type { AtifDoc } from '../adapters/support.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PROGRAM = path.join(root, 'test/fixtures/claude-bypass/program.ts');
const BUN = path.join(root, 'node_modules/.bin/bun');
const PROBE_USER = 'probe';

interface Report {
  uid: number | undefined;
  thrown: string | undefined;
  init: string | undefined;
  result: Array<{ subtype: string; is_error: boolean; permission_denials: Array<{ tool_use_id: string }> }>;
  asked: string[];
  told: Array<{ tool_use_id: string; is_error: boolean; content: string }>;
  files: { bash: boolean; write: boolean };
  log: Array<{ hook: string; payload: Record<string, any> }>;
  atif: AtifDoc[];
  others: string[];
}

const isRoot = process.getuid?.() === 0;

/** The probe user's uid and gid, when there is one. */
function probeUser(): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', PROBE_USER], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', PROBE_USER], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Runs the program under Bun, as `user` when given (through runuser, in a temp folder that user owns). */
async function runProgram(user: { uid: number; gid: number } | undefined): Promise<Report> {
  // A folder the user can write: the test run's own temp folder is root's alone.
  const tmp = mkdtempSync(user === undefined ? path.join(process.env.TMPDIR ?? '/tmp', 'nrh-bypass-') : '/tmp/nrh-bypass-probe-');
  try {
    if (user !== undefined) chownSync(tmp, user.uid, user.gid);
    const env = { PATH: process.env.PATH ?? '', HOME: tmp, TMPDIR: tmp };
    const [command, args] = user === undefined ? [BUN, [PROGRAM]] : ['runuser', ['-u', PROBE_USER, '--', BUN, PROGRAM]];
    const child = spawn(command, args, { cwd: tmp, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = stdout.split('\n').find((l) => l.startsWith('BYPASS-REPORT '));
    if (status !== 0 || line === undefined) throw new Error(`the bypass program failed (exit ${status}):\n${stdout}\n${stderr}`);
    return JSON.parse(line.slice('BYPASS-REPORT '.length)) as Report;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function approvalsOf(log: Report['log'], id: string): unknown[][] {
  return log
    .filter((entry) => (entry.hook === 'pre_approval_request' || entry.hook === 'post_approval_response') && entry.payload.tool_call_id === id)
    .map((entry) => [entry.hook, entry.payload.choice ?? null, entry.payload.decided_by ?? null, entry.payload.description ?? null]);
}

const user = isRoot ? probeUser() : undefined;
const noBun = !existsSync(BUN);
const skipReason = noBun ? `no Bun at ${BUN}` : isRoot && user === undefined ? `running as root and there is no user '${PROBE_USER}' (useradd -m ${PROBE_USER}); the CLI refuses bypassPermissions to root` : undefined;
if (skipReason !== undefined) console.log(`claude-agent-sdk bypassPermissions: skipped: ${skipReason}`);

describe('wrapClaudeAgentSdk: permissionMode bypassPermissions', () => {
  it.skipIf(skipReason !== undefined)(`records every call run without an approval, and the hooks that still decide (${isRoot ? `as user '${PROBE_USER}'` : 'as this user'})`, async () => {
    const report = await runProgram(user);
    expect(report.uid, 'not root: the CLI would refuse').not.toBe(0);
    expect(report.thrown).toBeUndefined();
    expect(report.init).toBe('bypassPermissions');
    expect(report.others).toEqual([]);
    // The tools ran without anyone asked: the built-in ones wrote their files.
    expect(report.files).toEqual({ bash: true, write: true });
    // canUseTool is asked only about the call a PreToolUse hook answered `ask`.
    expect(report.asked).toEqual(['mcp__ops__ask_me']);
    const { log } = report;
    for (const id of ['toolu_weather', 'toolu_bash', 'toolu_write', 'toolu_delete']) expect(approvalsOf(log, id), id).toEqual([]);
    expect(approvalsOf(log, 'toolu_deploy')).toEqual([
      ['pre_approval_request', null, null, 'mcp__ops__deploy'],
      ['post_approval_response', 'deny', 'PreToolUse hook', 'no deploys on Friday'],
    ]);
    expect(approvalsOf(log, 'toolu_ask').map((entry) => entry.slice(0, 2))).toEqual([
      ['pre_approval_request', null],
      ['post_approval_response', 'once'],
    ]);
    // Each call ends as the model was told: run, removed by disallowedTools (an error), denied by the hook.
    const ends: Record<string, [unknown, unknown]> = Object.fromEntries(log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, [e.payload.status, e.payload.result ?? e.payload.error]]));
    const told = Object.fromEntries(report.told.map((t) => [t.tool_use_id, t.content]));
    expect(Object.fromEntries(Object.entries(ends).map(([id, [status]]) => [id, status]))).toEqual({
      toolu_weather: 'ok',
      toolu_bash: 'ok',
      toolu_write: 'ok',
      toolu_delete: 'error',
      toolu_deploy: 'denied',
      toolu_ask: 'ok',
    });
    expect(Object.fromEntries(Object.entries(ends).map(([id, [, text]]) => [id, text]))).toEqual(told);
    expect(told.toolu_delete).toContain('No such tool available');
    // The calls the CLI counts as denied are the ones recorded as denied.
    expect(report.result.flatMap((r) => r.permission_denials.map((d) => d.tool_use_id))).toEqual(Object.entries(ends).filter(([, [status]]) => status === 'denied').map(([id]) => id));
    expect(log.filter((e) => e.hook === 'on_session_end').map((e) => e.payload.completed)).toEqual([true]);
    expect(report.atif).toHaveLength(1);
    expect(validateAtif(report.atif[0]!)).toEqual([]);
  }, 180_000);

  it.skipIf(!isRoot || noBun)('as root, the SDK throws the CLI\'s refusal to the caller and nothing is recorded', async () => {
    const report = await runProgram(undefined);
    expect(report.uid).toBe(0);
    expect(report.thrown).toContain('cannot be used with root');
    expect(report.log).toEqual([]);
    expect(report.atif).toEqual([]);
  }, 180_000);
});
