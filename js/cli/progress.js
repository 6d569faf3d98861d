// A one-line progress bar on stderr, redrawn at most 10 times a second.
// Shown when stderr is a terminal, or when --progress asks for it.

const REDRAW_MS = 100;

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
  }

  /** Start a phase ("counting", "adding") over `total` bytes (undefined when unknown). */
  start(phase, total) {
    this.phase = phase;
    this.total = total;
    this.started = Date.now();
    this.lastDraw = 0;
  }

  /** Report progress; cheap enough to call once per input chunk. */
  update(bytes, items) {
    if (!this.enabled) return;
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
    const parts = [this.phase.padEnd(8)];
    const width = Math.max(40, Math.min(this.stream.columns || 80, 120));
    const tail = [`${formatCount(items)} items`, `${formatBytes(bytes / seconds)}/s`];
    if (this.total > 0) {
      const fraction = Math.min(1, bytes / this.total);
      tail.unshift(`${(fraction * 100).toFixed(1).padStart(5)}%`, `${formatBytes(bytes)}/${formatBytes(this.total)}`);
      const barWidth = Math.max(10, width - parts[0].length - tail.join('  ').length - 6);
      const filled = Math.round(fraction * barWidth);
      parts.push(`[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]`);
    } else {
      tail.unshift(formatBytes(bytes));
    }
    const line = `${parts.concat(tail).join('  ')}`.slice(0, width - 1);
    this.stream.write(`\r${line}${this.stream.isTTY ? '\x1b[K' : ''}`);
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

export function formatCount(value) {
  return Math.round(value).toLocaleString('en-US');
}
