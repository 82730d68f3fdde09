import { errorMessage } from '@agent/core';
import { wrapScript } from './script-prelude.js';

// Models write TypeScript when they are shown TypeScript declarations: the script's types are
// stripped (sucrase: a small, pure-JavaScript TypeScript stripper that keeps line numbers) before
// QuickJS, which runs JavaScript only, sees it.

type Transform = (
  code: string,
  options: { transforms: string[]; disableESTransforms: boolean },
) => {
  code: string;
};

let transform: Promise<Transform> | undefined;

function loadTransform(): Promise<Transform> {
  transform ??= import('sucrase')
    .then((sucrase) => sucrase.transform as Transform)
    .catch((error: unknown) => {
      transform = undefined;
      throw error;
    });
  return transform;
}

/** The script as JavaScript the runtime evaluates (an async function called at once), or why it does not parse. */
export async function compileScript(
  script: string,
): Promise<{ ok: true; code: string } | { ok: false; message: string }> {
  const strip = await loadTransform();
  try {
    const { code } = strip(wrapScript(script), {
      transforms: ['typescript'],
      disableESTransforms: true,
    });
    return { ok: true, code };
  } catch (error) {
    return { ok: false, message: `SyntaxError: ${errorMessage(error)}` };
  }
}
