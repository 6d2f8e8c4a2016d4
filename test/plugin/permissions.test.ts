// Fail open on permissions: a runtime that refuses to let the plugin read
// the environment (Deno without --allow-env throws NotCapable on every read)
// must not make register() throw into the host; it becomes a diagnostic and
// the defaults apply. On Deno this runs for real, without -A, in a child
// process; on every runtime an environment whose reads throw stands in.
import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/plugin/plugin.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { dist, runChild, runtime } from '../support/child.ts';
import { refusingEnv } from '../support/refusing-env.ts';

describe('a runtime that refuses environment reads', () => {
  it('register() does not throw; the refusal is one settings diagnostic and the defaults apply', async () => {
    const registry = new HookRegistry();
    const plugin = createNemoRelayPlugin({ env: refusingEnv(), backend: 'memory', logger: silentLogger });
    expect(() => plugin.register(registry)).not.toThrow();
    await plugin.ready;
    const status = plugin.status();
    const denied = status.diagnostics.filter((d) => d.code === 'settings.permission_denied');
    expect(denied).toHaveLength(1);
    expect(denied[0]!.message).toMatch(/NotCapable/);
    // Every variable the plugin reads is refused: the message counts them and names a few, not all forty.
    const [, total, more] = /^the runtime refused to read (\d+) variables: [A-Z_]+, [A-Z_]+, [A-Z_]+, and (\d+) more \(/.exec(denied[0]!.message) ?? [];
    expect(Number(total)).toBeGreaterThan(10);
    expect(Number(more)).toBe(Number(total) - 3);
    expect(status.state).toBe('ready');
    await plugin.shutdown();
  });

  it.skipIf(runtime !== 'deno')('Deno without --allow-env: register(), hooks and shutdown run without throwing (child process)', () => {
    const result = runChild(
      `
      import { HookRegistry, createNemoRelayPlugin } from ${dist('src/index.js')};
      const registry = new HookRegistry();
      const plugin = createNemoRelayPlugin({ backend: 'memory' });
      plugin.register(registry);
      await plugin.ready;
      registry.emit('on_session_start', () => ({ session_id: 's1' }));
      registry.emit('on_session_end', () => ({ session_id: 's1' }));
      const status = plugin.status();
      await plugin.shutdown();
      console.log('@@' + JSON.stringify({ state: status.state, codes: status.diagnostics.map((d) => d.code) }));
    `,
      { denoPermissions: [] },
    );
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.split('@@')[1]!) as { state: string; codes: string[] };
    expect(report.state).toBe('ready');
    expect(report.codes, result.stdout + result.stderr).toContain('settings.permission_denied');
  });
  if (runtime !== 'deno') console.warn('[permissions] the real Deno case runs only when the suite runs on Deno');
});
