// docs/CLI.md and every --help agree: each command `bloomgate --help` lists
// has its own --help and a section of docs/CLI.md, each option of its --help
// is in that section, every other --flag a help text mentions is in the docs,
// and a help text that names another command's option ("serve --static DIR")
// names one that command has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runBatch } from './helpers/cli-batch.mjs';

const DOCS = readFileSync(new URL('../../docs/CLI.md', import.meta.url), 'utf8');

/** `bloomgate ...args` for each args, in one process (helpers/cli-batch.mjs). */
function runMany(argsList) {
  const dir = mkdtempSync(join(tmpdir(), 'bloomgate-cli-docs-'));
  try {
    return runBatch(dir, argsList.map((args) => ({ args })));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The commands of `bloomgate --help`'s usage lines ("  bloomgate build [input|-] ..."). */
function commandsOf(mainHelp) {
  const names = [];
  for (const [, name] of mainHelp.matchAll(/^ {2}bloomgate ([a-z][a-z-]*)\b/gm)) if (!names.includes(name)) names.push(name);
  return names;
}

/** Each `## ` / `### ` heading of the docs with its text, up to the next heading of its level or above. */
function sections(markdown) {
  const lines = markdown.split('\n');
  const heads = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    const match = !fenced && /^(#{2,3}) (.*)$/.exec(line);
    if (match) heads.push({ level: match[1].length, title: match[2], line: i });
  });
  return heads.map((head, i) => {
    const next = heads.slice(i + 1).find((other) => other.level <= head.level);
    return { title: head.title, text: lines.slice(head.line, next ? next.line : lines.length).join('\n') };
  });
}

const word = (name) => new RegExp(`(^|[\\s\`:,(])${name.replace(/-/g, '\\-')}([\\s\`:,)]|$)`);
const FLAG = /(?<![\w-])--[a-z][a-z0-9-]*/g;

/**
 * The options a command's help lists under "Options:" ("  -o, --output FILE  ..."
 * or "  --json  ..."): [{ flag: '--output', short: '-o' }].
 */
function optionsOf(help) {
  const block = /(?:^|\n)Options:\n([\s\S]*?)(?:\n\n|(?![\s\S]))/.exec(help);
  if (!block) return [];
  const options = [];
  for (const line of block[1].split('\n')) {
    const match = /^ {2}(?:(-[a-zA-Z]), )?(--[a-z][a-z0-9-]*)/.exec(line);
    if (match) options.push({ flag: match[2], short: match[1] });
  }
  return options;
}

/** "serve --dir" in a help text where serve has no --dir: [['serve', '--dir'], ...]. */
function unknownReferences(help, optionsByCommand) {
  const names = [...optionsByCommand.keys()].map((c) => c.replace(/-/g, '\\-')).join('|');
  const found = [];
  for (const [, other, flag] of help.matchAll(new RegExp(`\\b(${names})\\s+(--[a-z][a-z0-9-]*)`, 'g'))) {
    if (flag !== '--help' && !optionsByCommand.get(other).some((option) => option.flag === flag)) found.push([other, flag]);
  }
  return found;
}

test('every command and option of --help is in docs/CLI.md, and each help names only real options', () => {
  const [main] = runMany([['--help']]);
  assert.equal(main.status, 0);
  const commands = commandsOf(main.stdout);
  assert.ok(commands.length >= 11 && commands.includes('build') && commands.includes('export-ranges'), commands.join(' '));
  const helps = runMany(commands.map((command) => [command, '--help']));
  const docSections = sections(DOCS);
  const problems = [];
  const optionsByCommand = new Map();
  for (const [i, command] of commands.entries()) {
    const { status, stdout } = helps[i];
    if (status !== 0 || !stdout.startsWith('Usage: bloomgate ')) {
      problems.push(`'bloomgate ${command} --help' does not print its usage (exit ${status})`);
      continue;
    }
    optionsByCommand.set(command, optionsOf(stdout));
  }
  for (const [i, command] of commands.entries()) {
    const help = helps[i].stdout;
    const own = docSections.filter((section) => word(command).test(section.title));
    if (own.length === 0) {
      problems.push(`docs/CLI.md has no section for '${command}' (a heading naming it)`);
      continue;
    }
    const text = own.map((section) => section.text).join('\n');
    for (const { flag, short } of optionsByCommand.get(command) ?? []) {
      if (flag === '--help') continue; // documented once for all: 'bloomgate <command> --help'
      // An option with a short form is documented by either ("bloomgate merge -o out.bgf").
      if (!text.includes(flag) && !(short && new RegExp(`(^|[\\s\`\\[])${short}[\\s\`\\]]`).test(text))) problems.push(`'${command} --help' lists ${flag}; the docs' ${own.map((s) => `"${s.title}"`).join(', ')} do not`);
    }
    for (const [flag] of help.matchAll(FLAG)) {
      if (!DOCS.includes(flag)) problems.push(`'${command} --help' mentions ${flag}, which docs/CLI.md never does`);
    }
  }
  // A help text naming another command's option: that command has it.
  for (const [i, command] of [...commands.entries(), [-1, '(main)']]) {
    const help = i === -1 ? main.stdout : helps[i].stdout;
    for (const [other, flag] of unknownReferences(help, optionsByCommand)) problems.push(`'${command} --help' says '${other} ${flag}', but '${other} --help' has no ${flag}`);
  }
  for (const flag of ['--help', '--version']) if (!DOCS.includes(flag)) problems.push(`docs/CLI.md never mentions ${flag}`);
  assert.deepEqual(problems, []);
});

test('the checks catch what they look for', () => {
  // The parsing above, on a made-up help and docs: a missing option, a missing section, a wrong cross-reference.
  assert.deepEqual(commandsOf('Usage:\n  bloomgate build x\n  bloomgate keys rotate --dir D\n  bloomgate <command> --help\n'), ['build', 'keys']);
  assert.deepEqual(optionsOf('Usage: x\n\nOptions:\n  -o, --output FILE  out\n                     more\n  --json   json\n  -h, --help  this\n\nExit codes:\n  0 ok').map((o) => o.flag), ['--output', '--json', '--help']);
  assert.deepEqual(optionsOf('Options:\n  -q, --quiet  q').map((o) => o.short), ['-q']);
  const parts = sections('# t\n## build\nuse --seed\n### Fuse\n--shards\n## Generations: diff, patch\n```\n## not a heading\n```\n--keep\n');
  assert.deepEqual(parts.map((s) => s.title), ['build', 'Fuse', 'Generations: diff, patch']);
  assert.match(parts[0].text, /--shards/, 'a section holds its subsections');
  assert.ok(word('patch').test('Generations: diff, patch') && !word('patch').test('dispatcher'));
  assert.ok(word('keys').test('keys rotate') && !word('export').test('export-ranges'));
  const options = new Map([['serve', [{ flag: '--static' }]], ['publish', [{ flag: '--dir' }]]]);
  assert.deepEqual(unknownReferences("Add a generation to a site that 'bloomgate\nserve --dir SITE' serves; publish --dir", options), [['serve', '--dir']]);
  assert.deepEqual(unknownReferences("'bloomgate serve --static SITE'", options), []);
});
