// Gemini's `generateContent` answer and its `streamGenerateContent?alt=sse` stream, for answers that use Gemini's
// built-in tools (Google Search grounding, URL context, code execution) beside thoughts and function calls. Written
// from the Gemini API reference and from recorded streams of gemini-2.5-flash: the candidate carries
// `groundingMetadata` (the searches, the pages found, which of them each span of the text rests on) and
// `urlContextMetadata`; code execution is an `executableCode` part and its `codeExecutionResult`; `usageMetadata`
// counts the built-in tools' input apart (`toolUsePromptTokenCount`) and the thoughts apart (`thoughtsTokenCount`),
// and `totalTokenCount` adds all of them. Streamed, EVERY chunk carries `usageMetadata` with the counts so far:
// `promptTokenCount`, `cachedContentTokenCount`, `toolUsePromptTokenCount` and `thoughtsTokenCount` (once the
// thinking is done) as they will stay, `candidatesTokenCount` and `totalTokenCount` growing; the last chunk holds the
// finish reason, the grounding metadata and the final counts.
import type { WireReply } from './provider-wire.ts';

export interface GeminiUsage {
  prompt: number;
  candidates: number;
  cached?: number;
  toolUsePrompt?: number;
  thoughts?: number;
}

export type GeminiPart = Record<string, unknown>;

export interface GeminiAnswer {
  id: string;
  /** `modelVersion`. */
  model: string;
  /** In order; a `{ text, thought: true }` part is a thought (sent only under `includeThoughts`). */
  parts: GeminiPart[];
  finish?: string;
  groundingMetadata?: Record<string, unknown>;
  urlContextMetadata?: Record<string, unknown>;
  usage: GeminiUsage;
}

/** `usageMetadata` as the API states it; `candidatesSoFar`: a stream's count so far. */
export function geminiUsageMetadata(usage: GeminiUsage, candidatesSoFar = usage.candidates): Record<string, unknown> {
  const total = usage.prompt + (usage.toolUsePrompt ?? 0) + (usage.thoughts ?? 0) + candidatesSoFar;
  return {
    promptTokenCount: usage.prompt,
    ...(candidatesSoFar > 0 ? { candidatesTokenCount: candidatesSoFar } : {}),
    totalTokenCount: total,
    ...(usage.cached === undefined ? {} : { cachedContentTokenCount: usage.cached }),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.prompt }],
    ...(usage.cached === undefined ? {} : { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: usage.cached }] }),
    ...(usage.toolUsePrompt === undefined ? {} : { toolUsePromptTokenCount: usage.toolUsePrompt, toolUsePromptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.toolUsePrompt }] }),
    ...(usage.thoughts === undefined ? {} : { thoughtsTokenCount: usage.thoughts }),
  };
}

function candidate(answer: GeminiAnswer, parts: GeminiPart[], last: boolean): Record<string, unknown> {
  return {
    content: { parts, role: 'model' },
    ...(last ? { finishReason: answer.finish ?? 'STOP' } : {}),
    index: 0,
    ...(last && answer.groundingMetadata !== undefined ? { groundingMetadata: answer.groundingMetadata } : {}),
    ...(last && answer.urlContextMetadata !== undefined ? { urlContextMetadata: answer.urlContextMetadata } : {}),
  };
}

/** The `generateContent` answer. */
export function geminiJson(answer: GeminiAnswer): WireReply {
  return { json: { candidates: [candidate(answer, answer.parts, true)], usageMetadata: geminiUsageMetadata(answer.usage), modelVersion: answer.model, responseId: answer.id } };
}

/**
 * The `streamGenerateContent?alt=sse` stream: a chunk per part, each with the counts so far (the candidates counted
 * in equal shares over the chunks after the thoughts), the last with the finish reason, the metadata and the final
 * counts.
 */
export function geminiSse(answer: GeminiAnswer): WireReply {
  const answering = answer.parts.filter((part) => part.thought !== true).length;
  let seen = 0;
  const sse = answer.parts.map((part, index) => {
    const last = index === answer.parts.length - 1;
    if (part.thought !== true) seen += 1;
    const soFar = last ? answer.usage.candidates : Math.floor((answer.usage.candidates * seen) / Math.max(answering, 1));
    return { data: { candidates: [candidate(answer, [part], last)], usageMetadata: geminiUsageMetadata(answer.usage, soFar), modelVersion: answer.model, responseId: answer.id } };
  });
  return { sse, headers: { 'content-type': 'text/event-stream' } };
}

/** What Google Search grounding adds to a candidate: the queries it ran, the pages, which text each page supports. */
export function searchGrounding(queries: string[], pages: Array<{ uri: string; title: string }>, supports: Array<{ text: string; startIndex: number; pages: number[] }>): Record<string, unknown> {
  return {
    searchEntryPoint: { renderedContent: '<style>.container{}</style><div class="container">…</div>' },
    groundingChunks: pages.map((page) => ({ web: { uri: page.uri, title: page.title } })),
    groundingSupports: supports.map((support) => ({
      segment: { startIndex: support.startIndex, endIndex: support.startIndex + support.text.length, text: support.text },
      groundingChunkIndices: support.pages,
    })),
    webSearchQueries: queries,
  };
}

// Two answers the AI SDK and LangChain tests of Gemini's own tools both run.

export const GEMINI_MODEL = 'gemini-2.5-flash';
export const GEMINI_PAGE = 'https://weather.example/paris';
export const GEMINI_FOUND = [
  { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQF1', title: 'weather.com' },
  { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQF2', title: 'meteofrance.com' },
];

/** Searched and read the page the prompt named, thought about both, answered with the pages' support. */
export const GROUNDED: GeminiAnswer = {
  id: 'gem-grounded-1',
  model: GEMINI_MODEL,
  parts: [{ text: 'Search the forecast, read the page given.', thought: true }, { text: 'Paris is sunny today, 21°C. ' }, { text: 'The page agrees.' }],
  groundingMetadata: searchGrounding(['Paris weather today', 'Paris forecast'], GEMINI_FOUND, [{ text: 'Paris is sunny today, 21°C.', startIndex: 0, pages: [0, 1] }]),
  urlContextMetadata: { urlMetadata: [{ retrievedUrl: GEMINI_PAGE, urlRetrievalStatus: 'URL_RETRIEVAL_STATUS_SUCCESS' }] },
  usage: { prompt: 52, candidates: 14, cached: 16, toolUsePrompt: 380, thoughts: 71 },
};

/** Ran code that failed, fixed it, ran it again. */
export const COMPUTED: GeminiAnswer = {
  id: 'gem-code-1',
  model: GEMINI_MODEL,
  parts: [
    { text: 'Convert with Python.', thought: true },
    { executableCode: { language: 'PYTHON', code: 'print(c * 9 / 5 + 32)' } },
    { codeExecutionResult: { outcome: 'OUTCOME_FAILED', output: "NameError: name 'c' is not defined" } },
    { executableCode: { language: 'PYTHON', code: 'c = 21\nprint(c * 9 / 5 + 32)' } },
    { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '69.8\n' } },
    { text: '21°C is 69.8°F.' },
  ],
  usage: { prompt: 30, candidates: 60, thoughts: 25 },
};
