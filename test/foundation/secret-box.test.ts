import { randomBytes } from 'node:crypto';
import { SecretBox, isSealed } from '../../shared/crypto/secret-box';

const key = () => randomBytes(32).toString('base64');

describe('sealed secrets', () => {
  test('a sealed secret opens to itself under the same key, and shows nothing of it', () => {
    const box = new SecretBox(key());
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const sealed = box.seal(secret);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    // A fresh nonce each time: sealing twice gives two different values.
    expect(box.seal(secret)).not.toBe(sealed);
  });

  test('another key is refused by name, not misread', () => {
    const sealed = new SecretBox(key()).seal('whsec_x');
    const other = new SecretBox(key());
    expect(() => other.open(sealed)).toThrow(new RegExp(`sealed under key [0-9a-f]{8}, which is neither SECRETS_KEY \\(${other.keyId}\\)`));
  });

  test('after a change of key, a secret sealed under the key it replaced still opens, and is known not to be current', () => {
    const oldKey = key();
    const sealed = new SecretBox(oldKey).seal('whsec_from_before');
    const box = new SecretBox(key(), [oldKey]);
    expect(box.open(sealed)).toBe('whsec_from_before');
    expect(box.isCurrent(sealed)).toBe(false);
    expect(box.isCurrent(box.seal('whsec_new'))).toBe(true);
  });

  test('a changed byte is refused (the tag authenticates the secret)', () => {
    const box = new SecretBox(key());
    const sealed = box.seal('whsec_untouched');
    const parts = sealed.split(':');
    const body = Buffer.from(parts[4]!, 'base64url');
    body[0] = body[0]! ^ 1;
    parts[4] = body.toString('base64url');
    expect(() => box.open(parts.join(':'))).toThrow();
  });

  test('a value stored before sealing began opens as it is; a key of the wrong size is refused', () => {
    expect(new SecretBox(key()).open('whsec_stored_in_clear')).toBe('whsec_stored_in_clear');
    expect(() => new SecretBox(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});
