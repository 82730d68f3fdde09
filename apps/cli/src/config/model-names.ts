// A model as people name it in other tools: `anthropic/claude-sonnet-4-6` (LiteLLM, OpenRouter,
// Vercel's gateway, opencode), or Claude Code's aliases `sonnet`, `opus`, `haiku`. Before, the
// name went as typed to whichever vendor had a key — `openai/gpt-5` to Anthropic when only its key
// was set — and came back as a 404 after the first prompt.
import type { ProviderName } from './args.js';

/** The vendor prefixes of `vendor/model`, and the provider each names. */
const prefixes: Readonly<Record<string, ProviderName>> = {
  anthropic: 'anthropic',
  openai: 'openai',
  google: 'google',
  gemini: 'google',
};

/** Claude Code's model aliases: the newest model of that family. */
const anthropicAliases = ['sonnet', 'opus', 'haiku'];

/** Whether `model` is one of Claude Code's aliases (`sonnet`, `opus`, `haiku`). */
export function isModelAlias(model: string): boolean {
  return anthropicAliases.includes(model.toLowerCase());
}

/** A `--model` read as the user meant it, and the note that says how it was read. */
export interface NamedModel {
  readonly model: string;
  /** The provider the name gave (`anthropic/…`, an alias), when it gave one. */
  readonly provider?: ProviderName;
  readonly note?: string;
}

/**
 * Reads `vendor/model` as provider and model, and `sonnet`/`opus`/`haiku` as the newest
 * Anthropic model of that family (`anthropicIds`, newest first). On a server of the user's (a
 * OpenAI base URL: OpenRouter, LiteLLM) a `vendor/model` name is that server's own and is kept;
 * so is one whose vendor differs from `--provider`.
 */
export function readModelName(
  model: string,
  context: {
    readonly provider: ProviderName | undefined;
    readonly ownServer: boolean;
    /** Anthropic's model ids, newest first (needed only for an alias: {@link isModelAlias}). */
    readonly anthropicIds: readonly string[];
  },
): NamedModel {
  const slash = /^([a-z]+)\/(.+)$/i.exec(model);
  const prefixed = slash === null ? undefined : prefixes[slash[1]?.toLowerCase() ?? ''];
  if (slash !== null && prefixed !== undefined) {
    const rest = slash[2] ?? '';
    // OpenRouter's and LiteLLM's own names are `anthropic/claude-…`: sent there as they are.
    if (context.ownServer && (context.provider ?? 'openai') === 'openai') return { model };
    if (context.provider !== undefined && context.provider !== prefixed) return { model };
    return {
      model: rest,
      provider: prefixed,
      note: `--model ${model} is read as --provider ${prefixed} --model ${rest}`,
    };
  }
  const alias = model.toLowerCase();
  if (anthropicAliases.includes(alias) && (context.provider ?? 'anthropic') === 'anthropic') {
    const newest = context.anthropicIds.find((id) => id.startsWith(`claude-${alias}-`));
    if (newest !== undefined)
      return {
        model: newest,
        provider: 'anthropic',
        note: `--model ${model} is read as ${newest} (the newest ${alias} agent knows; give the full id to choose another)`,
      };
  }
  return { model };
}
