/**
 * Numeric limits described once, as JSON Schema: each layer that has limits
 * (Code Mode's, the built-in tools', the event caps) states what each must be
 * here, checks its options against it, and the service's config file builds
 * its keys from the same rules.
 */
import { compileFullSchema, type FullValidate } from './full-validate.ts';

/** One limit's rule: a whole number, at least `minimum` (and at most `maximum`, when set). */
export interface LimitRule {
  type: 'integer';
  minimum: number;
  maximum?: number;
}

/** A complete set of limits (every key required, defaults filled in): what each must be. */
export interface LimitsSchema<Key extends string> {
  type: 'object';
  properties: Readonly<Record<Key, Readonly<LimitRule>>>;
  required: readonly Key[];
}

/** A rule for every key of `defaults`: a whole number of at least 1, unless `rules` says otherwise. */
export function limitsSchema<Key extends string>(defaults: Readonly<Record<Key, number>>, rules: Partial<Record<Key, LimitRule>> = {}): LimitsSchema<Key> {
  const keys = Object.keys(defaults) as Key[];
  const properties = Object.fromEntries(keys.map((key) => [key, rules[key] ?? { type: 'integer', minimum: 1 }])) as Record<Key, LimitRule>;
  return { type: 'object', properties, required: keys };
}

/** A check of complete limits against `schema`, compiled on first use: every problem as `limits.<key>: must be …`. */
export function limitsCheck(schema: LimitsSchema<string>): (limits: object) => string[] {
  let validate: FullValidate | undefined;
  return (limits) => {
    validate ??= compileFullSchema(schema);
    return validate(limits, 'limits');
  };
}
