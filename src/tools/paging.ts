/**
 * Render-side paging for glob and grep: the value keeps every collected
 * item; the render shows the first page and says what was left out.
 */
export function renderPage(
  items: readonly string[],
  { pageSize, cap, noun, narrow }: { pageSize: number; cap: number; noun: string; narrow: string },
): string {
  const shown = items.slice(0, pageSize);
  let text = shown.join('\n');
  const rest = items.length - shown.length;
  if (rest > 0) text += `\n… ${rest} more ${noun} not shown; ${narrow} to see them`;
  if (items.length >= cap) {
    text += `\n(collection stopped at the cap of ${cap} ${noun}; there may be more: ${narrow})`;
  }
  return text;
}
