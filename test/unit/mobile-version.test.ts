import { describe, expect, it } from 'vitest';
import { compareVersions, installedVersionParts, isVersion, updateKind } from '../../domain/accounts/mobile-version.js';

describe('mobile version rules', () => {
  it('compares part by part as numbers, missing parts being 0', () => {
    expect(compareVersions('2.10.0', '2.9.9')).toBe(1);
    expect(compareVersions('2.1', '2.1.0.0')).toBe(0);
    expect(compareVersions('1.0.0', '1.0.1')).toBe(-1);
    expect(compareVersions('99999999999999999999.0', '99999999999999999998.9')).toBe(1);
    expect(() => compareVersions('1.x', '1.0')).toThrow(RangeError);
    expect(isVersion('1.2.3.4')).toBe(true);
    expect(isVersion('1.2.3.4.5')).toBe(false);
  });

  it('requires an update below the minimum, offers one below the latest, and nothing from the latest on', () => {
    const v = { minimum: '2.0.0', latest: '2.14.0' };
    expect(updateKind('1.99', v)).toBe('required');
    expect(updateKind('2.0', v)).toBe('available');
    expect(updateKind('2.13.9', v)).toBe('available');
    expect(updateKind('2.14.0', v)).toBe('none');
    expect(updateKind('3', v)).toBe('none');
    expect(updateKind('0.1', null)).toBe('none');
  });

  it('reads the leading numeric part of an installed version name', () => {
    expect(installedVersionParts('2.14.0-beta')).toEqual([2n, 14n, 0n]);
    expect(installedVersionParts('v1.4')).toEqual([1n, 4n]);
    expect(installedVersionParts(' 3.0.1 (77)')).toEqual([3n, 0n, 1n]);
    expect(installedVersionParts('1.2.')).toEqual([1n, 2n]);
    expect(installedVersionParts('beta-2.0')).toBeNull();
    expect(updateKind('beta-2.0', { minimum: '2.0.0', latest: '2.14.0' })).toBe('none');
  });
});
