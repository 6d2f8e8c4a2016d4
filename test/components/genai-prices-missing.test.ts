// Without the optional @pydantic/genai-prices installed, a genai_prices
// source is left out with a warning naming the install command; the rest of
// plugins.toml (outputs included) still applies.
import { describe, expect, it, vi } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { runComponents } from '../support/component-run.ts';

vi.mock('@pydantic/genai-prices', () => {
  throw new Error("Cannot find package '@pydantic/genai-prices'");
});

describe('the genai_prices source without the package', () => {
  it('warns, prices nothing from it, and records everything else', async () => {
    const components = ['[[components]]', 'kind = "pricing"', '[[components.config.sources]]', 'type = "genai_prices"', ''].join('\n');
    const run = await runComponents(createMemoryRelay(), {
      components,
      script: ({ hooks }) => {
        hooks.emit('on_session_start', { session_id: 's' } as never);
        hooks.emit('on_session_finalize', { session_id: 's' } as never);
      },
    });
    // Once: the activation logged it, then logged it again with the destinations it skipped.
    expect(run.problems.filter((p) => p.includes('pricing.source_unavailable') && p.includes('npm install @pydantic/genai-prices'))).toHaveLength(1);
    expect(run.status.pluginConfig.diagnostics.map((d) => d.code)).toContain('pricing.source_unavailable');
    expect(run.events.length).toBe(2);
  });
});
