// The mobile version check (MobileVersionCheckResponse): versions compare part by part as
// numbers, missing parts are 0 ("2.1" == "2.1.0"); digits of any length compare exactly.
//
// The installed version is whatever version name the app reports: release builds say "2.14.0",
// but debug and QA builds add suffixes ("2.14.0-beta", "2.14.0 (123)", "v2.14.0"). Its leading
// numeric part is what compares; a name with none cannot be judged and needs no update.

export interface PlatformVersions {
  /** Lowest version still supported. */
  minimum: string;
  /** Latest version in the store. */
  latest: string;
}

/** A configured version: one to four numeric parts. */
const VERSION = /^[0-9]+(\.[0-9]+){0,3}$/;
/** The numeric part an installed version name starts with (after an optional "v"). */
const LEADING_VERSION = /^[vV]?([0-9]+(?:\.[0-9]+)*)/;

export const isVersion = (v: string): boolean => VERSION.test(v);

/** The numeric parts an installed version name starts with; null when it starts with none. */
export function installedVersionParts(name: string): bigint[] | null {
  const m = LEADING_VERSION.exec(name.trim());
  return m ? m[1]!.split('.').map(BigInt) : null;
}

function compareParts(pa: bigint[], pb: bigint[]): number {
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0n;
    const y = pb[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Compares two configured versions (isVersion). */
export function compareVersions(a: string, b: string): number {
  if (!isVersion(a) || !isVersion(b)) throw new RangeError(`not a version: "${isVersion(a) ? b : a}"`);
  return compareParts(a.split('.').map(BigInt), b.split('.').map(BigInt));
}

export type UpdateKind = 'required' | 'available' | 'none';

/** What the installed version must do; a platform without configured versions needs nothing. */
export function updateKind(installed: string, versions: PlatformVersions | null): UpdateKind {
  const parts = installedVersionParts(installed);
  if (!versions || !parts) return 'none';
  if (compareParts(parts, versions.minimum.split('.').map(BigInt)) < 0) return 'required';
  if (compareParts(parts, versions.latest.split('.').map(BigInt)) < 0) return 'available';
  return 'none';
}
