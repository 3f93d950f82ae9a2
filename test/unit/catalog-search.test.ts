import { describe, expect, it } from 'vitest';
import { keepCandidates, parseSearch } from '../../domain/catalog/search.js';
import { DEFAULT_PAGE_SIZE, hasNextPage, pageWindow } from '../../server/http/paging.js';

describe('search text', () => {
  it('ignores blank text and squeezes spaces', () => {
    expect(parseSearch(undefined)).toBeNull();
    expect(parseSearch('  \t ')).toBeNull();
    expect(parseSearch('  молоко   3,2 ')).toEqual({ text: 'молоко 3,2', barcodes: [], plu: null });
  });

  it('looks valid barcodes and PLU codes up exactly', () => {
    expect(parseSearch('4601234567893')!.barcodes).toEqual(['4601234567893']);
    expect(parseSearch('4601234567897')!.barcodes).toEqual([]); // wrong check digit: words only
    expect(parseSearch('036000291452')!.barcodes).toEqual(['036000291452', '0036000291452']);
    expect(parseSearch('4011')).toMatchObject({ plu: '4011', barcodes: [] });
    // As a scale label prints it: the same PLU.
    expect(parseSearch('04011')).toMatchObject({ plu: '4011' });
    expect(parseSearch('94011')).toMatchObject({ plu: '94011' });
    expect(parseSearch('молоко 4011')!.plu).toBeNull();
  });
});

describe('candidate words', () => {
  it('keeps only exact and prefix matches when there are any', () => {
    const c = [
      { word: 'moloko', score: 1 },
      { word: 'molokosoderzhashchiy', score: 0.9 },
      { word: 'molotyy', score: 0.36 },
    ];
    expect(keepCandidates(c).map((x) => x.word)).toEqual(['moloko', 'molokosoderzhashchiy']);
  });

  it('keeps the nearest typo neighbours otherwise', () => {
    const c = [
      { word: 'moloko', score: 0.83 },
      { word: 'marokko', score: 0.71 },
      { word: 'molokan', score: 0.78 },
    ];
    expect(keepCandidates(c).map((x) => x.word)).toEqual(['moloko', 'molokan']);
    expect(keepCandidates([])).toEqual([]);
  });
});

describe('paging', () => {
  it('defaults to page 1 of 20 and caps the size at 100', () => {
    expect(pageWindow(undefined, null)).toEqual({ page: 1, pageSize: DEFAULT_PAGE_SIZE, offset: 0 });
    expect(pageWindow(3, 25)).toEqual({ page: 3, pageSize: 25, offset: 50 });
    expect(pageWindow(1, 1000).pageSize).toBe(100);
  });

  it('has a next page while items remain after this one', () => {
    expect(hasNextPage(pageWindow(1, 3), 7)).toBe(true);
    expect(hasNextPage(pageWindow(3, 3), 7)).toBe(false);
    expect(hasNextPage(pageWindow(2, 3), 6)).toBe(false);
    expect(hasNextPage(pageWindow(1, 20), 0)).toBe(false);
  });
});
