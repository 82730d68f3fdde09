import { type DefinedTool, defineTool, ToolError, type ToolResult } from '@agent/core';
import * as z from 'zod';
import { atomicWrite } from './atomic-write.js';
import {
  errorCode,
  type FileToolOptions,
  fileSystemError,
  workspaceOf,
} from './file-tool-options.js';
import { seedArguments, seedToolNames } from './seed-names.js';
import type { Workspace } from './workspace.js';

/** Options of {@link createWriteFileTool}. */
export type WriteFileToolOptions = FileToolOptions;

/** Arguments of the write_file tool. */
export interface WriteFileArgs {
  path: string;
  content: string;
}

/** `details` of a write_file result. */
export interface WriteFileDetails {
  /** The real path written. */
  path: string;
  created: boolean;
  bytes: number;
}

/** Resource key of a file path: its real path, so every alias of one file serialises. */
export function fileResourceKey(workspace: Workspace, input: string): string {
  return `file:${workspace.resolveSync(input)}`;
}

/**
 * The `write_file` tool: writes a whole file atomically (temp file + rename), creating parent
 * directories and keeping an existing file's mode. Reports whether it created or updated.
 */
export function createWriteFileTool(
  options: WriteFileToolOptions,
): DefinedTool<WriteFileArgs, WriteFileDetails> {
  const workspace = workspaceOf(options);
  return defineTool({
    name: 'write_file',
    aliases: seedToolNames.write_file,
    prepareArguments: seedArguments('write_file'),
    label: 'Write file',
    description:
      'Writes a file with the given content, replacing it if it exists (atomically) and creating parent directories. Prefer edit_file for changes to an existing file.',
    input: z.object({
      path: z.string().min(1).describe('File path, absolute or relative to the working directory.'),
      content: z.string().describe('The whole new content of the file.'),
    }),
    source: 'builtin',
    policy: {
      pathAccess: 'write',
      permission: 'workspace-write',
      resourceKey: (args) => fileResourceKey(workspace, args.path),
    },
    permissionSubjects: (args) => workspace.writeSubjects(args.path, 'write_file', args),
    execute: async (args): Promise<ToolResult<WriteFileDetails>> => {
      const real = await workspace.resolve(args.path, 'write', 'write_file');
      await workspace.checkProtectedWrite(real, 'write_file', args);
      const shown = workspace.display(real);
      let outcome: Awaited<ReturnType<typeof atomicWrite>>;
      try {
        outcome = await atomicWrite(workspace.fs, real, args.content, {
          ...workspace.writeGuard(real, 'write_file'),
        });
      } catch (error) {
        if (ToolError.isInstance(error)) throw error;
        if (errorCode(error) === 'EISDIR') throw new ToolError(`${shown} is a directory`);
        throw fileSystemError(error, 'write', shown, 'write_file');
      }
      const bytes = Buffer.byteLength(args.content);
      return {
        content: [
          {
            type: 'text',
            text: `${outcome.created ? 'Created' : 'Updated'} ${shown} (${bytes} bytes).`,
          },
        ],
        details: { path: real, created: outcome.created, bytes },
      };
    },
  });
}
