// @ts-check
// Publisher keys on the publisher's machine: `bloomgate keygen` writes them,
// `publish --sign`, `keys rotate`, `export-ranges --sign` and `serve --sign`
// read them. A key file is PKCS#8 PEM (what `openssl genpkey -algorithm
// ed25519` writes too), created with mode 0600 and never overwritten.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { readFile, open } from 'node:fs/promises';
import { base64url } from '../canonical.js';
import { publicKeyId } from '../signature.js';
import { CliError, EXIT, cannotCreate, cannotOpen, quote } from './errors.js';

/** @typedef {{ path: string, id: string, key: import('node:crypto').KeyObject }} SigningKey */

/** The `ed25519:BASE64URL` id of a private or public KeyObject. */
export function keyIdOf(key) {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  const jwk = publicKey.export({ format: 'jwk' });
  return publicKeyId(Buffer.from(String(jwk.x), 'base64url'));
}

/**
 * Write a new Ed25519 private key to `path` (mode 0600; an existing file is
 * never replaced) and return its public id.
 * @param {string} path
 */
export async function generateKeyFile(path) {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' });
  let handle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (/** @type {any} */ error) {
    if (error?.code === 'EEXIST') {
      throw new CliError(`${quote(path)} exists; keygen never overwrites a key (a lost key cannot be recovered): choose another path`, 'E_EXISTS', EXIT.CANT_CREATE);
    }
    throw cannotCreate(path, error);
  }
  try {
    await handle.writeFile(pem);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    throw cannotCreate(path, error);
  }
  await handle.close();
  return keyIdOf(privateKey);
}

/**
 * Read a private key file; anything but an Ed25519 private key is refused.
 * @param {string} path
 * @returns {Promise<SigningKey>}
 */
export async function readSigningKey(path) {
  let text;
  try {
    text = await readFile(path);
  } catch (error) {
    throw cannotOpen(path, error);
  }
  let key;
  try {
    key = createPrivateKey(text);
  } catch {
    throw new CliError(`${quote(path)} is not a private key in PEM (make one with 'bloomgate keygen -o ${path}')`, 'E_KEY', EXIT.DATA);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new CliError(`${quote(path)} is a ${key.asymmetricKeyType} key; bloomgate signs with Ed25519 keys ('bloomgate keygen')`, 'E_KEY', EXIT.DATA);
  }
  return { path, id: keyIdOf(key), key };
}

/**
 * Read every --sign file; the same key twice is a mistake (it would count once).
 * @param {string[] | undefined} paths
 * @returns {Promise<SigningKey[]>}
 */
export async function readSigningKeys(paths) {
  /** @type {SigningKey[]} */
  const keys = [];
  for (const path of paths ?? []) {
    const key = await readSigningKey(path);
    if (keys.some((other) => other.id === key.id)) {
      throw new CliError(`${quote(path)} is the same key as ${quote(keys.find((other) => other.id === key.id)?.path)}`, 'E_KEY', EXIT.USAGE);
    }
    keys.push(key);
  }
  return keys;
}

/**
 * Sign canonical bytes with each key: the `signatures` array of a record.
 * @param {Uint8Array} message
 * @param {SigningKey[]} keys
 */
export function signAll(message, keys) {
  return keys.map((key) => ({ keyid: key.id, sig: base64url(sign(null, message, key.key)) }));
}

/**
 * The line `publish` and `export-ranges` print for the app's code: one JavaScript object literal,
 * the options a client passes (openFilter, checkPassword, checkUrl, createGate) to accept this
 * list only, signed by this key set.
 * @param {{ keys?: string[], threshold?: number, listId: string }} options
 */
export function clientOptionsLine({ keys, threshold, listId }) {
  const parts = keys?.length ? [`keys: [${keys.map((key) => `'${key}'`).join(', ')}]`, `threshold: ${threshold}`] : [];
  parts.push(`listId: '${listId}'`);
  return `client options: { ${parts.join(', ')} }\n`;
}
