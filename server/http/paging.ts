// Page-number paging of listings (`page` from 1, `page_size` default 20, at most 100).
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface PageWindow {
  page: number;
  pageSize: number;
  offset: number;
}

/** The window of a request; the contract already bounds both values, null means the default. */
export function pageWindow(page: number | undefined, pageSize: number | null | undefined): PageWindow {
  const size = Math.min(Math.max(pageSize ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
  const p = Math.max(page ?? 1, 1);
  return { page: p, pageSize: size, offset: (p - 1) * size };
}

export const hasNextPage = (window: PageWindow, count: number): boolean => window.offset + window.pageSize < count;
