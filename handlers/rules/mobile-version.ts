// The mobile version check (MobileVersionCheckResponse): versions compare part by part as
// numbers, missing parts are 0 ("2.1" == "2.1.0"); digits of any length compare exactly.

export interface PlatformVersions {
  /** Lowest version still supported. */
  minimum: string;
  /** Latest version in the store. */
  latest: string;
}

const VERSION = /^[0-9]+(\.[0-9]+){0,3}$/;

export const isVersion = (v: string): boolean => VERSION.test(v);

export function compareVersions(a: string, b: string): number {
  if (!isVersion(a) || !isVersion(b)) throw new RangeError(`not a version: "${isVersion(a) ? b : a}"`);
  const pa = a.split('.').map(BigInt);
  const pb = b.split('.').map(BigInt);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0n;
    const y = pb[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export type UpdateKind = 'required' | 'available' | 'none';

/** What the installed version must do; a platform without configured versions needs nothing. */
export function updateKind(installed: string, versions: PlatformVersions | null): UpdateKind {
  if (!versions) return 'none';
  if (compareVersions(installed, versions.minimum) < 0) return 'required';
  if (compareVersions(installed, versions.latest) < 0) return 'available';
  return 'none';
}
