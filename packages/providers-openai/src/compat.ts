/**
 * What an OpenAI-compatible server accepts. OpenAI itself accepts everything; local and
 * third-party servers differ, and an unsupported field can cost a 400.
 */
export interface OpenAICompat {
  /** Send `strict: true` tools in OpenAI's strict schema dialect. */
  strictTools: boolean;
  /** Send `stream_options: { include_usage: true }` (Chat Completions) to get a usage chunk. */
  streamUsage: boolean;
  /** Send `reasoning_effort` (Chat) / `reasoning` (Responses) from the request's thinking level. */
  reasoningEffort: boolean;
  /** Name of the output-token limit field of Chat Completions. */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Send `store: false` and ask for encrypted reasoning on the Responses API. */
  statelessResponses: boolean;
}

/** Known server families, for {@link compatPresets} and auto-detection. */
export type KnownCompatServer =
  | 'openai'
  | 'ollama'
  | 'vllm'
  | 'llama.cpp'
  | 'lm-studio'
  | 'openrouter'
  | 'groq'
  | 'generic';

const local: OpenAICompat = {
  strictTools: false,
  streamUsage: false,
  reasoningEffort: false,
  maxTokensField: 'max_tokens',
  statelessResponses: false,
};

/** The compat settings of each known server family. */
export const compatPresets: Readonly<Record<KnownCompatServer, Readonly<OpenAICompat>>> = {
  openai: {
    strictTools: true,
    streamUsage: true,
    reasoningEffort: true,
    maxTokensField: 'max_completion_tokens',
    statelessResponses: true,
  },
  ollama: local,
  // vLLM and llama.cpp report usage when asked; neither enforces OpenAI's strict dialect.
  vllm: { ...local, streamUsage: true },
  'llama.cpp': { ...local, streamUsage: true },
  'lm-studio': local,
  openrouter: { ...local, streamUsage: true, reasoningEffort: true },
  groq: { ...local, reasoningEffort: false },
  generic: local,
};

/**
 * Guesses the server family from a base URL: no URL or `api.openai.com` is OpenAI; known hosts
 * (OpenRouter, Groq) and the default ports of local servers (Ollama 11434, LM Studio 1234,
 * llama.cpp 8080, vLLM 8000) are recognised; anything else is `generic` (conservative).
 */
export function detectCompatServer(baseURL: string | undefined): KnownCompatServer {
  if (baseURL === undefined || baseURL === '') return 'openai';
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    return 'generic';
  }
  const host = url.hostname.toLowerCase();
  if (host === 'api.openai.com' || host.endsWith('.openai.azure.com')) return 'openai';
  if (host === 'openrouter.ai' || host.endsWith('.openrouter.ai')) return 'openrouter';
  if (host === 'api.groq.com') return 'groq';
  if (host.includes('ollama')) return 'ollama';
  switch (url.port) {
    case '11434':
      return 'ollama';
    case '1234':
      return 'lm-studio';
    case '8080':
      return 'llama.cpp';
    case '8000':
      return 'vllm';
    default:
      return 'generic';
  }
}

/** The compat settings for a base URL, with explicit overrides applied last. */
export function resolveCompat(
  baseURL: string | undefined,
  overrides: Partial<OpenAICompat> = {},
): OpenAICompat {
  const preset = compatPresets[detectCompatServer(baseURL)];
  const resolved: OpenAICompat = { ...preset };
  for (const key of Object.keys(overrides) as Array<keyof OpenAICompat>) {
    const value = overrides[key];
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  return resolved;
}
