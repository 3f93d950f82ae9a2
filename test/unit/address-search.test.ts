import { describe, expect, it } from 'vitest';
import { isQueryLongEnough, normalizeAddressQuery, queryLength, typedWordVariants } from '../../domain/geo/address-search.js';

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

describe('a word cut while it is typed', () => {
  it('is also tried with the folded letter pair it may have been cut in completed', () => {
    expect(typedWordVariants('ki')).toEqual(['ki', 'ke']); // Ки... -> Киевский (kevski)
    expect(typedWordVariants('kuznet')).toEqual(['kuznet', 'kuznec']); // Kuznet... -> Kuznetsky (kuznecki)
    expect(typedWordVariants('patriarshi')).toEqual(['patriarshi', 'patriarshe']); // -> Патриаршие
    expect(typedWordVariants('hamovnik')).toEqual(['hamovnik', 'hamovnih']);
    expect(typedWordVariants('sc')).toEqual(['sc', 'sh']);
    expect(typedWordVariants('tver')).toEqual(['tver']);
  });
});
