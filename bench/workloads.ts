/**
 * The data the bench's tools return, shared by the peer bench and the A/B bench: built once per
 * process, the same objects for every executor and every tree.
 */

/** 10,000 objects, about 1 MB of JSON. */
export const BIG = Array.from({ length: 10_000 }, (_, i) => ({
  id: i,
  name: `item-${String(i).padStart(6, '0')}`,
  active: i % 3 === 0,
  score: (i * 7919) % 1000 / 10,
  tags: ['alpha', i % 2 === 0 ? 'even' : 'odd'],
  note: 'lorem ipsum dolor sit amet, consectetur',
}));

/** 50 pages of 100 of those objects. */
export const PAGES = Array.from({ length: 50 }, (_, p) => BIG.slice(p * 100, p * 100 + 100));

/** What a program summing the score of the active rows of every page returns. */
export const SUM_OF_PAGES = PAGES.flat().reduce((sum, row) => sum + (row.active ? row.score : 0), 0);
