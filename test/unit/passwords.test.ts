// PIN and password hashing (domain/codes/passwords.ts): the stored form, verification, hashes with
// other parameters, and the cost of checking an account that has no hash.
import * as crypto from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { hashSecret, verifySecret } from '../../domain/codes/passwords.js';

/** The arguments of every scrypt the module under test runs (node:crypto's, recorded). */
const scryptCalls = vi.hoisted(() => [] as unknown[][]);

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  const scrypt = (...args: unknown[]) => {
    scryptCalls.push(args.slice(0, -1));
    return (original.scrypt as (...a: unknown[]) => void)(...args);
  };
  return { ...original, scrypt };
});

/** A stored hash made the way an older (or newer) parameter set would have made it. */
function storedWith(secret: string, n: number, r: number, p: number, keylen = 32): string {
  const salt = crypto.randomBytes(16);
  const key = crypto.scryptSync(secret, salt, keylen, { N: n, r, p });
  return `scrypt$${n}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

describe('hashSecret', () => {
  it('stores scrypt with its parameters, a 16-byte salt and a 32-byte key, base64url', async () => {
    const stored = await hashSecret('2468');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    const [, , , , salt, key] = stored.split('$');
    expect(Buffer.from(salt!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key!, 'base64url')).toHaveLength(32);
  });

  it('salts every hash, so the same secret never gives the same stored form', async () => {
    const [a, b] = await Promise.all([hashSecret('2468'), hashSecret('2468')]);
    expect(a).not.toBe(b);
    expect(await verifySecret('2468', a)).toBe(true);
    expect(await verifySecret('2468', b)).toBe(true);
  });
});

describe('verifySecret', () => {
  beforeEach(() => {
    scryptCalls.length = 0;
  });

  it('accepts the secret that was hashed and refuses any other', async () => {
    const stored = await hashSecret('correct horse');
    expect(await verifySecret('correct horse', stored)).toBe(true);
    expect(await verifySecret('correct hors', stored)).toBe(false);
    expect(await verifySecret('', stored)).toBe(false);
  });

  it('verifies hashes made with other scrypt parameters, read from the stored form', async () => {
    expect(await verifySecret('1357', storedWith('1357', 1024, 4, 2))).toBe(true);
    expect(await verifySecret('1357', storedWith('1357', 2048, 8, 1, 16))).toBe(true);
    expect(await verifySecret('1358', storedWith('1357', 1024, 4, 2))).toBe(false);
  });

  it('refuses a stored value that is not a scrypt hash of six fields, without hashing', async () => {
    const good = storedWith('1357', 1024, 8, 1);
    const fields = good.split('$');
    expect(await verifySecret('1357', ['bcrypt', ...fields.slice(1)].join('$'))).toBe(false);
    expect(await verifySecret('1357', fields.slice(0, 5).join('$'))).toBe(false);
    expect(await verifySecret('1357', `${good}$extra`)).toBe(false);
    expect(await verifySecret('1357', '')).toBe(false);
    expect(scryptCalls).toHaveLength(0);
  });

  it('refuses every secret when the account has no hash, after one full-cost scrypt all the same', async () => {
    expect(await verifySecret('', null)).toBe(false);
    expect(await verifySecret('1357', null)).toBe(false);
    expect(scryptCalls).toHaveLength(2);
    for (const [, salt, keylen, options] of scryptCalls) {
      expect(salt).toHaveLength(16);
      expect(keylen).toBe(32);
      expect(options).toMatchObject({ N: 16384, r: 8, p: 1 });
    }
  });

  it('rejects with the scrypt error when the stored parameters are impossible', async () => {
    const fields = storedWith('1357', 1024, 8, 1).split('$');
    fields[1] = '1000'; // N must be a power of two
    await expect(verifySecret('1357', fields.join('$'))).rejects.toThrow();
  });
});
