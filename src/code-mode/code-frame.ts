/**
 * A three-line code frame around a line of the model's program, with a caret
 * under the column: what a failure shows so the model can find its mistake.
 */
export function codeFrame(code: string, line: number, column?: number): string {
  const lines = code.split(/\r?\n/);
  if (!(line >= 1 && line <= lines.length)) return '';
  const first = Math.max(1, line - 1);
  const last = Math.min(lines.length, line + 1);
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    const text = lines[n - 1].length > 200 ? `${lines[n - 1].slice(0, 200)}…` : lines[n - 1];
    out.push(`${n === line ? '>' : ' '} ${String(n).padStart(width)} | ${text}`);
    if (n === line && column !== undefined && column >= 1 && column <= 201) {
      out.push(`  ${' '.repeat(width)} | ${lines[n - 1].slice(0, column - 1).replace(/[^\t]/g, ' ')}^`);
    }
  }
  return out.join('\n');
}
