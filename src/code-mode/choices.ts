/**
 * The named choices of Code Mode, as values: its own checks read these lists,
 * and the config file's zod schema (services/config-schema.ts) makes its enums
 * of them, from which the config loader and the CLI's `--runtime`/`--mode`
 * choices read, so a new choice is added in one place. Plain arrays, not zod
 * enums: the library's main entry does not load zod.
 */

/** Which tools are directly callable (see `createCodeModeCore`). */
export const CODE_MODE_KINDS = ['code', 'native', 'both'] as const;
export type CodeModeKind = (typeof CODE_MODE_KINDS)[number];

/** Whether programs are type-checked against the typings before they run. */
export const TYPECHECK_MODES = ['off', 'warn', 'enforce'] as const;
export type TypecheckMode = (typeof TYPECHECK_MODES)[number];

/** The built-in sandbox runtimes, by name. */
export const RUNTIME_KINDS = ['in-process', 'process'] as const;
export type RuntimeKind = (typeof RUNTIME_KINDS)[number];

/** `'a', 'b' or 'c'`: a list of choices as an error message names them. */
export function describeChoices(choices: readonly string[]): string {
  const quoted = choices.map((choice) => `'${choice}'`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}
