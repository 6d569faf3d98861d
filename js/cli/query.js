// @ts-check
// `bloomgate query`: "maybe" or "no" for each item, from argv or stdin.
// The exit status is the answer for scripts: 0 when every item is "no",
// 1 (QUERY_MAYBE) when any is "maybe"; errors keep their sysexits codes (64+).
import { parseCommandArgs } from './args.js';
import { EXIT, inputError, usageError } from './errors.js';
import { loadFilterFile } from './filter-file.js';
import { COMMAND_HELP } from './help.js';
import { openInput } from './input.js';
import { excerpt, LineSplitter, MAX_LINE_BYTES } from './lines.js';
import { writeOut } from './stdout.js';

/** The exit status of a query that answered "maybe" for at least one item. */
export const QUERY_MAYBE = 1;

const BATCH = 4096;
const MAYBE = Buffer.from('maybe\t');
const NO = Buffer.from('no\t');
const NEWLINE = Buffer.from('\n');
const utf8 = new TextDecoder();

export async function run(argv) {
  const { values, positionals } = parseCommandArgs('query', argv, { json: { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(COMMAND_HELP.query);
    return EXIT.OK;
  }
  if (positionals.length === 0) throw usageError("missing the filter file (see 'bloomgate query --help')");
  const [path, ...items] = positionals;
  const { BloomFilter } = await import('../index.js');
  const filter = await loadFilterFile(BloomFilter, path);
  const writer = new ResultWriter(Boolean(values.json));
  // A reader that stops early (`| head -1`) ends the process from stdout.js with status 0;
  // when an item answered by then was "maybe", the status says so (1).
  const onExit = () => {
    if (writer.anyMaybe && !process.exitCode) process.exitCode = QUERY_MAYBE;
  };
  process.once('exit', onExit);
  try {
    if (items.length > 0) {
      for (let i = 0; i < items.length; i += BATCH) {
        const batch = items.slice(i, i + BATCH);
        await writer.write(batch, filter.mightContainMany(batch));
      }
    } else {
      await queryStdin(filter, writer);
    }
    await writer.end();
  } finally {
    process.removeListener('exit', onExit);
    filter.free();
  }
  return writer.anyMaybe ? QUERY_MAYBE : EXIT.OK;
}

async function queryStdin(filter, writer) {
  const input = /** @type {import('./input.js').InputSource} */ (await openInput('-')); // stdin is never a directory
  let batch = [];
  const splitter = new LineSplitter((buffer, start, end, lineNumber, tooLong) => {
    if (tooLong) throw inputError(`line ${lineNumber}: line is longer than ${MAX_LINE_BYTES} bytes, starting ${excerpt(buffer, start, end, true)}`);
    if (end > start) batch.push(buffer.subarray(start, end));
  });
  // Items are views into the current chunk: answer them before the next one.
  const flush = async () => {
    for (let i = 0; i < batch.length; i += BATCH) {
      const part = batch.length <= BATCH ? batch : batch.slice(i, i + BATCH);
      await writer.write(part, filter.mightContainMany(part));
    }
    batch = [];
  };
  try {
    for await (const chunk of input.chunks()) {
      splitter.push(chunk);
      await flush();
    }
    splitter.end();
    await flush();
  } finally {
    await input.close();
  }
}

/** Text (`maybe<TAB>item`, the item's bytes as given) or a streamed JSON array. */
class ResultWriter {
  constructor(json) {
    this.json = json;
    this.first = true;
    /** Whether any item so far was "maybe" (the exit status). */
    this.anyMaybe = false;
  }

  write(items, results) {
    if (items.length === 0) return undefined;
    if (!this.anyMaybe) {
      for (let i = 0; i < items.length; i++) {
        if (results[i]) {
          this.anyMaybe = true;
          break;
        }
      }
    }
    if (this.json) {
      let text = this.first ? '[' : '';
      for (let i = 0; i < items.length; i++) {
        const item = typeof items[i] === 'string' ? items[i] : utf8.decode(items[i]);
        text += `${this.first ? '\n' : ',\n'}${JSON.stringify({ item, maybe: Boolean(results[i]) })}`;
        this.first = false;
      }
      return writeOut(text);
    }
    const parts = new Array(items.length * 3);
    for (let i = 0, j = 0; i < items.length; i++) {
      parts[j++] = results[i] ? MAYBE : NO;
      parts[j++] = typeof items[i] === 'string' ? Buffer.from(items[i]) : items[i];
      parts[j++] = NEWLINE;
    }
    return writeOut(Buffer.concat(parts));
  }

  end() {
    if (this.json) return writeOut(this.first ? '[]\n' : '\n]\n');
    return undefined;
  }
}
