/**
 * WebKitGTK (Safari's engine) through WebKitWebDriver under Xvfb, spoken to over plain W3C
 * WebDriver HTTP with fetch (no npm package). Debian: webkit2gtk-driver, xvfb.
 *
 *   const webkit = await startWebKit({ env });
 *   await webkit.open(url);                  // navigate; resolves once the page has loaded
 *   await webkit.run('async (x) => ...', x);  // an async function's source, run in the page
 *   await webkit.close();
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export const WEBKIT_DRIVER = process.env.BG_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const MINIBROWSER = process.env.BG_MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
export const XVFB_RUN = '/usr/bin/xvfb-run';
export const hasWebKit = [WEBKIT_DRIVER, MINIBROWSER, XVFB_RUN].every((path) => existsSync(path));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `env`: extra environment for the driver and the browser it starts (JSC_useWasm=0, say). */
export async function startWebKit({ env = {} } = {}) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const driver = spawn(XVFB_RUN, ['-a', WEBKIT_DRIVER, `--port=${port}`], { stdio: 'ignore', detached: true, env: { ...process.env, ...env } });
  const base = `http://127.0.0.1:${port}`;
  const wd = async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`WebDriver ${method} ${path}: ${JSON.stringify(json.value)}`);
    return json.value;
  };
  const stop = () => {
    try {
      process.kill(-driver.pid, 'SIGTERM'); // xvfb-run, Xvfb, the driver and the browser: one process group
    } catch {
      // gone already
    }
  };
  try {
    for (let i = 0; ; i++) {
      try {
        await wd('GET', '/status');
        break;
      } catch (error) {
        if (i > 150) throw error;
        await sleep(100);
      }
    }
    const session = await wd('POST', '/session', { capabilities: { alwaysMatch: {
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
    } } });
    const id = session.sessionId;
    const run = async (source, arg = null) => {
      const value = await wd('POST', `/session/${id}/execute/async`, {
        script: `const done = arguments[arguments.length - 1];
          Promise.resolve().then(() => (${source})(arguments[0])).then(
            (value) => done({ ok: true, value: JSON.stringify(value ?? null) }),
            (error) => done({ ok: false, error: String(error && error.stack || error) }));`,
        args: [arg],
      });
      if (!value.ok) throw new Error(`in WebKit: ${value.error}`);
      return JSON.parse(value.value);
    };
    return {
      version: session.capabilities.browserVersion,
      open: (url) => wd('POST', `/session/${id}/url`, { url }),
      run,
      /** Poll the page until `expression` is truthy; resolves to its value (JSON). */
      async waitFor(expression, timeoutMs = 30000) {
        const until = Date.now() + timeoutMs;
        for (;;) {
          const value = await run(`() => (${expression})`);
          if (value) return value;
          if (Date.now() > until) throw new Error(`WebKit: timed out waiting for ${expression}`);
          await sleep(20);
        }
      },
      async close() {
        await wd('DELETE', `/session/${id}`).catch(() => {});
        stop();
      },
    };
  } catch (error) {
    stop();
    throw error;
  }
}
