/**
 * `use_aws`: Kiro's AWS CLI tool, `{ service_name, operation_name, parameters?, positional_args?,
 * region, profile_name?, label }`, run as one `aws` command line (`aws <service> <operation> …
 * --region <r>`) through the session's bash tool as a nested call (`ctx.callTool`): the command
 * meets bash's permission gate exactly as a bash call would (its rules — `bash(aws s3 rm *)` —,
 * hooks and approvals), bash's sandbox (network off unless allowed) and its withheld credentials:
 * this tool never grants the AWS CLI more than a bash command would get. Starting it runs nothing by
 * itself (read-only); rules on `use_aws(aws …)` can still deny or ask. When no `aws` is on the PATH
 * the call fails saying so.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import {
  type AnyAgentTool,
  type DefinedTool,
  defineTool,
  ToolError,
  type ToolResult,
  type ToolResultMessage,
} from '@agent/core';
import * as z from 'zod';

/** Options of {@link createUseAwsTool}. */
export interface UseAwsToolOptions {
  /**
   * The session's bash tool: the command runs as a call of it, through the loop's gate and hooks
   * (so offer use_aws only beside it: without bash, use_aws must not be offered either).
   */
  bash: AnyAgentTool;
  /** Where `aws` is looked for: the PATH bash's commands see [`process.env.PATH`]. */
  searchPath?: string | undefined;
}

/** Arguments of use_aws (Kiro's shape). */
export interface UseAwsArgs {
  service_name: string;
  operation_name: string;
  parameters?: Record<string, unknown> | undefined;
  positional_args?: string[] | undefined;
  region: string;
  profile_name?: string | undefined;
  label?: string | undefined;
}

/** Service, operation, region and profile names: letters, digits, `.`, `_`, `-`, never a leading `-`. */
const cliWord = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'letters, digits, ".", "_" and "-", not starting with "-"',
  );

/** Words bash reads as themselves; anything else is single-quoted. */
const plainWord = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** `value` as one bash word. */
function shellWord(value: string): string {
  return plainWord.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * A parameter name as the AWS CLI spells its option: `TableName`, `table_name` and `--table-name`
 * all become `table-name` (Kiro converts to kebab case the same way).
 */
export function awsOptionName(name: string): string {
  return (
    name
      .replace(/^-+/, '')
      .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
      // One capital looked at per position: `([A-Z]+)([A-Z][a-z])` was quadratic on a run of capitals.
      .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1-')
      .replace(/[_\s]+/g, '-')
      .toLowerCase()
  );
}

/**
 * The argument words of the `aws` call: service, operation, positional arguments, each parameter
 * — an empty string or `true` is a bare flag, `false` its `--no-` form, a string itself, anything
 * else its JSON text —, then `--region` and `--profile` (the AWS CLI takes its global options
 * anywhere; last, so a rule `bash(aws s3 rm *)` sees the service and operation first).
 */
export function awsArgv(args: UseAwsArgs): string[] {
  const argv = [args.service_name, args.operation_name, ...(args.positional_args ?? [])];
  for (const [name, value] of Object.entries(args.parameters ?? {})) {
    const option = awsOptionName(name);
    if (!/^[a-z0-9][a-z0-9-]*$/.test(option))
      throw ToolError.invalidArguments(
        'use_aws',
        `parameter "${name}" is not an AWS CLI option name (letters, digits and "-")`,
      );
    if (value === '' || value === true) argv.push(`--${option}`);
    else if (value === false) argv.push(`--no-${option}`);
    else argv.push(`--${option}`, typeof value === 'string' ? value : JSON.stringify(value));
  }
  argv.push('--region', args.region);
  if (args.profile_name !== undefined) argv.push('--profile', args.profile_name);
  return argv;
}

/** The bash command line of a call. */
export function awsCommandLine(args: UseAwsArgs): string {
  return ['aws', ...awsArgv(args)].map(shellWord).join(' ');
}

/** The first executable `aws` on `searchPath`, or `undefined`. */
async function findAws(searchPath: string | undefined): Promise<string | undefined> {
  for (const directory of (searchPath ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, 'aws');
    const executable = await fs.access(candidate, fs.constants.X_OK).then(
      () => true,
      () => false,
    );
    if (executable) return candidate;
  }
  return undefined;
}

const useAwsInput = z.object({
  service_name: cliWord.describe('The AWS CLI service, e.g. "s3api", "ec2", "dynamodb".'),
  operation_name: cliWord.describe('The operation, e.g. "list-buckets", "describe-instances".'),
  parameters: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'Options by AWS CLI name (kebab case preferred); "" for a flag without value; JSON syntax for structures.',
    ),
  positional_args: z
    .array(z.string())
    .optional()
    .describe('Positional arguments of high-level commands (e.g. the paths of `s3 cp`).'),
  region: cliWord.describe('The AWS region, e.g. "us-west-2".'),
  profile_name: cliWord.optional().describe('A profile from ~/.aws/config [the default one].'),
  label: z.string().optional().describe('What the call does, for the user.'),
});

/** The use_aws tool over a bash tool; see the module comment. */
export function createUseAwsTool(options: UseAwsToolOptions): DefinedTool<UseAwsArgs, unknown> {
  const { bash } = options;
  const searchPath = options.searchPath ?? process.env.PATH;
  const bashArgs = (args: UseAwsArgs): unknown => {
    const call = { command: awsCommandLine(args), description: args.label };
    const validated = bash.validate?.(call) ?? { ok: true as const, value: call };
    if (!validated.ok)
      throw ToolError.invalidArguments(
        'use_aws',
        validated.issues.map((issue) => issue.message).join('; '),
      );
    return validated.value;
  };
  return defineTool({
    name: 'use_aws',
    label: 'AWS CLI',
    description:
      'Calls an AWS API through the AWS CLI (`aws <service> <operation> …`) and returns its output. ' +
      'Arguments follow the AWS CLI specification; on a malformed-command error, run the operation ' +
      'with `help` through bash to read its options. Runs as a bash command: the rules, sandbox and ' +
      'credentials of bash apply.',
    // Kiro's newer name for it.
    aliases: ['aws'],
    input: useAwsInput,
    source: 'builtin',
    // The nested bash call is what runs, and it is gated as a bash call; this one only builds it.
    // Its timeout covers bash's own (the nested call's limit applies inside it).
    policy: {
      permission: 'read-only',
      ...(bash.policy?.timeoutMs === undefined ? {} : { timeoutMs: bash.policy.timeoutMs }),
    },
    permissionSubjects: (args) => [awsCommandLine(args)],
    execute: async (args, ctx): Promise<ToolResult> => {
      const call = bashArgs(args);
      if (ctx.callTool === undefined)
        throw new ToolError(
          'use_aws runs its command as a bash call through the agent loop, and this host gives no ctx.callTool; nothing was run.',
          { toolName: 'use_aws' },
        );
      if ((await findAws(searchPath)) === undefined)
        throw new ToolError(
          'The AWS CLI is not installed: no executable "aws" on the PATH. Install it ' +
            '(https://aws.amazon.com/cli/) to use use_aws; nothing was run.',
          { kind: 'failed', toolName: 'use_aws' },
        );
      const result = await ctx.callTool(bash, call);
      // A denial of the bash call is this call's denial: the model reads why.
      if (result.errorKind === 'denied')
        throw new ToolError(resultText(result), { kind: 'denied', toolName: 'use_aws' });
      return {
        content: result.content,
        ...(result.details === undefined ? {} : { details: result.details }),
        ...(result.isError ? { isError: true } : {}),
      };
    },
  });
}

function resultText(result: ToolResultMessage): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}
