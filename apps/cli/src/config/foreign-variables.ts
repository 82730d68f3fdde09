// Variables people set for other tools that mean the same thing under another name: a key or base
// URL in one of them is not read here, and before, nothing said so — `OPENAI_API_BASE` set for
// Ollama sent the run to api.openai.com, Claude Code's `ANTHROPIC_AUTH_TOKEN` gave "No model
// provider configured". Each is named with what agent reads instead; none is read in its place
// (a variable exported for another tool is not the user's word for this one).
import type { ProviderName } from './args.js';

/** One variable of another tool, and what this CLI reads for the same thing. */
interface ForeignVariable {
  readonly name: string;
  /** The provider it belongs to. */
  readonly provider: ProviderName;
  /** Whose variable it is, said in the note. */
  readonly whose: string;
  /** What to do instead, said after "agent reads …". */
  readonly instead: string;
  /** Applies only when this variable of ours is not set (the user has already done it). */
  readonly unlessSet: string;
}

const foreignVariables: readonly ForeignVariable[] = [
  {
    name: 'OPENAI_API_BASE',
    provider: 'openai',
    whose: 'older OpenAI SDKs and LangChain',
    instead: 'OPENAI_BASE_URL: export OPENAI_BASE_URL="$OPENAI_API_BASE"',
    unlessSet: 'OPENAI_BASE_URL',
  },
  {
    name: 'OPENAI_API_BASE_URL',
    provider: 'openai',
    whose: 'some OpenAI-compatible tools',
    instead: 'OPENAI_BASE_URL: export OPENAI_BASE_URL="$OPENAI_API_BASE_URL"',
    unlessSet: 'OPENAI_BASE_URL',
  },
  {
    name: 'ANTHROPIC_AUTH_TOKEN',
    provider: 'anthropic',
    whose: "Claude Code's bearer token for a gateway",
    instead: 'ANTHROPIC_API_KEY (sent as x-api-key): export ANTHROPIC_API_KEY=…',
    unlessSet: 'ANTHROPIC_API_KEY',
  },
  {
    name: 'AZURE_OPENAI_API_KEY',
    provider: 'openai',
    whose: "Azure OpenAI's SDKs",
    instead:
      'OPENAI_API_KEY; an Azure resource speaks the OpenAI API at its v1 endpoint: --base-url https://<resource>.openai.azure.com/openai/v1 with OPENAI_API_KEY set to the Azure key',
    unlessSet: 'OPENAI_API_KEY',
  },
  {
    name: 'AZURE_OPENAI_ENDPOINT',
    provider: 'openai',
    whose: "Azure OpenAI's SDKs",
    instead: 'OPENAI_BASE_URL or --base-url: the endpoint followed by /openai/v1',
    unlessSet: 'OPENAI_BASE_URL',
  },
];

/**
 * A note line for each variable of another tool that is set (not blank) where its counterpart
 * here is not — for every provider, or only `provider`'s when the run's provider is known.
 */
export function foreignVariableNotes(
  env: Readonly<Record<string, string | undefined>>,
  provider?: ProviderName,
): string[] {
  const notes: string[] = [];
  for (const variable of foreignVariables) {
    if (provider !== undefined && variable.provider !== provider) continue;
    if ((env[variable.name] ?? '').trim() === '') continue;
    if ((env[variable.unlessSet] ?? '').trim() !== '') continue;
    notes.push(
      `${variable.name} is set (${variable.whose}) but not read here; agent reads ${variable.instead}`,
    );
  }
  return notes;
}
