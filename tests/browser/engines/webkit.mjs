/**
 * WebKitGTK (Safari's engine) through WebKitWebDriver under Xvfb, spoken to over plain W3C
 * WebDriver HTTP with fetch (no npm package). Debian: webkit2gtk-driver, xvfb.
 *
 *   const session = await startWebKit();
 *   const page = await session.newWindow();  // the first call takes the session's own window
 *   await page.open(url);                    // navigate; resolves once the page has loaded
 *   await page.run('async (x) => ...', x);   // an async function's source, run in the page;
 *                                            //   resolves to its value (through JSON)
 *   await page.command('POST', '/element', { using: 'css selector', value: '#x' });
 *                                            // any W3C command of the session, this window focused
 *                                            //   (the path after /session/{id})
 *   await session.close();                   // ends the session and every process it started
 *
 * startWebKit({ env, capabilities, args, screen }): extra environment for the driver and the
 * browser it starts; extra W3C capabilities (proxy, acceptInsecureCerts); extra MiniBrowser
 * arguments; the Xvfb screen's size in device pixels ({ width, height }).
 *
 * The session's data store is ephemeral: nothing it stores outlives it.
 */
import { spawn } from 'node:child_process';

export const WEBKIT_DRIVER = process.env.BG_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const MINIBROWSER = process.env.BG_MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
export const XVFB_RUN = '/usr/bin/xvfb-run';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Start WebKitWebDriver under Xvfb. A driver that exits before it answers (xvfb-run meeting a
 * display a previous session is still leaving, or a port in use: seen once in CI on a restart)
 * is started again, up to three times.
 */
export async function startWebKit(options = {}) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startWebKitOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/exited before it answered/.test(String(error?.message))) throw error;
      await sleep(500 * attempt);
    }
  }
}

async function startWebKitOnce({ env = {}, capabilities = {}, args = [], screen = null } = {}) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const xvfb = screen ? ['-s', `-screen 0 ${screen.width}x${screen.height}x24`] : [];
  const driver = spawn(XVFB_RUN, ['-a', ...xvfb, WEBKIT_DRIVER, `--port=${port}`], {
    stdio: 'ignore', detached: true, env: { ...process.env, ...env },
  });
  const base = `http://127.0.0.1:${port}`;
  const wd = async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`WebDriver ${method} ${path}: ${JSON.stringify(json.value)}`);
    return json.value;
  };
  let exited = false;
  driver.once('exit', () => { exited = true; });
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
        if (exited) throw new Error(`${XVFB_RUN} ${WEBKIT_DRIVER} exited before it answered`, { cause: error });
        if (i > 300) throw error;
        await sleep(100);
      }
    }
    const session = await wd('POST', '/session', { capabilities: { alwaysMatch: {
      ...capabilities,
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation', ...args] },
    } } });
    const id = session.sessionId;
    await wd('POST', `/session/${id}/timeouts`, { script: 180000, pageLoad: 60000 });
    let current = await wd('GET', `/session/${id}/window`);
    const home = current; // the session's own window: new tabs are opened from it
    let firstTaken = false;
    const focus = async (handle) => {
      if (current === handle) return;
      await wd('POST', `/session/${id}/window`, { handle });
      current = handle;
    };
    return {
      version: session.capabilities.browserVersion,
      async newWindow() {
        let handle;
        if (!firstTaken) {
          firstTaken = true;
          handle = home;
          await focus(home);
        } else {
          await focus(home); // New Window needs an open current window
          handle = (await wd('POST', `/session/${id}/window/new`, { type: 'tab' })).handle;
        }
        return {
          handle,
          async open(url) {
            await focus(handle);
            await wd('POST', `/session/${id}/url`, { url });
          },
          async run(source, arg = null) {
            await focus(handle);
            const value = await wd('POST', `/session/${id}/execute/async`, {
              script: `const done = arguments[arguments.length - 1];
                Promise.resolve().then(() => (${source})(arguments[0])).then(
                  (value) => done({ ok: true, value: JSON.stringify(value === undefined ? null : value) }),
                  (error) => done({ ok: false, error: String(error) + (error && error.stack ? '\\n' + error.stack : '') }));`,
              args: [arg],
            });
            if (!value.ok) throw new Error(value.error);
            return JSON.parse(value.value);
          },
          async command(method, path, body) {
            await focus(handle);
            return wd(method, `/session/${id}${path}`, body);
          },
          async close() {
            await focus(handle);
            if (handle === home) {
              // Closing the last window would end the session: the home window goes blank and
              // is the next newWindow() instead.
              await wd('POST', `/session/${id}/url`, { url: 'about:blank' }).catch(() => {});
              firstTaken = false;
              return;
            }
            await wd('DELETE', `/session/${id}/window`).catch(() => {});
            current = null;
          },
        };
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
