/**
 * What vendors say when a request does not fit the model's context window. Checked only on
 * a client error (400, 413) or a mid-stream error, never on a 429: "Request too large for
 * tokens per min" is a rate limit, and waiting — not compacting — is the answer to it.
 */
const overflowPatterns: readonly RegExp[] = [
  // Anthropic: "prompt is too long: 213462 tokens > 200000 maximum"
  /prompt is too long/i,
  // Anthropic: "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000"
  /exceed context limit/i,
  // Amazon Bedrock: "Input is too long for requested model."
  /input is too long/i,
  // OpenAI Responses API: "Your input exceeds the context window of this model."
  /exceeds? the context window/i,
  // OpenAI Chat Completions, vLLM, OpenRouter: "This model's maximum context length is 128000 tokens."
  /maximum context length/i,
  // OpenAI's error code, and servers that copy it.
  /context[_ ]length[_ ]exceeded/i,
  // Gemini: "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."
  // (Bounded: `.*` scanned to the end of the text from every "input token count" in it.)
  /input token count.{0,200}?exceeds the maximum/i,
  // xAI: "This model's maximum prompt length is 131072 but the request contains 537812 tokens."
  /maximum prompt length is \d+/i,
  // Groq: "Please reduce the length of the messages or completion."
  /reduce the length of the messages/i,
  // llama.cpp: "the request exceeds the available context size, try increasing it"
  /exceeds the available context size|exceed_context_size_error/i,
  // LM Studio: "… tokens is greater than the context length …"
  /greater than the context length/i,
];

/**
 * True when a provider's error text says the request was larger than the model's context
 * window. Providers use it (with the status: 400, 413 or a mid-stream error) to set
 * `ProviderError.contextOverflow` where the vendor gives no dedicated code.
 */
export function isContextOverflowText(text: string): boolean {
  return overflowPatterns.some((pattern) => pattern.test(text));
}
