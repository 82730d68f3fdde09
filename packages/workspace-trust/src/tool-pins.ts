import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { withFileLock } from './file-lock.js';
import { trustItemDigest } from './trust-items.js';

/** A tool as a server describes it: what the model reads and what decides how it is gated. */
export interface PinnableTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
  /** Hints such as `readOnlyHint` (a flip may widen what runs without asking). */
  annotations?: unknown;
}

/**
 * How a tool stands against its pin: `pinned` (as first seen), `first` (the server was never
 * seen: everything it offers is recorded as it is), `new` (the server was seen, this tool was
 * not), `changed` (same name, another description, schema or annotations).
 */
export type PinStatus = 'pinned' | 'first' | 'new' | 'changed';

interface PinnedTool {
  digest: string;
  description: string;
}

interface PinsFile {
  version: 1;
  servers: Record<string, { tools: Record<string, PinnedTool> }>;
}

/** The digest of what a tool shows the model and how it asks to be gated. */
export function toolPinDigest(tool: PinnableTool): string {
  return trustItemDigest({
    kind: 'tool',
    key: tool.name,
    value: {
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: tool.annotations,
    },
  });
}

/**
 * The tools each server offered when first used, so a server that later changes a tool's
 * description or schema, or adds one (a "rug pull"), is noticed before the model sees it. Kept in
 * one JSON file (mode 0600). Detecting a description that tries to steer the model ("tool
 * poisoning") is not attempted: only change is.
 */
export class ToolPins {
  readonly path: string;
  #servers = new Map<string, Map<string, PinnedTool>>();

  private constructor(path: string) {
    this.path = path;
  }

  /** Reads the pins at `path` (missing, unreadable or another user's: empty). */
  static async open(path: string): Promise<ToolPins> {
    const pins = new ToolPins(resolve(path));
    await pins.#load();
    return pins;
  }

  async #load(): Promise<void> {
    this.#servers.clear();
    let data: Partial<PinsFile>;
    try {
      const info = await stat(this.path);
      const uid = process.getuid?.();
      if ((uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) return;
      data = JSON.parse(await readFile(this.path, 'utf8')) as Partial<PinsFile>;
    } catch {
      return;
    }
    for (const [server, entry] of Object.entries(data.servers ?? {})) {
      const tools = new Map<string, PinnedTool>();
      for (const [name, pinned] of Object.entries(entry?.tools ?? {}))
        if (typeof pinned?.digest === 'string')
          tools.set(name, { digest: pinned.digest, description: String(pinned.description ?? '') });
      this.#servers.set(server, tools);
    }
  }

  /** Whether `server` was ever recorded. */
  knows(server: string): boolean {
    return this.#servers.has(server);
  }

  /** How `tool` of `server` stands against what was recorded. */
  status(server: string, tool: PinnableTool): PinStatus {
    const tools = this.#servers.get(server);
    if (tools === undefined) return 'first';
    const pinned = tools.get(tool.name);
    if (pinned === undefined) return 'new';
    return pinned.digest === toolPinDigest(tool) ? 'pinned' : 'changed';
  }

  /** The recorded description of a tool, for showing what changed. */
  pinnedDescription(server: string, name: string): string | undefined {
    return this.#servers.get(server)?.get(name)?.description;
  }

  /**
   * Records `tools` as the server's approved tools (added to, or replacing, what it had). Holds
   * the file's lock: two CLIs recording at once lost one server's pins, and a server without pins
   * is a first use — whatever it shows next is taken as it is (the rug pull goes unseen).
   */
  async record(server: string, tools: readonly PinnableTool[]): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    await withFileLock(this.path, () => this.#record(server, tools));
  }

  async #record(server: string, tools: readonly PinnableTool[]): Promise<void> {
    await this.#load();
    const pinned = this.#servers.get(server) ?? new Map<string, PinnedTool>();
    for (const tool of tools)
      pinned.set(tool.name, { digest: toolPinDigest(tool), description: tool.description ?? '' });
    this.#servers.set(server, pinned);
    // Entries, not assignment: a server named `__proto__` would become the prototype and vanish
    // from the file — its next start a first use, whatever its tools then say.
    const servers = Object.fromEntries(
      [...this.#servers].map(([name, entries]) => [name, { tools: Object.fromEntries(entries) }]),
    );
    const data: PinsFile = { version: 1, servers };
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const staging = `${this.path}.${process.pid}.tmp`;
    try {
      await writeFile(staging, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      await rename(staging, this.path);
    } catch (error) {
      await rm(staging, { force: true });
      throw error;
    }
  }
}
