/**
 * Whether a new run may start as far as storage goes: its events must be
 * recordable (session logs writable) and its session and tenant under their
 * quotas. Every face that starts runs (POST /v1/run, /mcp) asks here first,
 * so none of them runs with its events lost or fills the disk.
 */
import { HttpError } from './http-errors.ts';
import type { Retention } from './retention.ts';
import type { SessionEventReader } from './session-store.ts';
import type { TenantScope } from './tenancy.ts';

export interface StorageAdmission {
  sessions: Pick<SessionEventReader, 'writeState' | 'health'>;
  retention?: Retention;
}

/**
 * While session logs cannot be written, a run is refused at once rather
 * than run with its events lost; the sink's probe (at most once a second)
 * lets runs in again as soon as a write as large as the failed one fits.
 */
export async function assertStorageWritable(sessions: StorageAdmission['sessions']): Promise<void> {
  if (sessions.writeState === undefined || sessions.writeState().ok) return;
  const state = (await sessions.health?.()) ?? sessions.writeState();
  if (state.ok) return;
  throw new HttpError(
    'STORAGE_UNAVAILABLE',
    `session logs cannot be written (${state.code}), so this run would not be recorded: free disk space or fix the data folder, then retry after the Retry-After seconds`,
    { 'retry-after': '5' },
  );
}

/**
 * Throws 503 `STORAGE_UNAVAILABLE` or 507 `STORAGE_QUOTA` for a new run of
 * `sessionId` (stored form). `guard` wraps the quota look-up, which may ask
 * the database.
 */
export async function admitRunStorage(
  admission: StorageAdmission,
  sessionId: string,
  tenant: TenantScope,
  guard: (call: () => Promise<void>) => Promise<void> = (call) => call(),
): Promise<void> {
  await assertStorageWritable(admission.sessions);
  const { retention } = admission;
  // A tenant's sessions share its prefix (tenant.inner of an empty id); without tenants every session counts.
  if (retention !== undefined) await guard(() => retention.admit(sessionId, tenant.name === undefined ? '' : tenant.inner('', 'sessionId')));
}

/** A face's `admit` and `ran` for the runs of one tenant (the options of `createPtcMcpServer`). */
export function runStorageHooks(admission: StorageAdmission, tenant: TenantScope): { admit(sessionId: string): Promise<void>; ran(sessionId: string): void } {
  return {
    admit: (sessionId) => admitRunStorage(admission, sessionId, tenant),
    ran: (sessionId) => admission.retention?.ran(sessionId),
  };
}
