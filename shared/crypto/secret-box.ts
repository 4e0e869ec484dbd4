import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets we must use again, not merely check (a webhook subscription's signing secret), kept
 * encrypted at rest: AES-256-GCM under the deployment's SECRETS_KEY, so a copy of the database
 * alone signs nothing. A sealed value names its key (the first bytes of the key's hash), so a
 * value sealed under another key is refused by name, never misread.
 *
 * Sealed: `sealed:v1:<key id>:<iv>:<ciphertext and tag>` (base64url parts).
 */
const PREFIX = 'sealed:v1:';

/** Development only, like the embedded database: production refuses to start without SECRETS_KEY. */
export const DEVELOPMENT_SECRETS_KEY = Buffer.from('flightdeck-development-only-key!').toString('base64');

const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

function keyOf(keyBase64: string): Buffer {
  const key = Buffer.from(keyBase64, 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, base64-encoded');
  return key;
}

export class SecretBox {
  /** The key new secrets are sealed under. */
  readonly keyId: string;
  private readonly key: Buffer;
  /** Every key a stored secret may be sealed under: the current one and those it replaced. */
  private readonly keys = new Map<string, Buffer>();

  constructor(keyBase64: string, previousKeysBase64: readonly string[] = []) {
    this.key = keyOf(keyBase64);
    this.keyId = keyIdOf(this.key);
    for (const key of [this.key, ...previousKeysBase64.map(keyOf)]) this.keys.set(keyIdOf(key), key);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.keyId}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  }

  /** The secret; a value stored before sealing began is returned as it is. */
  open(stored: string): string {
    if (!isSealed(stored)) return stored;
    const [keyId, iv, body] = stored.slice(PREFIX.length).split(':');
    const key = this.keys.get(keyId!);
    if (!key)
      throw new Error(`the secret was sealed under key ${keyId}, which is neither SECRETS_KEY (${this.keyId}) nor in SECRETS_KEY_PREVIOUS`);
    const bytes = Buffer.from(body!, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv!, 'base64url'));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
  }

  /** Whether a stored value is sealed under the current key (clear or an older key's: seal it again). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${PREFIX}${this.keyId}:`);
  }
}

export const isSealed = (stored: string) => stored.startsWith(PREFIX);

const boxes = new Map<string, SecretBox>();

/** The deployment's box: SECRETS_KEY (or the development key; never in production) and the keys it replaced. */
export function secretBoxFor(secretsKey: string | undefined, previousKeys: readonly string[] = []): SecretBox {
  const key = secretsKey ?? DEVELOPMENT_SECRETS_KEY;
  const id = [key, ...previousKeys].join(',');
  let box = boxes.get(id);
  if (!box) boxes.set(id, (box = new SecretBox(key, previousKeys)));
  return box;
}

/** The box of a configuration (SECRETS_KEY and SECRETS_KEY_PREVIOUS). */
export const secretBoxOf = (config: { SECRETS_KEY?: string; SECRETS_KEY_PREVIOUS: readonly string[] }) =>
  secretBoxFor(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
