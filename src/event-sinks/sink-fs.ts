/**
 * The file operations the JSONL sink uses: node's by default. A seam, so
 * tests can inject disk faults (a read-only folder, ENOSPC part-way through
 * a write) without root or a special file system.
 */
import { mkdir, open, unlink } from 'node:fs/promises';

/** The part of node's FileHandle the sink uses. */
export interface SinkFileHandle {
  write(buffer: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
  truncate(length: number): Promise<void>;
  datasync(): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface SinkFs {
  open(path: string, flags: 'a+' | 'r' | 'w'): Promise<SinkFileHandle>;
  mkdir(path: string): Promise<unknown>;
  unlink(path: string): Promise<void>;
}

export const nodeSinkFs: SinkFs = {
  open: (path, flags) => open(path, flags),
  mkdir: (path) => mkdir(path, { recursive: true }),
  unlink: (path) => unlink(path),
};
