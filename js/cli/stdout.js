// @ts-check
// Writing results to stdout: with backpressure, and quietly stopping when the
// reader goes away (`bloomgate query f.bgf < list | head`).

/** Exit quietly (status 0) if stdout is closed by the reader. */
export function stdoutClosed() {
  process.stdout.on('error', (/** @type {NodeJS.ErrnoException} */ error) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.stderr.write(`bloomgate: cannot write to stdout: ${error.message.split('\n')[0]} (${error.code || 'E_STDOUT'})\n`);
    process.exit(73);
  });
}

/** Write and wait for the stream to drain when its buffer is full. */
export function writeOut(data, stream = process.stdout) {
  if (stream.write(data)) return undefined;
  return new Promise((resolve) => stream.once('drain', resolve));
}
