/**
 * The queue in front of a pool of shared workers (search, type-check): jobs
 * take turns by tenant, and within a tenant by run, so one tenant's (or one
 * run's) flood waits behind its own jobs, never in front of everyone's. A
 * job that must go first (one put back after its worker failed) skips the
 * turns.
 *
 * It also decides whether a job may take a free worker: never the last one
 * when every other worker already serves the same run, or (with tenants)
 * the same tenant. So a job that cannot be interrupted and runs until its
 * timeout can hold at most all workers but one: another tenant's or run's
 * job finds a worker without waiting for those timeouts.
 */

/** Whose job it is. */
export interface QueueOwner {
  /** The session the job belongs to. */
  sessionId: string;
  /** The outer call (a run) the job belongs to. */
  runId: string;
}

/** The tenant a stored session id belongs to; undefined when the host has no tenants (then runs alone take turns). */
export type TenantOfSession = (sessionId: string) => string | undefined;

interface Keys {
  tenant: string;
  run: string;
}

export class FairQueue<T> {
  readonly #tenantOf: TenantOfSession | undefined;
  /** Per tenant, per run, the jobs in arrival order; map order is turn order (served ones move to the end). */
  readonly #turns = new Map<string, Map<string, T[]>>();
  readonly #keys = new Map<T, Keys>();
  /** Jobs ahead of every turn. */
  #first: T[] = [];
  /** Workers busy per tenant and per run (`holding`), for the last-worker rule. */
  readonly #busyTenants = new Map<string, number>();
  readonly #busyRuns = new Map<string, number>();
  #anonymous = 0;

  constructor(tenantOf?: TenantOfSession) {
    this.#tenantOf = tenantOf;
  }

  get length(): number {
    return this.#keys.size;
  }

  /** A job without an owner is a run of its own. */
  keysOf(owner: QueueOwner | undefined): Keys {
    if (owner === undefined) return { tenant: '', run: `\0${this.#anonymous++}` };
    return { tenant: this.#tenantOf?.(owner.sessionId) ?? '', run: owner.runId };
  }

  push(job: T, keys: Keys): void {
    this.#keys.set(job, keys);
    let runs = this.#turns.get(keys.tenant);
    if (runs === undefined) this.#turns.set(keys.tenant, (runs = new Map()));
    const jobs = runs.get(keys.run);
    if (jobs === undefined) runs.set(keys.run, [job]);
    else jobs.push(job);
  }

  /** Puts queued-again jobs ahead of every turn, in this order. */
  unshift(jobs: readonly T[], keysOf: (job: T) => Keys): void {
    for (const job of jobs) this.#keys.set(job, keysOf(job));
    this.#first.unshift(...jobs);
  }

  /**
   * The next job in turn that may take one of `free` free workers of a pool
   * of `workers` (see the last-worker rule above); its tenant and run go to
   * the back of their turns. `accept` may refuse a job further (a batch
   * takes only jobs that can share its request).
   */
  shift(workers: number, free: number, accept: (job: T) => boolean = () => true): T | undefined {
    for (const job of this.#first) {
      if (accept(job) && this.#mayStart(this.#keys.get(job)!, workers, free)) {
        this.remove(job);
        return job;
      }
    }
    for (const [tenant, runs] of this.#turns) {
      for (const [run, jobs] of runs) {
        const job = jobs[0];
        if (!accept(job) || !this.#mayStart(this.#keys.get(job)!, workers, free)) continue;
        this.remove(job);
        // To the back of the turns.
        const left = this.#turns.get(tenant);
        if (left !== undefined) {
          this.#turns.delete(tenant);
          this.#turns.set(tenant, left);
          const mine = left.get(run);
          if (mine !== undefined) {
            left.delete(run);
            left.set(run, mine);
          }
        }
        return job;
      }
    }
    return undefined;
  }

  /** Takes `job` out wherever it waits; false when it was not queued. */
  remove(job: T): boolean {
    const keys = this.#keys.get(job);
    if (keys === undefined) return false;
    this.#keys.delete(job);
    const at = this.#first.indexOf(job);
    if (at >= 0) {
      this.#first.splice(at, 1);
      return true;
    }
    const runs = this.#turns.get(keys.tenant)!;
    const jobs = runs.get(keys.run)!;
    jobs.splice(jobs.indexOf(job), 1);
    if (jobs.length === 0) runs.delete(keys.run);
    if (runs.size === 0) this.#turns.delete(keys.tenant);
    return true;
  }

  /** Empties the queue, returning every job. */
  drain(): T[] {
    const all = [...this.#keys.keys()];
    this.#first = [];
    this.#keys.clear();
    this.#turns.clear();
    return all;
  }

  /** Counts a worker as busy (`+1`) or free again (`-1`) for the runs and tenants of the jobs on it. */
  holding(jobs: readonly Keys[], change: 1 | -1): void {
    for (const run of new Set(jobs.map((keys) => keys.run))) count(this.#busyRuns, run, change);
    for (const tenant of new Set(jobs.map((keys) => keys.tenant))) count(this.#busyTenants, tenant, change);
  }

  /** Not the last free worker when every other one serves the same run or tenant; a pool of one has no other to keep. */
  #mayStart(keys: Keys, workers: number, free: number): boolean {
    if (workers <= 1 || free > 1) return true;
    const others = workers - 1;
    if ((this.#busyRuns.get(keys.run) ?? 0) >= others) return false;
    return this.#tenantOf === undefined || (this.#busyTenants.get(keys.tenant) ?? 0) < others;
  }
}

export type { Keys as QueueKeys };

function count(map: Map<string, number>, key: string, change: number): void {
  const next = (map.get(key) ?? 0) + change;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
