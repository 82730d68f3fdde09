import { terminalSafe } from '@agent/core';
/**
 * MCP tool pinning: a server's tools are recorded the first time it is used; a tool whose
 * description, schema or annotations changed since, or one added since, is left out until the
 * user accepts it (the REPL asks; `-p` says what was left out).
 */
import type { McpToolAdapter } from '@agent/tools-mcp';
import { type PinnableTool, ToolPins } from '@agent/workspace-trust';
import type { McpServerEntry } from './mcp-servers.js';

/** Asks whether a server's changed tools may reach the model; true records them. */
export type McpToolChangeQuestion = (question: {
  server: string;
  lines: string[];
}) => Promise<boolean>;

/** The pins of a session's MCP servers: a tool filter per server, settled after each connects. */
export interface McpPinsSession {
  /** The `toolFilter` for a server: pinned (or first-seen) tools pass; changed and new ones wait. */
  filterFor(server: McpServerEntry): (tool: PinnableTool) => boolean;
  /** After `adapter` connected: records a first-seen server, or asks about / reports changes. */
  settle(
    adapter: McpToolAdapter,
    options: { log: (line: string) => void; confirm?: McpToolChangeQuestion | undefined },
  ): Promise<void>;
}

/** A server is the same server while its name and what it runs (or where it is) stay the same. */
function serverKey(server: McpServerEntry): string {
  const transport = server.transport;
  const where =
    transport.type === 'stdio'
      ? transport.command
      : transport.type === 'http'
        ? String(transport.url)
        : 'custom';
  return `${server.name}\t${where}`;
}

/**
 * A server's text on one line for the notice and the REPL's question: whitespace folded, control
 * characters shown rather than obeyed (the question is written to the terminal as it is, and a
 * description's escape sequences could erase the lines that name a change), cut at `max`.
 */
function shorten(text: string | undefined, max = 120): string {
  const line = terminalSafe((text ?? '').replace(/\s+/g, ' ').trim(), { singleLine: true });
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Opens the pins file at `path` for one session's servers. */
export async function openMcpPins(path: string): Promise<McpPinsSession> {
  const pins = await ToolPins.open(path);
  const keys = new Map<string, string>();
  // The tools each server listed last, by name (the filter sees every listed tool).
  const seen = new Map<string, Map<string, PinnableTool>>();
  const accepted = new Set<string>();
  return {
    filterFor(server) {
      const key = serverKey(server);
      keys.set(server.name, key);
      const listed = new Map<string, PinnableTool>();
      seen.set(server.name, listed);
      return (tool) => {
        listed.set(tool.name, tool);
        if (accepted.has(key)) return true;
        const status = pins.status(key, tool);
        return status === 'pinned' || status === 'first';
      };
    },
    async settle(adapter, { log, confirm }) {
      const key = keys.get(adapter.name);
      const listed = [...(seen.get(adapter.name)?.values() ?? [])];
      if (key === undefined) return;
      if (!pins.knows(key)) {
        await pins
          .record(key, listed)
          .catch((error: Error) => log(`mcp ${adapter.name}: ${error.message}`));
        return;
      }
      const lines: string[] = [];
      for (const tool of listed) {
        const status = pins.status(key, tool);
        if (status === 'changed')
          lines.push(
            `changed tool "${shorten(tool.name, 80)}": was "${shorten(pins.pinnedDescription(key, tool.name))}", now "${shorten(tool.description)}"`,
          );
        else if (status === 'new')
          lines.push(`new tool "${shorten(tool.name, 80)}": "${shorten(tool.description)}"`);
      }
      if (lines.length === 0) return;
      if (confirm !== undefined && (await confirm({ server: adapter.name, lines }))) {
        accepted.add(key);
        await pins.record(key, listed);
        await adapter.refreshTools();
        return;
      }
      log(
        `mcp ${adapter.name}: ${lines.length} tool(s) changed since this server was first used and are left out (an interactive session asks to accept them):`,
      );
      for (const line of lines) log(`  ${line}`);
    },
  };
}
