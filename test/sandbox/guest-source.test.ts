/**
 * The guest is several files in the source and one function in the isolate:
 * guestSource joins every file of sandbox/guest/ into installGuest's body,
 * leaving no module syntax, so that each file's top-level names are locals of
 * one install.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Script } from 'node:vm';
import { expect, it } from 'vitest';
import { guestSource } from '../../sandbox/guest-source.ts';

const GUEST_DIR = new URL('../../sandbox/guest/', import.meta.url);

it('is one expression whose value is installGuest, with no import or export left', () => {
  const source = guestSource();
  expect(source).not.toMatch(/^\s*(import|export)\b/m);
  const installGuest = new Script(source).runInNewContext({}) as (...args: unknown[]) => unknown;
  expect(typeof installGuest).toBe('function');
  expect(installGuest.name).toBe('installGuest');
  expect(installGuest.length).toBe(7);
});

it('holds every declaration of every guest file, each inside installGuest', () => {
  const source = guestSource();
  const body = source.slice(source.indexOf("'use strict';"));
  // bootstrap.ts is installGuest itself (above); the others make its body.
  const files = readdirSync(GUEST_DIR).filter((name) => name.endsWith('.ts') && name !== 'bootstrap.ts');
  expect(files.length).toBeGreaterThan(1);
  for (const file of files) {
    const text = readFileSync(new URL(file, GUEST_DIR), 'utf8');
    // The top-level values each file makes (host.ts declares its names and makes none).
    const names = [...text.matchAll(/^(?:export )?(?:const|let|class|function) (\w+)/gm)].map((match) => match[1]);
    for (const name of names) expect(body, `${file}: ${name}`).toMatch(new RegExp(`^(?:const|let|class|function) ${name}\\b`, 'm'));
  }
});
