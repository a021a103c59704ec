/**
 * Wording shared by the built-in tools' descriptions, which go into every
 * model prompt: short, and stating the configured limits rather than the defaults.
 */

/** `10 MiB` for a whole number of MiB, else `N bytes`. */
export function byteSize(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}

/** ` Skips .git, node_modules.`, or nothing when no directory is skipped. */
export function skippedDirectories(names: ReadonlySet<string>): string {
  return names.size === 0 ? '' : ` Skips ${[...names].join(', ')}.`;
}
