/**
 * Every relative link in the pages the package ships (README.md and every
 * Markdown file under docs/) resolves both in the repository and in the
 * installed package: its target is a file (or a directory holding files) that
 * `npm pack` puts in the tarball, and a `#fragment` names a heading of the
 * target page (GitHub's anchors). A link to something the package does not
 * ship (examples/, bench/results/, ARCHITECTURE.md, ...) breaks on npm's page
 * and in node_modules, so it must be plain text, not a relative link.
 *
 * The tarball's file list comes from `npm pack --dry-run --json
 * --ignore-scripts` (the scripts only refresh committed generated files).
 *
 * Run: node --test tests/js/package-links.test.mjs (needs npm; no network).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The files `npm pack` would put in the tarball, as POSIX paths from the package root. */
function packedFiles() {
  const result = spawnSync(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts', '--offline', '--loglevel=error'], {
    cwd: ROOT, encoding: 'utf8',
  });
  assert.equal(result.error, undefined, String(result.error));
  assert.equal(result.status, 0, `npm pack --dry-run exited ${result.status}:\n${result.stderr}`);
  const [info] = JSON.parse(result.stdout);
  return new Set(info.files.map((file) => file.path));
}

/** Markdown files under dir, as paths from the root. */
function markdownUnder(dir) {
  const found = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...markdownUnder(path));
    else if (entry.name.endsWith('.md')) found.push(path);
  }
  return found;
}

/** The text outside fenced code blocks and inline code spans (links there are not links). */
function prose(markdown) {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''))
    .replace(/`[^`\n]*`/g, '``');
}

/**
 * The links of a page: inline `[text](target)` and `![alt](target)`, and
 * reference definitions `[label]: target`. Each with its line for messages.
 */
export function linksOf(markdown) {
  const text = prose(markdown);
  const links = [];
  const lineAt = (index) => text.slice(0, index).split('\n').length;
  for (const match of text.matchAll(/!?\[(?:[^\]\n]|\][^(\n])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    links.push({ target: match[1], line: lineAt(match.index) });
  }
  for (const match of text.matchAll(/^ {0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) {
    links.push({ target: match[1], line: lineAt(match.index) });
  }
  return links;
}

/**
 * GitHub's anchor for each heading of a page: the heading's text as rendered
 * (code spans, emphasis and links reduced to their text), lowercased, with
 * punctuation other than '-' and '_' dropped and spaces turned into '-';
 * repeated headings get -1, -2, ...
 */
export function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = match[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '')
      .replace(/(^|\W)_+|_+(?=\W|$)/g, '$1');
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const packed = packedFiles();
const pages = ['README.md', ...markdownUnder('docs')];

describe('links in the shipped pages resolve in the repository and in the tarball', () => {
  it('README.md and every page under docs/ are in the tarball', () => {
    for (const page of pages) assert.ok(packed.has(page), `${page} is not in the npm pack file list`);
    assert.ok(pages.length >= 5, `pages: ${pages.join(', ')}`);
  });

  for (const page of pages) {
    it(page, () => {
      const markdown = readFileSync(join(ROOT, page), 'utf8');
      const problems = [];
      let relativeLinks = 0;
      for (const { target, line } of linksOf(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
        relativeLinks++;
        const where = `${page}:${line}: ${target}`;
        const [pathPart, fragment] = target.split('#', 2);
        let decoded;
        try {
          decoded = decodeURIComponent(pathPart);
        } catch {
          problems.push(`${where}: not a valid URL path`);
          continue;
        }
        const absolute = decoded === '' ? join(ROOT, page) : normalize(join(ROOT, dirname(page), decoded));
        const fromRoot = relative(ROOT, absolute).split(sep).join('/');
        if (fromRoot.startsWith('..')) {
          problems.push(`${where}: points outside the package`);
          continue;
        }
        if (!existsSync(absolute)) {
          problems.push(`${where}: no such file in the repository`);
          continue;
        }
        const isDirectory = statSync(absolute).isDirectory();
        const shipped = isDirectory
          ? [...packed].some((file) => file.startsWith(`${fromRoot.replace(/\/$/, '')}/`))
          : packed.has(fromRoot);
        if (!shipped) {
          problems.push(`${where}: ${fromRoot} is not in the npm package: make it plain text, or ship it (package.json "files")`);
          continue;
        }
        if (fragment !== undefined && fragment !== '' && !isDirectory && absolute.endsWith('.md')) {
          const anchors = anchorsOf(readFileSync(absolute, 'utf8'));
          if (!anchors.has(decodeURIComponent(fragment))) {
            problems.push(`${where}: ${fromRoot} has no heading with the anchor #${fragment}`);
          }
        }
      }
      assert.deepEqual(problems, [], `${problems.length} broken link(s):\n${problems.join('\n')}`);
      if (page === 'README.md') assert.ok(relativeLinks >= 10, `only ${relativeLinks} relative links found in README.md: is the parser broken?`);
    });
  }

  it('the link and anchor readers read what GitHub renders', () => {
    const sample = [
      '# Filters that stay fresh',
      '## Never a wrong "clean": what the client believes',
      '### `bloomgate/inline` and *friends*',
      '## Never a wrong "clean": what the client believes',
      'See [the format](docs/FORMAT.md#x) and ![a picture](docs/images/a.png "title").',
      '`[not](a-link.md)` and',
      '```md',
      '[also not](inside-code.md)',
      '```',
      '[label]: docs/CLI.md',
    ].join('\n');
    assert.deepEqual(linksOf(sample).map((link) => link.target), ['docs/FORMAT.md#x', 'docs/images/a.png', 'docs/CLI.md']);
    assert.deepEqual([...anchorsOf(sample)], [
      'filters-that-stay-fresh',
      'never-a-wrong-clean-what-the-client-believes',
      'bloomgateinline-and-friends',
      'never-a-wrong-clean-what-the-client-believes-1',
    ]);
  });
});
