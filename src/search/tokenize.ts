/**
 * Words of tool names, descriptions and queries for the lexical ranker. Tool
 * names are identifiers (`github__create_issue`, `listPullRequests`,
 * `send-mail`), so they are split on `_`, `__`, `-` and camelCase humps as
 * well as on anything that is not a letter or digit. Terms are lowercased and
 * lightly stemmed, so "issues", "listing" and "created" meet "issue", "list"
 * and "create".
 */

/** Words too common in tool descriptions and questions to tell tools apart. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be by can do does for from get give has have how i in into is it its me my of on or ' +
    'should that the their them then there these this to use used using want was what when where which who will with you your'
  ).split(' '),
);

/** Longest term kept: a hostile 1 MB "word" costs nothing past it. */
const MAX_TERM_LENGTH = 40;

/** Splits text into raw words: camelCase humps, digits runs and letter runs. */
export function splitWords(text: string): string[] {
  return (
    text
      // fooBar → foo Bar; HTTPServer → HTTP Server
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word !== '')
  );
}

/**
 * Abbreviations API names use for words a question spells out (`repos_get`
 * for "get a repository"), after stemming, mapped to the long form (a short
 * form would prefix-match unrelated words: "repo" → "report").
 */
const ABBREVIATIONS: ReadonlyMap<string, string> = new Map([
  ['repo', 'repository'],
  ['org', 'organization'],
  ['organisation', 'organization'],
]);

/** A lowercased, stemmed term, or undefined for a stop word. */
export function normalizeTerm(word: string): string | undefined {
  const lower = word.toLowerCase().slice(0, MAX_TERM_LENGTH);
  if (STOP_WORDS.has(lower)) return undefined;
  const stemmed = stem(lower);
  return ABBREVIATIONS.get(stemmed) ?? stemmed;
}

/** Terms of `text`, in order (duplicates kept: BM25 counts them). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of splitWords(text)) {
    const term = normalizeTerm(word);
    if (term !== undefined) out.push(term);
  }
  return out;
}

/**
 * A small suffix stripper (plural, -ing, -ed, -es): enough for tool
 * catalogues, where the same verb or noun shows up inflected in the name,
 * the description and the question.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (/(ss|us|is)$/.test(w)) return w;
  else if (/(ches|shes|xes|sses)$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 4) w = undouble(w.slice(0, -2));
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** "running" → "runn" → "run"; "filled" keeps "fill" (l is often doubled for real). */
function undouble(w: string): string {
  return /([^aeiouls])\1$/.test(w) ? w.slice(0, -1) : w;
}
