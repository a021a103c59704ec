/** The `at` stamp of events. */
/** `new Date().toISOString()`, formatted at most once per millisecond. */
export function isoClock(): () => string {
  let lastMs = -1;
  let lastIso = '';
  return () => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastIso = new Date(now).toISOString();
    }
    return lastIso;
  };
}
