/**
 * A program that explodes the type-checker: template-literal types over
 * 10,000 members, related as tuples, so the checker compares the unions member
 * by member (2.5 s to tens of seconds, by machine, and ~600 MB of heap when
 * left alone: tests give it budgets well under that). The issue's
 * own `{k:K,v:1}` variant is discriminated by `k` and checks in about 2 s on
 * TypeScript 5.9; tuples defeat that shortcut.
 */
export const HOSTILE_TYPES =
  "type D='0'|'1'|'2'|'3'|'4'|'5'|'6'|'7'|'8'|'9'; type T4=`${D}${D}${D}${D}`; " +
  'type A={[K in T4]:[K,1]}[T4]; type B={[K in T4]:[K,2]}[T4]; let a!:A; const b:B=a;';

/** The program as the issue gave it; on TypeScript 5.9 `declare` in a function body is itself an error (TS1184). */
export const ISSUE_PROGRAM =
  "type D='0'|'1'|'2'|'3'|'4'|'5'|'6'|'7'|'8'|'9'; type T4=`${D}${D}${D}${D}`; type A={[K in T4]:{k:K,v:1}}[T4]; " +
  'type B={[K in T4]:{k:K,v:1|2}}[T4]; declare const a:A; const b:B=a;';
