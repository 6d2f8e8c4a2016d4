import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cli, cliInProcess, fileErrors, outputFiles, ROOT, runtime, tempDir } from './support.ts';

const clean = { HERMES_NEMO_RELAY_PLUGINS_TOML: undefined, HERMES_NEMO_RELAY_ATOF_ENABLED: undefined, HERMES_NEMO_RELAY_ATIF_ENABLED: undefined, NEMO_RELAY_HOOKS_OUTPUTS: undefined };

describe('nemo-relay-hooks doctor', () => {
  it('reports the runtime, the backend auto picks and why, and a clean bill of health', () => {
    const result = cli(['doctor'], { env: clean });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^  runtime +${runtime} \\d+\\.\\d+`, 'm'));
    expect(result.stdout).toMatch(/^  package +nemo-relay-hooks \d+\.\d+\.\d+/m);
    if (runtime === 'node') {
      expect(result.stdout).toMatch(/^  backend +native: auto on node: native relay loaded \(nemo-relay-node 0\.9\.\d+\)$/m);
      expect(result.stdout).toMatch(/^  native +nemo-relay-node 0\.9\.\d+, loaded$/m);
    } else {
      expect(result.stdout).toMatch(new RegExp(`^  backend +memory: auto on ${runtime}: in-memory relay \\(native is an explicit opt-in there\\)$`, 'm'));
      expect(result.stdout).toMatch(/^  native +nemo-relay-node 0\.9\.\d+ installed, not loaded here$/m);
    }
    expect(result.stdout).toContain('not configured (NEMO_RELAY_HOOKS_PLUGINS_TOML unset)');
    // Nothing configured: the plugin records to its default folder, and doctor says where.
    expect(result.stdout).toMatch(/^  exporters +ATOF → nemo-relay-output\/.*-atof\.jsonl \(the default output: no file output is configured\); ATIF → nemo-relay-output\/.*-atif-\{session_id\}\.json/m);
    expect(result.stdout.trimEnd().endsWith('✓ everything looks fine')).toBe(true);
  });

  it('follows NEMO_RELAY_HOOKS_BACKEND like the plugin does', async () => {
    const result = await cliInProcess(['doctor'], { env: { ...clean, NEMO_RELAY_HOOKS_BACKEND: 'memory' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^  backend +memory: NEMO_RELAY_HOOKS_BACKEND=memory: in-memory relay requested/m);
  });

  it('lists the ATIF file a template without {session_id} gives (the plugin inserts -{session_id}), beside the warning', async () => {
    const result = await cliInProcess(['doctor'], { env: { ...clean, NEMO_RELAY_HOOKS_ATIF_FILENAME_TEMPLATE: 'traj.json' } });
    expect(result.stdout).toContain(`ATIF → ${path.join('nemo-relay-output', 'traj-{session_id}.json')}`);
    expect(result.stdout).toMatch(/warning settings\.template_without_session_id/);
  });

  it('lists the HERMES_NEMO_RELAY_* variables set, and warns about invalid values without failing', async () => {
    const result = await cliInProcess(['doctor'], { env: { ...clean, HERMES_NEMO_RELAY_ATOF_ENABLED: 'sometimes', HERMES_NEMO_RELAY_ATIF_ENABLED: '1' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('HERMES_NEMO_RELAY_ATOF_ENABLED=sometimes');
    expect(result.stdout).toMatch(/warning settings\.invalid_value \(HERMES_NEMO_RELAY_ATOF_ENABLED\): .*not a recognised boolean/);
    expect(result.stdout).toMatch(/warning settings\.atif_without_output_directory/);
    expect(result.stdout).toContain('! no errors, 2 warnings');
  });

  // An operator's trial: a folder in the ATOF file name made the plugin write no ATOF file at
  // all, while doctor listed `ATOF → x.jsonl` and said everything looked fine.
  it('refuses an ATOF file name with a folder part as the plugin does: an error, and no file listed', async () => {
    const result = await cliInProcess(['doctor', '--offline'], { env: { ...clean, NEMO_RELAY_HOOKS_ATOF_FILENAME: '../x.jsonl' } });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^  exporters +ATOF → \(its file name is refused: nothing is written\); ATIF → /m);
    expect(result.stdout).toMatch(/^  error settings\.invalid_value \(NEMO_RELAY_HOOKS_ATOF_FILENAME\): NEMO_RELAY_HOOKS_ATOF_FILENAME="\.\.\/x\.jsonl" is not a plain file name, so no ATOF file is written; fix: /m);
  });

  it('validates a plugins.toml and exits 1 on an error diagnostic', async () => {
    const dir = tempDir();
    const bad = path.join(dir, 'bad.toml');
    writeFileSync(bad, 'version = 1\n[[components]]\nkind = "observability"\n[components.config]\nversion = 4\n[components.config.atof]\nenabled = true\nsinks = [{ type = "file", mode = "sideways", output_directory = "x" }]\n');
    const result = await cliInProcess(['doctor', '--plugins-toml', bad], { env: clean });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/plugins\.toml +.*bad\.toml: invalid/);
    expect(result.stdout).toMatch(/^  error observability\.unsupported_value \(atof sinks\[0\]\.mode\): /m);
    expect(result.stdout).toMatch(/✗ \d+ errors?, \d+ warnings?/);
  });

  it("names the default files after the host's package.json, and as <script> where there is none (not after the CLI's own script)", () => {
    const bare = cli(['doctor'], { env: clean, cwd: tempDir() });
    expect(bare.stdout).toMatch(/^  exporters +ATOF → nemo-relay-output\/<script>-atof\.jsonl \(the default output: no file output is configured\); ATIF → nemo-relay-output\/<script>-atif-\{session_id\}\.json$/m);
    const dir = tempDir();
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: '@acme/agent', version: '1.2.3' }));
    const named = cli(['doctor'], { env: clean, cwd: dir });
    expect(named.stdout).toMatch(/^  exporters +ATOF → nemo-relay-output\/acme-agent-atof\.jsonl /m);
  });

  it("says only the folder is the default when the host named its files, as the plugin's start-up notice does", () => {
    const result = cli(['doctor', '--json'], { env: { ...clean, NEMO_RELAY_HOOKS_ATOF_FILENAME: 'run.jsonl' }, cwd: tempDir() });
    expect(JSON.parse(result.stdout).exporters[0]).toEqual({ format: 'atof', path: path.join('nemo-relay-output', 'run.jsonl'), mode: 'default folder' });
    const text = cli(['doctor'], { env: { ...clean, NEMO_RELAY_HOOKS_ATOF_FILENAME: 'run.jsonl' }, cwd: tempDir() });
    expect(text.stdout).toMatch(/^  exporters +ATOF → nemo-relay-output\/run\.jsonl \(the default folder: no output folder is configured\); ATIF → /m);
  });

  it('says why no exporter is listed: the plugins.toml owns the outputs, the Hermes names, or the switch', async () => {
    const dir = tempDir();
    const bad = path.join(dir, 'bad.toml');
    writeFileSync(bad, 'version = 1\n[[components]]\nkind = "observability"\n[components.config]\nversion = 4\n[components.config.atof]\nenabled = true\nsinks = [{ type = "file", mode = "sideways", output_directory = "x" }]\n');
    // NEMO_RELAY_HOOKS_OUTPUTS is unset in each of the first two: the row must not name it as the cause.
    const toml = await cliInProcess(['doctor', '--plugins-toml', bad], { env: clean });
    expect(toml.stdout).toMatch(/^  exporters +none from the environment \(a plugins\.toml is configured: it owns the outputs\)$/m);
    const hermes = await cliInProcess(['doctor'], { env: { ...clean, HERMES_NEMO_RELAY_ATOF_ENABLED: '0' } });
    expect(hermes.stdout).toMatch(/^  exporters +none \(a HERMES_NEMO_RELAY_\* variable is set: the Hermes defaults apply, and nothing is enabled\)$/m);
    const off = await cliInProcess(['doctor'], { env: { ...clean, NEMO_RELAY_HOOKS_OUTPUTS: 'off' } });
    expect(off.stdout).toMatch(/^  exporters +none \(NEMO_RELAY_HOOKS_OUTPUTS=off, and nothing enabled explicitly\)$/m);
  });

  it('accepts a valid plugins.toml named by HERMES_NEMO_RELAY_PLUGINS_TOML', async () => {
    const dir = tempDir();
    const good = path.join(dir, 'plugins.toml');
    writeFileSync(good, `version = 1\n[[components]]\nkind = "observability"\n[components.config]\nversion = 4\n[components.config.atof]\nenabled = true\nsinks = [{ type = "file", mode = "overwrite", output_directory = ${JSON.stringify(dir)}, filename = "run.jsonl" }]\n[components.config.atif]\nenabled = true\noutput_directory = ${JSON.stringify(dir)}\n`);
    const result = await cliInProcess(['doctor'], { env: { ...clean, HERMES_NEMO_RELAY_PLUGINS_TOML: good } });
    expect(result.stdout).toMatch(/plugins\.toml +.*plugins\.toml: valid \(observability: 1 ATOF file sink, ATIF on\)/);
    expect(result.code).toBe(0);
  });

  it('counts the stream sinks and ATIF stores that will activate, and reports a wrong one as skipped, not fatal', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'plugins.toml');
    writeFileSync(
      file,
      `version = 1\n[[components]]\nkind = "observability"\n[components.config]\nversion = 4\n[components.config.atof]\nenabled = true\n` +
        `[[components.config.atof.sinks]]\ntype = "file"\noutput_directory = ${JSON.stringify(dir)}\n` +
        `[[components.config.atof.sinks]]\ntype = "stream"\nurl = "http://127.0.0.1:9/ok"\n` +
        `[[components.config.atof.sinks]]\ntype = "stream"\nurl = "http://127.0.0.1:9/bad"\nheader_env = { authorization = "NRH_DOCTOR_NEVER_SET" }\n` +
        `[components.config.atif]\nenabled = true\noutput_directory = ${JSON.stringify(dir)}\n` +
        `[[components.config.atif.storage]]\ntype = "http"\nendpoint = "http://127.0.0.1:9/atif"\n`,
    );
    // Nobody listens on port 9: --offline keeps this about the document (doctor-destinations.test.ts connects).
    const result = await cliInProcess(['doctor', '--plugins-toml', file, '--offline'], { env: clean });
    expect(result.stdout).toMatch(/plugins\.toml: valid \(observability: 1 ATOF file sink, ATIF on, 1 ATOF stream sink, 1 ATIF store\)/);
    expect(result.stdout).toMatch(/^  warning observability\.unsupported_value \(atof sinks\[2\]\.header_env\.authorization\): .*this destination is skipped/m);
    expect(result.code).toBe(0);
  });

  it('reports invalid TOML as an error', async () => {
    const dir = tempDir();
    const broken = path.join(dir, 'broken.toml');
    writeFileSync(broken, 'version = [1,\n');
    const result = await cliInProcess(['doctor', '--plugins-toml', broken], { env: clean });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/error plugins_toml\.invalid_toml/);
  });
});

describe('nemo-relay-hooks demo', () => {
  it.each(['memory', 'auto'])('runs the bundled session with --backend %s, writes valid files and prints the tree', async (backend) => {
    const out = tempDir();
    // auto through the executable (native on Node), memory in this process.
    const run = backend === 'auto' ? async (argv: string[]) => cli(argv) : cliInProcess;
    const result = await run(['demo', '--fast', '--out', out, '--backend', backend]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^NeMo Relay demo \(backend (memory|native 0\.9\.\d+)\): 37 hooks$/m);
    expect(result.stdout).toMatch(/ATOF {2}.*demo-atof\.jsonl {2}✓ valid/);
    expect(result.stdout).toMatch(/ATIF {2}.*demo-atif-demo-session-7f3a\.json {2}✓ valid/);
    expect(result.stdout).toMatch(/└─ turn 1 /);
    expect(result.stdout).toMatch(/subagent demo-subagent-91b2/);
    expect(result.stdout).toMatch(/✗ LLM .*ERROR rate_limit_error/);
    const files = outputFiles(out);
    expect(files.map((file) => path.relative(out, file)).sort()).toEqual(['atif/demo-atif-demo-session-7f3a.json', 'atof/demo-atof.jsonl', 'hooks.jsonl']);
    for (const file of files.filter((f) => !f.endsWith('hooks.jsonl'))) expect(fileErrors(file), file).toEqual([]);
    // The recorded hooks replay to the same session.
    const replayed = await cliInProcess(['replay', path.join(out, 'hooks.jsonl'), '--out', path.join(out, 'replayed')]);
    expect(replayed.stdout).toContain('  sessions   1 (+1 subagent)');
  });

  it('prints next steps that work as printed, from the folder it ran in', () => {
    const cwd = tempDir();
    const result = cli(['demo', '--fast', '--backend', 'memory', '--out', 'out'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    const next = result.stdout.slice(result.stdout.indexOf('Next:')).split('\n').slice(1).filter((line) => line.trim() !== '');
    expect(next).toHaveLength(3);
    // cli() starts the checkout's entry (Node: dist/, Bun and Deno: src/) from a folder outside the checkout: Node's
    // npx finds the bin there, Bun and Deno are named by the executable that ran (test/cli/demo-next.test.ts has the
    // installed package's forms).
    const again = runtime === 'node' ? 'npx nemo-relay-hooks' : `${process.execPath}${runtime === 'deno' ? ' run -A' : ''} ${path.join(ROOT, 'src/cli/main.ts')}`;
    for (const line of next) {
      // Paths relative to where the demo ran, as a user would type them.
      expect(line.startsWith(`  ${again} `), line).toBe(true);
      expect(line.slice(again.length + 3)).toMatch(/^(view|replay|validate) out\//);
      const args = line.slice(again.length + 3).split(/\s+/);
      const run = cli(args, { cwd });
      expect(run.code, `${line}\n${run.stderr}`).toBe(0);
    }
    expect(outputFiles(path.join(cwd, 'out', 'replayed')).length).toBeGreaterThan(0);
  });

  if (runtime !== 'node') console.info(`skipping the "npx nemo-relay-hooks" case on ${runtime}: npx is Node's; Bun and Deno run the CLI as their own pages show (bunx, deno run npm:)`);
  it.skipIf(runtime !== 'node')('is reachable as "npx nemo-relay-hooks" in a checkout, as the next steps print it', () => {
    // npx links the checkout's own package into its cache the first time, running
    // `prepare` (a full rebuild of dist/) unless scripts are off: that rebuild would
    // pull dist/ from under the tests running beside this one.
    const result = spawnSync('npx', ['--no-install', 'nemo-relay-hooks', '--version'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_config_ignore_scripts: 'true' },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('writes to a fresh folder under the OS temp dir by default and prints its paths', async () => {
    const result = await cliInProcess(['demo', '--fast', '--backend', 'memory']);
    expect(result.code).toBe(0);
    const match = /ATIF {2}(\S+) {2}✓ valid/.exec(result.stdout);
    expect(match).not.toBeNull();
    expect(path.basename(path.dirname(path.dirname(match![1]!)))).toMatch(/^nemo-relay-demo-/);
    expect(fileErrors(match![1]!)).toEqual([]);
  });
});
