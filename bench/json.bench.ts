/**
 * Lossless JSON and validation on the per-call hot path: snapshotJson +
 * deepFreeze + validate of a small object, as the registry does for each
 * tool value. Prints medians in ns (wall and CPU); asserts nothing.
 */
import { deepFreeze, snapshotFrozenJson, snapshotJson } from '../src/json.ts';
import { compileValueSpec } from '../src/schema/compile.ts';
import { createValidator } from '../src/schema/validate.ts';
import { median, type BenchSection } from './section.ts';

const SMALL = { path: 'src/index.ts', offset: 0, lines: [{ number: 1, text: 'export {}' }], totalLines: 1 };

const schema = compileValueSpec({
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', required: true },
    offset: { type: 'integer', required: true },
    lines: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { number: { type: 'integer', required: true }, text: { type: 'string', required: true } },
      },
    },
    totalLines: { type: 'integer', required: true },
  },
});

/** Median ns per call of `step` over `batches` batches of `perBatch` calls: wall clock and CPU time. */
function timeSync(step: () => unknown, batches = 31, perBatch = 20_000): { wall: number; cpu: number } {
  for (let i = 0; i < perBatch; i++) step();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let b = 0; b < batches; b++) {
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) step();
    wall.push(Number(process.hrtime.bigint() - start) / perBatch);
    const used = process.cpuUsage(cpuStart);
    cpu.push(((used.user + used.system) * 1000) / perBatch);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

export async function benchJson(): Promise<void> {
  const validator = createValidator(schema);
  if (validator.validate(SMALL, 'value').length > 0) throw new Error('bench value does not match its schema');
  const rows: [string, () => unknown][] = [
    ['snapshotJson', () => snapshotJson(SMALL)],
    ['deepFreeze(snapshotJson)', () => deepFreeze(snapshotJson(SMALL))],
    ['snapshotFrozenJson (one pass)', () => snapshotFrozenJson(SMALL)],
    ['validate (ajv)', () => validator.validate(SMALL, 'value')],
    [
      'snapshotJson + validate + deepFreeze',
      () => {
        const copy = snapshotJson(SMALL);
        validator.validate(copy, 'value');
        return deepFreeze(copy);
      },
    ],
    [
      'snapshotFrozenJson + validate',
      () => {
        const copy = snapshotFrozenJson(SMALL);
        validator.validate(copy, 'value');
        return copy;
      },
    ],
    ['JSON.parse(JSON.stringify) (reference)', () => JSON.parse(JSON.stringify(SMALL)) as unknown],
  ];
  for (const [name, step] of rows) {
    const { wall, cpu } = timeSync(step);
    console.log(`${name.padEnd(40)} median ${wall.toFixed(0).padStart(6)} ns wall, ${cpu.toFixed(0).padStart(6)} ns CPU`);
  }
}

export const section: BenchSection = {
  name: 'json',
  description: 'snapshotJson + validate + deepFreeze of a small tool value (ns per call)',
  run: benchJson,
};

if (import.meta.url === `file://${process.argv[1]}`) await benchJson();
