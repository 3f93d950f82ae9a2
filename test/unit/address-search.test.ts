import { describe, expect, it } from 'vitest';
import { isQueryLongEnough, normalizeAddressQuery, queryLength } from '../../handlers/rules/address-search.js';

describe('address query', () => {
  it('is trimmed with whitespace collapsed', () => {
    expect(normalizeAddressQuery('  tver \t\n 7  ')).toBe('tver 7');
  });
  it('is measured in characters as the customer sees them', () => {
    expect(queryLength('ёж')).toBe(2);
    expect(isQueryLongEnough(normalizeAddressQuery('  a  '), 2)).toBe(false);
    expect(isQueryLongEnough('ab', 2)).toBe(true);
  });
});
