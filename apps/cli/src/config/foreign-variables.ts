// Variables people set for other tools that mean the same thing under another name: a key or base
// URL in one of them is not read here, and before, nothing said so — `OPENAI_API_BASE` set for
// Ollama sent the run to api.openai.com, Claude Code's `ANTHROPIC_AUTH_TOKEN` gave "No model
// provider configured". Each is named with what agent reads instead; none is read in its place
// (a variable exported for another tool is not the user's word for this one).
import type { ProviderName } from './args.js';
import { editDistance } from './suggest.js';

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

/** The key variables read here, per provider, and the vendor words a look-alike name carries. */
const keyVariables: readonly {
  provider: ProviderName;
  reads: readonly string[];
  vendor: RegExp;
}[] = [
  { provider: 'anthropic', reads: ['ANTHROPIC_API_KEY'], vendor: /ANTHROPIC|CLAUDE/ },
  { provider: 'openai', reads: ['OPENAI_API_KEY'], vendor: /OPEN_?AI/ },
  { provider: 'google', reads: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], vendor: /GEMINI|GOOGLE/ },
];

/**
 * A key set under a name close to ours — `ANTHROPIC_KEY`, `CLAUDE_API_KEY`, `OPENAI_KEY`, the AI
 * SDK's `GOOGLE_GENERATIVE_AI_API_KEY`, `anthropic_api_key`, `ANTHROPIC_API_KY` — is not read
 * (guessing would send a key the user meant for something else), but named, with the line that
 * makes it ours: before, "No model provider configured" said to set what the user believed set.
 * For the refusals only (no key for the provider): with a key, or a server of yours that needs
 * none, another variable is not this run's business.
 */
export function lookAlikeKeyNotes(
  env: Readonly<Record<string, string | undefined>>,
  provider: ProviderName | undefined,
): string[] {
  const notes: string[] = [];
  const listed = new Set(foreignVariables.map((variable) => variable.name));
  for (const [name, value] of Object.entries(env)) {
    if ((value ?? '').trim() === '' || listed.has(name)) continue;
    const upper = name.toUpperCase();
    for (const key of keyVariables) {
      if (provider !== undefined && key.provider !== provider) continue;
      if (key.reads.includes(name) || !key.vendor.test(upper)) continue;
      if (key.reads.some((read) => (env[read] ?? '').trim() !== '')) continue;
      const [ours = ''] = key.reads;
      const close = key.reads.some((read) => editDistance(upper, read) <= 2);
      if (!close && !/(^|_)(API_?)?(KEY|TOKEN)$/.test(upper)) continue;
      notes.push(
        `${name} is set but not read here; agent reads ${ours}: export ${ours}="$${name}"`,
      );
    }
  }
  return notes;
}

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
