/**
 * What the guest finds in scope without making it: the parameters of
 * `installGuest` (bootstrap.ts), and `JSON_VIOLATIONS`, the words of
 * src/json-violations.ts that sandbox/guest-source.ts puts around it.
 *
 * Declared here so that each file of the guest type-checks on its own. At run
 * time there is no module: the files are one function body, these names are
 * that function's parameters, and this file holds nothing to run.
 */

import type { JSON_VIOLATIONS as JsonViolations } from '../../src/json-violations.ts';

/** An isolated-vm Reference to a host function, as the guest may call it. */
export interface HostRef {
  apply(receiver: undefined, args: unknown[], options?: object): Promise<unknown>;
  applyIgnored(receiver: undefined, args: unknown[]): void;
}

export declare const submitRef: HostRef;
export declare const logRef: HostRef;
export declare const timerRef: HostRef;
export declare const clearTimerRef: HostRef;
export declare const failRef: HostRef;
/** JSON of `{ reserved, removed }`: the globals to install read-only, and those to delete (sandbox/reserved-names.ts). */
export declare const namesJson: string;
/** JSON of the crossing's wire (sandbox/crossing/protocol.ts) and the guest's tuning. */
export declare const wireJson: string;
export declare const JSON_VIOLATIONS: typeof JsonViolations;
