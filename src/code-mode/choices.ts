/**
 * The named choices of Code Mode, as zod enums: its own checks, the config
 * file's schema, the config loader and the CLI's `--runtime`/`--mode` choices
 * all read these, so a new choice is added in one place.
 */
import * as z from 'zod/v4';

/** Which tools are directly callable (see `createCodeModeCore`). */
export const codeModeKindSchema = z.enum(['code', 'native', 'both']);
export const CODE_MODE_KINDS = codeModeKindSchema.options;
export type CodeModeKind = z.infer<typeof codeModeKindSchema>;

/** Whether programs are type-checked against the typings before they run. */
export const typecheckModeSchema = z.enum(['off', 'warn', 'enforce']);
export const TYPECHECK_MODES = typecheckModeSchema.options;
export type TypecheckMode = z.infer<typeof typecheckModeSchema>;

/** The built-in sandbox runtimes, by name. */
export const runtimeKindSchema = z.enum(['in-process', 'process']);
export const RUNTIME_KINDS = runtimeKindSchema.options;
export type RuntimeKind = z.infer<typeof runtimeKindSchema>;

/** `'a', 'b' or 'c'`: a list of choices as an error message names them. */
export function describeChoices(choices: readonly string[]): string {
  const quoted = choices.map((choice) => `'${choice}'`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}
