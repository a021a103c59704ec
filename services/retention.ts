/**
 * Retention and quotas of session logs: logs untouched for `maxAgeDays` are
 * removed, and a session or tenant whose logs hold `maxSessionBytes` or
 * `maxTenantBytes` gets 507 `STORAGE_QUOTA` on new runs, so no tenant can fill
 * the disk (or the database) the others share. The check is at admission: a
 * run already going may finish past the quota by what one run may store
 * (`limits.maxRunEventBytes` and its result). Admissions within a couple of
 * seconds share one sum of a tenant's total, until one of its runs ends.
 *
 * Where the bytes are counted is a {@link SessionUsage}: the JSONL files
 * (services/session-usage-jsonl.ts) or PostgreSQL (services/postgres/usage.ts).
 */
import { HttpError } from './http-errors.ts';

export interface RetentionLimits {
  /** Session logs with no event for this many days are removed. Default 30. */
  maxAgeDays: number;
  /** Bytes one session's log may hold before its new runs get 507. Default 256 MiB. */
  maxSessionBytes: number;
  /** Bytes the logs of one tenant (every session, without tenants) may hold before its new runs get 507. Default 4 GiB. */
  maxTenantBytes: number;
}

export const DEFAULT_RETENTION: Readonly<RetentionLimits> = Object.freeze({
  maxAgeDays: 30,
  maxSessionBytes: 256 * 1024 * 1024,
  maxTenantBytes: 4 * 1024 * 1024 * 1024,
});

/** How the bytes of session logs are counted and old logs removed. */
export interface SessionUsage {
  /** Bytes of the session's log now. */
  sessionBytes(sessionId: string): Promise<number>;
  /** Bytes of the logs of every session whose id starts with `prefix` ('' for all). */
  tenantBytes(prefix: string): Promise<number>;
  /** The session's log changed (a run ended): counts it again. */
  touched(sessionId: string): void;
  /** Removes the logs with no event since `cutoff`; resolves with how many. */
  removeOlderThan(cutoff: Date): Promise<number>;
}

export interface Retention {
  readonly limits: Readonly<RetentionLimits>;
  /** Throws 507 `STORAGE_QUOTA` when the session or its tenant (`prefix`) is at its quota. */
  admit(sessionId: string, prefix: string): Promise<void>;
  /** A run of the session ended. */
  ran(sessionId: string): void;
  /** Removes expired logs now; resolves with how many. */
  sweep(): Promise<number>;
  /** Stops the periodic sweep. */
  close(): void;
}

/** Expired logs are looked for this often, ms (and once at start). */
const SWEEP_EVERY_MS = 60 * 60 * 1000;
/** A tenant's total is summed again at most this often, ms: summing reads every session's size. */
const TENANT_TOTAL_MS = 2_000;
export const DAY_MS = 24 * 60 * 60 * 1000;
/** Tenants whose totals are remembered at once. */
const MAX_TENANT_TOTALS = 1_000;

export function createRetention(
  usage: SessionUsage,
  partial: Partial<RetentionLimits> = {},
  onWarning: (message: string, error?: unknown) => void = () => undefined,
): Retention {
  const limits: RetentionLimits = {
    maxAgeDays: partial.maxAgeDays ?? DEFAULT_RETENTION.maxAgeDays,
    maxSessionBytes: partial.maxSessionBytes ?? DEFAULT_RETENTION.maxSessionBytes,
    maxTenantBytes: partial.maxTenantBytes ?? DEFAULT_RETENTION.maxTenantBytes,
  };
  let sweeping: Promise<number> | undefined;
  const sweep = (): Promise<number> =>
    (sweeping ??= usage
      .removeOlderThan(new Date(Date.now() - limits.maxAgeDays * DAY_MS))
      .catch((error: unknown) => {
        onWarning('expired session logs could not be removed; retrying at the next sweep', error);
        return 0;
      })
      .finally(() => (sweeping = undefined)));
  /** prefix → its latest total; one sum in flight per prefix. */
  const totals = new Map<string, { at: number; bytes: Promise<number> }>();
  const tenantBytes = (prefix: string): Promise<number> => {
    const known = totals.get(prefix);
    if (known !== undefined && performance.now() - known.at < TENANT_TOTAL_MS) return known.bytes;
    const bytes = usage.tenantBytes(prefix);
    totals.set(prefix, { at: performance.now(), bytes });
    // A failed sum is not kept: the next run asks again.
    bytes.catch(() => totals.get(prefix)?.bytes === bytes && totals.delete(prefix));
    if (totals.size > MAX_TENANT_TOTALS) totals.delete(totals.keys().next().value as string);
    return bytes;
  };
  const timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
  timer.unref();
  void sweep();

  return {
    limits,
    async admit(sessionId, prefix) {
      const [session, tenant] = await Promise.all([usage.sessionBytes(sessionId), tenantBytes(prefix)]);
      if (session >= limits.maxSessionBytes) {
        throw new HttpError(
          'STORAGE_QUOTA',
          `this session's log holds ${session} bytes, at its quota (retention.maxSessionBytes ${limits.maxSessionBytes}): start a new session, or wait for old logs to expire`,
        );
      }
      if (tenant >= limits.maxTenantBytes) {
        throw new HttpError(
          'STORAGE_QUOTA',
          `your session logs hold ${tenant} bytes, at the quota (retention.maxTenantBytes ${limits.maxTenantBytes}): wait for old logs to expire (retention.maxAgeDays ${limits.maxAgeDays}) or ask for a larger quota`,
        );
      }
    },
    ran(sessionId) {
      usage.touched(sessionId);
      // Its tenant's total grew: the next admission sums it again.
      for (const prefix of totals.keys()) if (sessionId.startsWith(prefix)) totals.delete(prefix);
    },
    sweep,
    close: () => clearInterval(timer),
  };
}
