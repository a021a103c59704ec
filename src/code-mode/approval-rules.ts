/**
 * Approval rules: which tools' calls wait for a person, for tools whose definitions the host does
 * not write (MCP servers' tools, imported ones). A definition's own `needsApproval` still applies.
 */
import picomatch from 'picomatch';

/** Calls to tools whose name matches the glob `tools` (picomatch; `github__*`) need approval. */
export interface ApprovalRule {
  tools: string;
  /** `'always'`: every call of a matching tool. */
  when: 'always';
}

/** A test of a tool name against every rule; undefined when there are none (so a run need not look). */
export function compileApprovalRules(rules: readonly ApprovalRule[] | undefined): ((toolName: string) => boolean) | undefined {
  if (rules === undefined || rules.length === 0) return undefined;
  const problems: string[] = [];
  const matchers: ((name: string) => boolean)[] = [];
  rules.forEach((rule, i) => {
    const { tools, when } = (rule ?? {}) as Partial<ApprovalRule>;
    if (typeof tools !== 'string' || tools === '') problems.push(`approvals[${i}].tools: must be a non-empty glob of tool names, such as "github__*"`);
    else matchers.push(picomatch(tools, { dot: true }));
    if (when !== 'always') problems.push(`approvals[${i}].when: must be "always"`);
  });
  if (problems.length > 0) throw new TypeError(`invalid approval rules: ${problems.join('; ')}`);
  return (name) => matchers.some((matches) => matches(name));
}
