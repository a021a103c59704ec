/** Thrown when a schema (DSL or raw) is outside the supported subset (docs/architecture.md, "Schemas"). */
export class SchemaError extends Error {
  override name = 'SchemaError';
  /** Every violation found, each `path: what is wrong and what to do`. */
  readonly violations: string[];
  constructor(violations: string[], what = 'schema') {
    const count = violations.length === 1 ? '1 violation' : `${violations.length} violations`;
    super(`unsupported ${what} (${count}): ${violations.join('; ')}`);
    this.violations = violations;
  }
}
