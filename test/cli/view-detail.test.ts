// The detail pane's content, as data (the browser test checks how it looks):
// messages by role from each provider's request and response shapes, tool
// calls with parsed arguments, usage and timings that stay readable below a
// millisecond.
import { describe, expect, it } from 'vitest';
import { detailOf, isoMicros, preciseDuration } from '../../src/cli/view/detail.ts';
import { node, type ViewNode } from '../../src/cli/view/model.ts';
import { treeFromAtif } from '../../src/cli/view/from-atif.ts';
import { renderText } from '../../src/cli/view/text.ts';
import { PLAIN as plainStyle } from '../../src/cli/io.ts';

const section = (detail: ReturnType<typeof detailOf>, title: string) => detail.sections.find((candidate) => candidate.title === title);

describe('the detail of a view node', () => {
  it('an ATOF LLM call: OpenAI messages in, the answer and its tool calls (arguments parsed) out', () => {
    const llm = node('llm', 'LLM openai', { startUs: 1_000_000, endUs: 1_000_350, tokens: { prompt: 10, completion: 2, cached: 0 } });
    llm.source = {
      start: { name: 'openai', category: 'llm', uuid: 'u', data: { content: { messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:' } }] }] } } },
      end: { name: 'openai', data: { choices: [{ message: { role: 'assistant', content: 'ok', tool_calls: [{ id: 'c1', function: { name: 'ls', arguments: '{"path":"."}' } }] } }] } },
    };
    const detail = detailOf(llm);
    expect(section(detail, 'Input')).toEqual({
      title: 'Input',
      type: 'messages',
      messages: [
        { role: 'system', text: 'be brief' },
        { role: 'user', text: 'hi', parts: [{ type: 'image_url', image_url: { url: 'data:' } }] },
      ],
    });
    expect(section(detail, 'Output')).toEqual({ title: 'Output', type: 'messages', messages: [{ role: 'assistant', text: 'ok', toolCalls: [{ name: 'ls', id: 'c1', arguments: { path: '.' } }] }] });
    expect(section(detail, 'Usage')).toMatchObject({ facts: [['prompt tokens', '10'], ['completion tokens', '2'], ['cached tokens', '0']] });
    expect(section(detail, 'Timing')).toMatchObject({ facts: [['start', '1970-01-01T00:00:01.000000Z'], ['end', '1970-01-01T00:00:01.000350Z'], ['duration', '350µs']] });
  });

  it('Anthropic and Gemini shapes: system prompt, tool_use parts, candidates', () => {
    const anthropic = node('llm', 'LLM anthropic');
    anthropic.source = {
      start: { data: { content: { system: 'rules', messages: [{ role: 'user', content: 'go' }] } } },
      end: { data: { role: 'assistant', content: [{ type: 'text', text: 'reading' }, { type: 'tool_use', id: 't1', name: 'read', input: { f: 1 } }] } },
    };
    const a = detailOf(anthropic);
    expect(section(a, 'Input')).toMatchObject({ messages: [{ role: 'system', text: 'rules' }, { role: 'user', text: 'go' }] });
    expect(section(a, 'Output')).toMatchObject({ messages: [{ role: 'assistant', text: 'reading', toolCalls: [{ name: 'read', id: 't1', arguments: { f: 1 } }] }] });
    const gemini = node('llm', 'LLM gemini');
    gemini.source = { start: { data: { content: { contents: [{ role: 'user', parts: [{ text: 'q' }] }] } } }, end: { data: { candidates: [{ content: { role: 'model', parts: [{ text: 'a' }] } }] } } };
    const g = detailOf(gemini);
    expect(section(g, 'Input')).toMatchObject({ messages: [{ role: 'user', text: 'q' }] });
    expect(section(g, 'Output')).toMatchObject({ messages: [{ role: 'model', text: 'a' }] });
  });

  it('an ATIF tool call: arguments and result, and a call that never ended says so', () => {
    const tool = node('tool', 'tool ls');
    tool.source = { call: { tool_call_id: 'c1', function_name: 'ls', arguments: { path: '.' } }, result: { source_call_id: 'c1', content: 'a\nb' }, timing: {} };
    const detail = detailOf(tool);
    expect(section(detail, 'Arguments')).toEqual({ title: 'Arguments', type: 'json', value: { path: '.' } });
    expect(section(detail, 'Result')).toEqual({ title: 'Result', type: 'text', text: 'a\nb' });
    const open = node('tool', 'tool ls');
    open.source = { start: { data: { path: '.' } } };
    expect(section(detailOf(open), 'Result')).toEqual({ title: 'Result', type: 'text', text: '(no end event: the call never finished)' });
  });

  it('cuts a single huge value and says how much is left out', () => {
    const tool = node('tool', 'tool cat');
    tool.source = { call: { arguments: {} }, result: { content: 'x'.repeat(250_000) } };
    const result = section(detailOf(tool), 'Result') as { text: string };
    expect(result.text.startsWith('x'.repeat(200_000))).toBe(true);
    expect(result.text.endsWith('… (50000 more characters not shown)')).toBe(true);
  });

  it('keeps durations readable below a millisecond, and microseconds in timestamps', () => {
    expect(preciseDuration(0.42)).toBe('0.42µs');
    expect(preciseDuration(350)).toBe('350µs');
    expect(preciseDuration(1250)).toBe('1.250ms');
    expect(isoMicros(1_700_000_000_123_456)).toBe('2023-11-14T22:13:20.123456Z');
    const rounded = node('tool', 't', { startUs: 5_000, endUs: 5_000 });
    expect(section(detailOf(rounded), 'Timing')).toMatchObject({ facts: [['start', expect.any(String)], ['end', expect.any(String)], ['duration', 'under 1ms (the stamps are rounded to milliseconds)']] });
  });
});

describe('durations from an ATIF file', () => {
  // ATIF keeps an invocation's start and end as epoch seconds to three decimals, its steps' timestamps to the microsecond.
  const trajectory = {
    schema_version: 'ATIF-v1.7',
    session_id: 's1',
    agent: { name: 'a', version: '1', model_name: 'm' },
    steps: [
      { step_id: 1, source: 'user', message: 'Hi', timestamp: '2026-12-04T05:10:30.106434+00:00' },
      {
        step_id: 2,
        source: 'agent',
        message: 'Hello!',
        timestamp: '2026-12-04T05:10:30.106875+00:00',
        extra: { invocation: { start_timestamp: 1796361030.106, end_timestamp: 1796361030.106, status: 'completed' } },
      },
    ],
  };

  it('says a call between two equal millisecond stamps took under a millisecond, in the terminal as in the page', () => {
    const text = renderText(treeFromAtif(trajectory), plainStyle);
    expect(text).toMatch(/LLM {2}<1ms {2}Hello!/);
    expect(text).not.toContain('0µs');
  });

  it('times a step without an invocation from the steps\' own stamps, to the microsecond', () => {
    // No span from the writer: the call took from the step before it to its own timestamp, 441 µs here (Date.parse would make it 0).
    const steps = trajectory.steps.map((step) => ({ ...step, extra: undefined }));
    const text = renderText(treeFromAtif({ ...trajectory, steps }), plainStyle);
    expect(text).toMatch(/LLM {2}441µs {2}Hello!/);
  });
});

describe('a failed tool call', () => {
  // The adapters record what a throwing tool answered as `Type: message`; the trajectory keeps the type beside it.
  const trajectory = (content: string) => ({
    schema_version: 'ATIF-v1.7',
    session_id: 's1',
    agent: { name: 'a', version: '1', model_name: 'm' },
    steps: [
      { step_id: 1, source: 'user', message: 'Hi' },
      {
        step_id: 2,
        source: 'agent',
        message: '',
        tool_calls: [{ tool_call_id: 'call_1', function_name: 'fetch_page', arguments: { url: 'x' } }],
        observation: { results: [{ source_call_id: 'call_1', content, extra: { metadata: { 'otel.status_code': 'ERROR', 'error.type': 'TimeoutError' } } }] },
      },
    ],
  });
  const toolError = (content: string) => {
    const found: string[] = [];
    const walk = (at: ViewNode) => {
      if (at.kind === 'tool' && at.error !== undefined) found.push(at.error);
      at.children.forEach(walk);
    };
    walk(treeFromAtif(trajectory(content)));
    return found;
  };

  it('names the error type once, whether or not the answer starts with it', () => {
    expect(toolError('TimeoutError: the page took too long')).toEqual(['TimeoutError: the page took too long']);
    expect(toolError('the page took too long')).toEqual(['TimeoutError: the page took too long']);
  });
});
