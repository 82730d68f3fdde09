/**
 * Building blocks for `prepareArguments`: other agents' argument shapes mapped onto a tool's own
 * before validation, so a model trained on them is understood. Pure; a call that already uses the
 * tool's own names is never changed.
 */

/** What {@link renameArguments} does besides renaming. */
export interface RenameArgumentsOptions {
  /** Their arguments that have no counterpart here and are dropped (e.g. a display-only `status`). */
  drop?: readonly string[];
}

/**
 * A `prepareArguments` that renames their argument names to ours (`{ file_path: 'path' }`). A name
 * is renamed only when ours is absent (the first of several synonyms wins); anything that is not a
 * plain object passes through untouched, for validation to report.
 */
export function renameArguments(
  names: Readonly<Record<string, string>>,
  options: RenameArgumentsOptions = {},
): (raw: unknown) => unknown {
  const drop = options.drop ?? [];
  return (raw) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
    const record = raw as Record<string, unknown>;
    let renamed: Record<string, unknown> | undefined;
    for (const [theirs, ours] of Object.entries(names)) {
      if (
        !Object.hasOwn(record, theirs) ||
        Object.hasOwn(record, ours) ||
        (renamed !== undefined && Object.hasOwn(renamed, ours))
      )
        continue;
      renamed ??= { ...record };
      renamed[ours] = renamed[theirs];
      delete renamed[theirs];
    }
    for (const name of drop) {
      if (!Object.hasOwn(renamed ?? record, name)) continue;
      renamed ??= { ...record };
      delete renamed[name];
    }
    return renamed ?? raw;
  };
}

/** Runs several `prepareArguments` steps in order. */
export function composePrepareArguments(
  ...steps: readonly ((raw: unknown) => unknown)[]
): (raw: unknown) => unknown {
  return (raw) => steps.reduce((value, step) => step(value), raw);
}
