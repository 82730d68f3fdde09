/**
 * `use_aws`: Kiro's AWS CLI tool, `{ service_name, operation_name, parameters?, positional_args?,
 * region, profile_name?, label }`, run as one `aws` command line through the bash tool — so the
 * call meets bash's permission subjects (rules such as `use_aws(aws s3api list-*)`), its sandbox
 * (network off unless allowed) and its withheld credentials: this tool never grants the AWS CLI
 * more than a bash command would get. When no `aws` is on the PATH the call fails saying so.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import {
  type AnyAgentTool,
  type DefinedTool,
  defineTool,
  type PermissionSubjectsResult,
  ToolError,
} from '@agent/core';
import * as z from 'zod';

/** Options of {@link createUseAwsTool}. */
export interface UseAwsToolOptions {
  /** The bash tool the command runs through (its sandbox, environment and rules apply). */
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
  return name
    .replace(/^-+/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .replace(/[_\s]+/g, '-')
    .toLowerCase();
}

/**
 * The argument words of the `aws` call, Kiro's order: `--region`, `--profile`, service, operation,
 * positional arguments, then each parameter — an empty string or `true` is a bare flag, `false` its
 * `--no-` form, a string itself, anything else its JSON text.
 */
export function awsArgv(args: UseAwsArgs): string[] {
  const argv = ['--region', args.region];
  if (args.profile_name !== undefined) argv.push('--profile', args.profile_name);
  argv.push(args.service_name, args.operation_name, ...(args.positional_args ?? []));
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
      "with `help` through bash to read its options. Runs like a bash command: bash's sandbox and " +
      'credentials apply.',
    // Kiro's newer name for it.
    aliases: ['aws'],
    input: useAwsInput,
    source: 'builtin',
    policy: { ...bash.policy, permission: 'full-access', minimumPermission: 'read-only' },
    permissionSubjects: (args): PermissionSubjectsResult | Promise<PermissionSubjectsResult> =>
      bash.permissionSubjects?.(bashArgs(args)) ?? [awsCommandLine(args)],
    execute: async (args, ctx) => {
      const call = bashArgs(args);
      if ((await findAws(searchPath)) === undefined)
        throw new ToolError(
          'The AWS CLI is not installed: no executable "aws" on the PATH. Install it ' +
            '(https://aws.amazon.com/cli/) to use use_aws; nothing was run.',
          { kind: 'failed', toolName: 'use_aws' },
        );
      return bash.execute(call, ctx);
    },
  });
}
