import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { sourceFilesBelow } from '../test/support/source-files';

/**
 * Comments and test titles cite the project's knowledge as a docs/ page and a numbered section (the
 * pages under docs/design/ and docs/upstream/ number their sections for this), so whoever clones the
 * repository can follow every citation. This spec reads every comment and test title in src/,
 * test/, scripts/ and the config files at the root, and fails on a section sign that does not
 * follow a docs/ page, a page that does not exist, a section the page does not have, and an issue
 * number: the history of a change belongs in git, not beside the code. The pages' own links
 * to each other (README.md and docs/) are held to the same: each names a file that exists and,
 * with `#…`, a heading that page has.
 */
const ROOT = path.resolve(__dirname, '..');
const SCANNED = ['src', 'test', 'scripts'];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SECTION_SIGN = '\u00a7';

/** A docs page cited in a text; each section sign after it refers to the last page before it. */
const PAGE = /docs\/[\w./-]+\.md/g;
const SECTION = new RegExp(`${SECTION_SIGN}\\s?(\\d+(?:\\.\\d+)*)`, 'g');
/** An issue: the word followed by a number, or a bare hash and number (an `owner/repo` link is fine). */
const ISSUE = /\b[Ii]ssues? #?\d+|(?<![\w/.&-])#\d+\b/;
/** The names of the out-of-tree references the citations used to point at. */
const OUTSIDE_REFERENCE =
  /(?<![\w/.-])(?:provider_[abc]|gateway-behaviours|design|style|contract|upstream-fidelity)\.md\b|\b[Cc]ontract "/;

/** The numbered sections of a docs page: `## 6. Title` → `6`, `### 6.1 Title` → `6.1`. */
export function sectionsOf(markdown: string): Set<string> {
  const sections = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/.exec(line);
    if (heading) sections.add(heading[1]);
  }
  return sections;
}

/** What is wrong with the citations of one comment line or test title (empty when nothing). */
export function citationProblems(text: string, sectionsOfPage: (page: string) => Set<string> | undefined): string[] {
  const problems: string[] = [];
  // Inside a code span a hash and a number is data (`response.create #2`), not a reference.
  const issue = ISSUE.exec(text.replace(/`[^`]*`/g, ''));
  if (issue) problems.push(`cites an issue ("${issue[0]}"); say why, and leave the history to git`);
  const outside = OUTSIDE_REFERENCE.exec(text);
  if (outside) problems.push(`cites "${outside[0]}", which is not in the repository; cite a docs/ page`);
  const pages = [...text.matchAll(PAGE)].map((match) => ({ page: match[0], at: match.index }));
  for (const { page } of pages) {
    if (!sectionsOfPage(page)) problems.push(`cites ${page}, which does not exist`);
  }
  for (const section of text.matchAll(SECTION)) {
    const cited = pages.filter(({ at }) => at < section.index).at(-1);
    if (!cited) {
      problems.push(`cites ${section[0]} without naming a docs/ page before it`);
      continue;
    }
    const sections = sectionsOfPage(cited.page);
    if (sections && !sections.has(section[1]))
      problems.push(`cites ${cited.page} ${section[0]}, which has no such section`);
  }
  return problems;
}

/** The text of every comment line and test title of one source file, with its line number. */
export function citingTexts(fileName: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const seen = new Set<number>();
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const addComments = (ranges: readonly ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      text
        .slice(range.pos, range.end)
        .split('\n')
        .forEach((commentLine, index) => found.push({ line: lineOf(range.pos) + index, text: commentLine }));
    }
  };
  const isTestCall = (callee: ts.Expression): boolean => {
    let root = callee;
    while (ts.isPropertyAccessExpression(root) || ts.isCallExpression(root))
      root = ts.isCallExpression(root) ? root.expression : root.expression;
    return ts.isIdentifier(root) && ['describe', 'it', 'test'].includes(root.text);
  };
  const visit = (node: ts.Node) => {
    addComments(ts.getLeadingCommentRanges(text, node.pos));
    addComments(ts.getTrailingCommentRanges(text, node.end));
    if (ts.isCallExpression(node) && isTestCall(node.expression)) {
      const title = node.arguments[0];
      if (title && (ts.isStringLiteralLike(title) || ts.isTemplateExpression(title)))
        found.push({ line: lineOf(title.getStart(source)), text: title.getText(source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The anchors of a Markdown page as GitHub makes them: each heading's text (a link's words, no
 * tags) lower-cased, with everything but letters, digits, `_`, `-` and spaces dropped and spaces
 * made dashes; a repeated heading's anchor gets `-1`, `-2`, …; plus every `<a id|name="…">`.
 * Headings inside code blocks are none.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const named of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(named[1]);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * What is wrong with the relative links of one Markdown page (`page`, relative to the repository):
 * a target that does not exist, or an `#anchor` that is no heading of the Markdown page it names
 * (the page itself for a bare `#anchor`). Links to other sites, and text in code, are not read.
 * `read` gives a file's text (any text for a file that is not Markdown, or a directory), or
 * undefined when there is no such file.
 */
export function linkProblems(page: string, markdown: string, read: (relative: string) => string | undefined): string[] {
  const problems: string[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    for (const link of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = link[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file, anchor] = target.split('#');
      const relative = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      const where = `${page}:${index + 1}: ${target}`;
      const text = read(relative);
      if (text === undefined) problems.push(`${where}: ${relative} does not exist`);
      else if (
        anchor !== undefined &&
        relative.endsWith('.md') &&
        !headingAnchors(text).has(decodeURIComponent(anchor))
      )
        problems.push(`${where}: ${relative} has no heading with the anchor #${anchor}`);
    }
  });
  return problems;
}

const pageCache = new Map<string, Set<string> | undefined>();
function repositoryPage(page: string): Set<string> | undefined {
  if (!pageCache.has(page)) {
    const file = path.join(ROOT, page);
    pageCache.set(page, fs.existsSync(file) ? sectionsOf(fs.readFileSync(file, 'utf8')) : undefined);
  }
  return pageCache.get(page);
}

describe('citations in comments and test titles', () => {
  const page = (sections: string[]) => (name: string) =>
    name === 'docs/a.md' ? new Set(sections) : name === 'docs/b.md' ? new Set(['1']) : undefined;

  it('reads numbered headings as sections, outside code blocks only', () => {
    const markdown = [
      '# Title',
      '## 1. One',
      '### 1.2 Two',
      '#### 12.40 Forty',
      '```',
      '## 9. Code',
      '```',
      '## Plain',
    ];
    expect([...sectionsOf(markdown.join('\n'))]).toEqual(['1', '1.2', '12.40']);
  });

  it('accepts sections of the docs page cited before them, with lists and ranges', () => {
    const text = `see docs/a.md ${SECTION_SIGN}1, ${SECTION_SIGN}1.2 and docs/b.md ${SECTION_SIGN}1 item 4`;
    expect(citationProblems(text, page(['1', '1.2']))).toEqual([]);
  });

  it('refuses a bare section, a missing page, a missing section and an outside reference', () => {
    expect(citationProblems(`(${SECTION_SIGN}3)`, page([]))).toEqual([
      `cites ${SECTION_SIGN}3 without naming a docs/ page before it`,
    ]);
    expect(citationProblems(`docs/c.md ${SECTION_SIGN}1`, page([]))).toEqual(['cites docs/c.md, which does not exist']);
    expect(citationProblems(`docs/a.md ${SECTION_SIGN}2.1`, page(['2']))).toEqual([
      `cites docs/a.md ${SECTION_SIGN}2.1, which has no such section`,
    ]);
    const outside = ['provider_a', 'md'].join('.');
    expect(citationProblems(`the rule of ${outside}`, page([]))).toEqual([
      `cites "${outside}", which is not in the repository; cite a docs/ page`,
    ]);
  });

  it('refuses issue numbers but not another repository’s issue links or code spans', () => {
    expect(citationProblems('fixed in issue 23', page([]))).toEqual([
      'cites an issue ("issue 23"); say why, and leave the history to git',
    ]);
    expect(citationProblems('(#21)', page([]))).toHaveLength(1);
    expect(citationProblems('compression buffers SSE otherwise (nestjs/nest#5762)', page([]))).toEqual([]);
    expect(citationProblems('the second frame (`response.create #2`)', page([]))).toEqual([]);
  });

  it('finds comment lines and the titles of describe, it, test and their .each and .concurrent forms', () => {
    const code = [
      '/** Block one',
      ' * line two */',
      'const a = 1; // trailing',
      "describe('suite', () => {",
      "  it.concurrent('concurrent', () => {});",
      "  it.each([1])('each %s', () => {});",
      '  test(`template`, () => {});',
      '});',
    ].join('\n');
    expect(citingTexts('x.ts', code).map(({ line, text }) => `${line}:${text}`)).toEqual([
      '1:/** Block one',
      '2: * line two */',
      '3:// trailing',
      "4:'suite'",
      "5:'concurrent'",
      "6:'each %s'",
      '7:`template`',
    ]);
  });

  it('holds for every comment and test title in src/, test/, scripts/ and the root config files', () => {
    const rootConfig = fs
      .readdirSync(ROOT, { withFileTypes: true })
      .filter((entry) => entry.isFile() && SOURCE.test(entry.name))
      .map((entry) => path.join(ROOT, entry.name));
    const files = [
      ...SCANNED.flatMap((directory) => sourceFilesBelow(path.join(ROOT, directory), (name) => SOURCE.test(name))),
      ...rootConfig,
    ];
    const problems = files.flatMap((file) =>
      citingTexts(file, fs.readFileSync(file, 'utf8')).flatMap(({ line, text }) =>
        citationProblems(text, repositoryPage).map((problem) => `${path.relative(ROOT, file)}:${line}: ${problem}`),
      ),
    );
    expect(problems).toEqual([]);
  });
});

describe('links between README.md and the docs/ pages', () => {
  it("makes GitHub's anchors: punctuation and code marks dropped, a link's words kept, repeats numbered", () => {
    const markdown = [
      '# Error codes',
      '### `model_not_found`: what the 404 names',
      '## The model list (`GET /v1/models`)',
      '### Per open stream',
      '### Per open stream',
      '## See [chat.md](chat.md) — errors',
      '<a id="custom-anchor"></a>',
      '```',
      '## Not a heading',
      '```',
    ].join('\n');
    expect([...headingAnchors(markdown)].sort()).toEqual(
      [
        'error-codes',
        'model_not_found-what-the-404-names',
        'the-model-list-get-v1models',
        'per-open-stream',
        'per-open-stream-1',
        'see-chatmd--errors',
        'custom-anchor',
      ].sort(),
    );
  });

  it('refuses a missing file and an anchor its page does not have, on this page or another', () => {
    const pages: Record<string, string> = { 'docs/a.md': '# A\n## Per open stream\n' };
    const markdown = [
      'See [one](a.md#per-open-stream), [two](#a), [three](https://example.com/#x) and `[four](a.md#nowhere)`.',
      'Broken: [five](a.md#per-open-stream-issue-24), [six](#nowhere), [seven](missing.md).',
    ].join('\n');
    expect(linkProblems('docs/a.md', markdown, (page) => pages[page])).toEqual([
      'docs/a.md:2: a.md#per-open-stream-issue-24: docs/a.md has no heading with the anchor #per-open-stream-issue-24',
      'docs/a.md:2: #nowhere: docs/a.md has no heading with the anchor #nowhere',
      'docs/a.md:2: missing.md: docs/missing.md does not exist',
    ]);
  });

  it('holds for every relative link of README.md and the pages under docs/', () => {
    const pages = [
      'README.md',
      ...fs
        .readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const read = (relative: string) => {
      const file = path.join(ROOT, relative);
      if (!fs.existsSync(file)) return undefined;
      return relative.endsWith('.md') ? fs.readFileSync(file, 'utf8') : '';
    };
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.flatMap((page) => linkProblems(page, read(page)!, read))).toEqual([]);
  });
});
