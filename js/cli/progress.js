// @ts-check
// A one-line progress bar on stderr, redrawn at most 10 times a second.
// Shown when stderr is a terminal, or when --progress asks for it.

const REDRAW_MS = 100;
const BAR_WIDTH = 24;
// Room left for phase, percentage, sizes, item count and rate.
const TEXT_WIDTH = 70;

export class Progress {
  /**
   * @param {{ enabled: boolean, stream?: NodeJS.WriteStream }} options
   */
  constructor({ enabled, stream = process.stderr }) {
    this.enabled = enabled;
    this.stream = stream;
    this.lastDraw = 0;
    this.drawn = false;
    this.phase = '';
    this.total = undefined;
    this.started = 0;
    this.note = null;
    this.lastBytes = 0;
    this.lastItems = 0;
  }

  /** Start a phase ("counting", "adding") over `total` bytes (undefined when unknown). */
  start(phase, total) {
    this.phase = phase.padEnd(8);
    this.total = total;
    this.started = Date.now();
    this.lastDraw = 0;
    this.note = null;
  }

  /**
   * Show what the phase is busy with ("sorting run 3") until the next note,
   * drawn at once: the work it announces may block the next update.
   */
  setNote(note) {
    this.note = note;
    if (!this.enabled) return;
    const now = Date.now();
    this.lastDraw = now;
    this.#draw(this.lastBytes, this.lastItems, now);
  }

  /** Report progress; cheap enough to call once per input chunk. */
  update(bytes, items) {
    if (!this.enabled) return;
    this.lastBytes = bytes;
    this.lastItems = items;
    const now = Date.now();
    if (now - this.lastDraw < REDRAW_MS) return;
    this.lastDraw = now;
    this.#draw(bytes, items, now);
  }

  /** Erase the bar so the next message starts on a clean line. */
  clear() {
    if (!this.enabled || !this.drawn) return;
    this.stream.write(this.stream.isTTY ? '\r\x1b[K' : '\n');
    this.drawn = false;
  }

  #draw(bytes, items, now) {
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const phase = this.note ? `${this.phase.trimEnd()} (${this.note})` : this.phase;
    const width = (this.stream.columns || 80) - 1;
    const rate = `${formatBytes(bytes / seconds)}/s`;
    const count = `${formatCount(items)} items`;
    let line;
    if (this.total > 0) {
      const fraction = Math.min(1, bytes / this.total);
      const percent = `${(fraction * 100).toFixed(1)}%`.padStart(6);
      const text = `${percent}  ${formatBytes(bytes)}/${formatBytes(this.total)}  ${count}  ${rate}`;
      // Fixed for the whole run, so the bar does not jitter as numbers grow.
      const barWidth = Math.max(8, Math.min(BAR_WIDTH, width - TEXT_WIDTH));
      const filled = Math.round(fraction * barWidth);
      line = `${phase} [${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]${text}`;
    } else {
      line = `${phase}  ${formatBytes(bytes)}  ${count}  ${rate}`;
    }
    this.stream.write(`\r${line.slice(0, width)}${this.stream.isTTY ? '\x1b[K' : ''}`);
    this.drawn = true;
  }
}

export function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

/** 1,234,567. A 64-bit count past 2^53 - 1 arrives as a BigInt: printed exactly, never a TypeError. */
export function formatCount(value) {
  if (typeof value === 'bigint') return value.toLocaleString('en-US');
  return Math.round(value).toLocaleString('en-US');
}
