import type { ProviderName } from './args.js';

/** The variables that hold each provider's API key, the first one named in messages. */
export const apiKeyVariables: Record<ProviderName, readonly string[]> = {
  anthropic: ['ANTHROPIC_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  google: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
};

/** The variables that hold a provider's API key, by provider id (`openai-compatible` and the like are OpenAI's). */
export function apiKeyVariablesOf(providerId: string): readonly string[] {
  if (Object.hasOwn(apiKeyVariables, providerId))
    return apiKeyVariables[providerId as ProviderName];
  return providerId.startsWith('openai') ? apiKeyVariables.openai : [];
}
